//! Escalation policies through the API: bounds (400 naming the field),
//! the round trip, one audit entry per write, scopes, another
//! organisation's 404; a monitor points at a policy or at contacts, never
//! both; a policy in use cannot be deleted. And acknowledging an incident
//! writes the deliveries that tell its PagerDuty and Opsgenie contacts, once.

use crate::common::{spawn_app_with, TestApp};
use chrono::Utc;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::incidents::{IncidentAlert, NewIncident};
use uptime_db::organisations::{Role, Scope};
use uuid::Uuid;

const ROUTING_KEY: &str = "R0UT1NGKEY0123456789abcdefABCDEF";

async fn app() -> TestApp {
    spawn_app_with(|s| s.escalation.min_delay_secs = 30).await
}

async fn contact(app: &TestApp, key: &str, body: Value) -> i64 {
    let (status, c) = app.post("/api/v1/alert-contacts", key, body).await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    c["id"].as_i64().unwrap()
}

async fn slack(app: &TestApp, key: &str, name: &str) -> i64 {
    contact(
        app,
        key,
        json!({"name": name, "type": "slack",
        "value": "https://hooks.slack.com/services/T0/B0/x"}),
    )
    .await
}

fn fields(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|e| e["field"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn policies_are_bounded_round_tripped_and_audited() {
    let app = app().await;
    let (org, key) = app.new_user("acme").await;
    let a = slack(&app, &key, "a").await;
    let b = slack(&app, &key, "b").await;
    let (_, other_key) = app.new_user("other").await;
    let foreign = slack(&app, &other_key, "x").await;

    // Every bound, each named.
    let (status, body) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": " ", "repeat_count": 10,
            "steps": [{"contact_ids": [a], "delay_secs": 29},
                      {"contact_ids": [], "delay_secs": 86401}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        fields(&body),
        [
            "name",
            "repeat_count",
            "steps[0].delay_secs",
            "steps[1].delay_secs",
            "steps[1].contact_ids"
        ]
    );
    let (status, body) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": "n", "steps": []}),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (StatusCode::BAD_REQUEST, vec!["steps".to_string()])
    );
    let eleven: Vec<Value> = (0..11)
        .map(|_| json!({"contact_ids": [a], "delay_secs": 60}))
        .collect();
    let (status, body) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": "n", "steps": eleven}),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (StatusCode::BAD_REQUEST, vec!["steps".to_string()])
    );
    // Another organisation's contact is no contact of ours.
    let (status, body) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": "n",
            "steps": [{"contact_ids": [a, foreign], "delay_secs": 60}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["steps[0].contact_ids"]);
    assert!(body.to_string().contains(&foreign.to_string()), "{body}");
    // Unknown fields are refused.
    let (status, _) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": "n", "colour": 1,
            "steps": [{"contact_ids": [a], "delay_secs": 60}]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // A read key may look, not write.
    let (reader, _) = app.new_user("reader").await;
    app.add_member(org, reader, Role::Editor).await;
    let read_key = app.key_for(org, reader, Scope::Read).await;
    let valid = json!({"name": "On call", "repeat_count": 2,
        "steps": [{"contact_ids": [b, a, a], "delay_secs": 300}, {"contact_ids": [b], "delay_secs": 600}]});
    let (status, _) = app
        .post("/api/v1/escalation-policies", &read_key, valid.clone())
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    let response = app
        .client
        .post(app.url("/api/v1/escalation-policies"))
        .bearer_auth(&key)
        .json(&valid)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::CREATED);
    let location = response.headers()["location"].to_str().unwrap().to_string();
    let created: Value = response.json().await.unwrap();
    let id = created["id"].as_i64().unwrap();
    assert_eq!(location, format!("/api/v1/escalation-policies/{id}"));
    assert_eq!(
        created["steps"][0]["contact_ids"],
        json!([a, b]),
        "sorted, once each"
    );
    assert_eq!(created["steps"][1]["delay_secs"], 600);
    assert_eq!(created["repeat_count"], 2);
    let path = format!("/api/v1/escalation-policies/{id}");
    let (status, read) = app.get(&path, &read_key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(read, created);
    let (status, list) = app.get("/api/v1/escalation-policies", &read_key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(list["escalation_policies"][0]["id"], id);
    let (status, _) = app.get(&path, &other_key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // A change replaces what it gives; its bounds are the create's.
    let (status, body) = app
        .patch(
            &path,
            &key,
            json!({"steps": [{"contact_ids": [a], "delay_secs": 1}]}),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::BAD_REQUEST,
            vec!["steps[0].delay_secs".to_string()]
        )
    );
    let (status, changed) = app.patch(&path, &key, json!({"repeat_count": 0})).await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["repeat_count"], 0);
    assert_eq!(changed["steps"], created["steps"]);

    let (status, _) = app.delete(&path, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get(&path, &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // One entry per write; refused requests wrote none.
    let (_, log) = app
        .get("/api/v1/audit-log?resource_kind=escalation_policy", &key)
        .await;
    let actions: Vec<&str> = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["delete", "update", "create"], "{log}");
}

#[tokio::test]
async fn a_monitor_points_at_a_policy_or_at_contacts_not_both() {
    let app = app().await;
    let (_, key) = app.new_user("acme").await;
    let a = slack(&app, &key, "a").await;
    let (_, policy) = app
        .post(
            "/api/v1/escalation-policies",
            &key,
            json!({"name": "p",
            "steps": [{"contact_ids": [a], "delay_secs": 60}]}),
        )
        .await;
    let policy_id = policy["id"].as_i64().unwrap();
    let (_, m) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "shop", "type": "http",
            "target": "https://example.com", "interval_secs": 60, "alert_contact_ids": [a]}),
        )
        .await;
    let monitor = m["id"].as_i64().unwrap();
    let link = format!("/api/v1/monitors/{monitor}/escalation-policy");
    let put = |body: Value| app.call(Method::PUT, &link, Some(&key), Some(body));

    let (status, body) = put(json!({"escalation_policy_id": policy_id})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["escalation_policy_id"]);
    let (status, body) = put(json!({"escalation_policy_id": 999_999})).await;
    assert_eq!(
        (status, fields(&body)),
        (
            StatusCode::BAD_REQUEST,
            vec!["escalation_policy_id".to_string()]
        )
    );

    let monitor_path = format!("/api/v1/monitors/{monitor}");
    let (status, _) = app
        .patch(&monitor_path, &key, json!({"alert_contact_ids": []}))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = put(json!({"escalation_policy_id": policy_id})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, read) = app.get(&link, &key).await;
    assert_eq!(read["escalation_policy_id"], policy_id);

    // Now contacts are the refused half.
    let (status, body) = app
        .patch(&monitor_path, &key, json!({"alert_contact_ids": [a]}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["alert_contact_ids"]);
    let (status, _) = app
        .patch(&monitor_path, &key, json!({"name": "renamed"}))
        .await;
    assert_eq!(status, StatusCode::OK, "other changes go through");

    // In use: not deleted.
    let policy_path = format!("/api/v1/escalation-policies/{policy_id}");
    let (status, body) = app.delete(&policy_path, &key).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.to_string().contains(&monitor.to_string()), "{body}");
    let (status, _) = put(json!({"escalation_policy_id": null})).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = app.delete(&policy_path, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // The link changes were audited as monitor updates.
    let (_, log) = app
        .get(
            &format!("/api/v1/audit-log?resource_kind=monitor&resource_id={monitor}"),
            &key,
        )
        .await;
    let linked = log["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["changes"].get("escalation_policy_id").is_some())
        .count();
    assert_eq!(linked, 2, "{log}");
    // Another organisation sees no such monitor.
    let (_, other_key) = app.new_user("other").await;
    let (status, _) = app.get(&link, &other_key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn acknowledging_writes_one_acknowledge_delivery_per_paged_provider_contact() {
    let app = spawn_app_with(|s| {
        s.secrets = uptime_testkit::secrets::test_secrets();
    })
    .await;
    let (org, key) = app.new_user("acme").await;
    let pd = contact(
        &app,
        &key,
        json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY}),
    )
    .await;
    let chat = slack(&app, &key, "chat").await;
    let (_, m) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "shop", "type": "http",
            "target": "https://example.com", "interval_secs": 60, "alert_contact_ids": [pd, chat]}),
        )
        .await;
    let monitor_id = m["id"].as_i64().unwrap();
    // An incident whose down alert went to both contacts, as the
    // recorder and the notifier's intake write them.
    let incident_id = Uuid::new_v4();
    let event_id = Uuid::new_v4();
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::incidents::open(
        &mut conn,
        &[NewIncident {
            id: incident_id,
            org_id: org,
            monitor_id,
            started_at: Utc::now(),
            resolved_at: None,
            cause: None,
            alerts: vec![IncidentAlert {
                event_id,
                kind: "transition".into(),
                status: "down".into(),
                at: Utc::now(),
                held: None,
            }],
        }],
    )
    .await
    .unwrap();
    let payload = json!({"event": "monitor.down"}).to_string();
    uptime_db::deliveries::intake::create_for_events(
        &mut conn,
        &[uptime_db::deliveries::intake::IntakeEvent {
            event_id,
            monitor_id,
            event_type: "monitor.down".into(),
            payload,
            severity: 2,
            incident_id: Some(incident_id),
            escalates: true,
        }],
    )
    .await
    .unwrap();

    let path = format!("/api/v1/incidents/{incident_id}/acknowledge");
    for _ in 0..2 {
        let (status, body) = app.call(Method::POST, &path, Some(&key), None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let kinds = |contact: i64| {
        let pool = app.state.pool.clone();
        async move {
            let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
            uptime_db::deliveries::list_for_contact(&mut conn, contact, 10)
                .await
                .unwrap()
                .into_iter()
                .map(|(d, _)| (d.kind, d.payload))
                .collect::<Vec<_>>()
        }
    };
    let to_pd = kinds(pd).await;
    assert_eq!(
        to_pd.len(),
        2,
        "the alert and one acknowledgement: {to_pd:?}"
    );
    let (kind, ack) = &to_pd[0];
    assert_eq!(kind, "acknowledge");
    let request: uptime_alerts::AcknowledgeRequest = serde_json::from_value(ack.clone()).unwrap();
    assert_eq!(request.incident_id, incident_id);
    assert_eq!(request.monitor_id, monitor_id);
    assert_eq!(request.acknowledged_via, "api");
    // Chat contacts are not told.
    assert_eq!(kinds(chat).await.len(), 1);
}
