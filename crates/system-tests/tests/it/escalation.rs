//! Acknowledgement and escalation end to end, with real services and
//! loopback stand-ins of PagerDuty and Opsgenie (which check the documented
//! format, as in `providers`):
//! - acknowledging an incident in our API sends `acknowledge` to PagerDuty
//!   and Opsgenie under the incident's id, once;
//! - a monitor alerting through an escalation policy reaches step two when
//!   nobody acknowledges, and stops when someone does.

use crate::common::{check_now, wait_status};
use crate::provider_receiver::{Provider, ProviderReceiver, Taken};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_config::{AlertProviderSettings, EscalationSettings};
use uptime_testkit::target::TargetServer;

async fn post(stack: &Stack, key: &str, path: &str, body: Value) -> Value {
    let (s, v) = stack
        .call(Method::POST, path, key, Some(body))
        .await
        .unwrap();
    assert!(s.is_success(), "{path}: {s} {v}");
    v
}

async fn open_incident(stack: &Stack, key: &str, monitor_id: i64) -> String {
    let (s, list) = stack
        .call(
            Method::GET,
            &format!("/api/v1/incidents?monitor_id={monitor_id}&state=open"),
            key,
            None,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK, "{list}");
    list["incidents"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no open incident: {list}"))
        .to_string()
}

/// PagerDuty requests of `routing_key` as (event_action, dedup_key).
fn pagerduty_actions(taken: &[Taken], routing_key: &str) -> Vec<(String, String)> {
    taken
        .iter()
        .filter(|t| t.body["routing_key"] == routing_key)
        .map(|t| {
            (
                t.body["event_action"].as_str().unwrap_or("").to_string(),
                t.body["dedup_key"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

const ROUTING_KEY: &str = "R0UT1NGKEY0123456789abcdefABCDEF";

#[tokio::test]
async fn acknowledging_in_the_api_acknowledges_at_pagerduty_and_opsgenie() {
    let pagerduty = ProviderReceiver::start(Provider::PagerDuty).await;
    let opsgenie = ProviderReceiver::start(Provider::Opsgenie).await;
    let options = StackOptions {
        alert_providers: AlertProviderSettings {
            opsgenie_us_url: opsgenie.base.clone(),
            opsgenie_eu_url: opsgenie.base.clone(),
            ..AlertProviderSettings::all_at(&pagerduty.base)
        },
        ..StackOptions::default()
    };
    let stack = Stack::start(options).await.unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let pd = post(
        &stack,
        &key,
        "/api/v1/alert-contacts",
        json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY}),
    )
    .await;
    let og = post(
        &stack,
        &key,
        "/api/v1/alert-contacts",
        json!({"name": "og", "type": "opsgenie", "secret": "4f1e2d3c-0000-1111-2222-333344445555"}),
    )
    .await;
    let m = post(
        &stack,
        &key,
        "/api/v1/monitors",
        json!({"name": "shop", "type": "http",
        "target": target.url("/"), "interval_secs": 3600, "confirmation_count": 1,
        "alert_contact_ids": [pd["id"], og["id"]]}),
    )
    .await;
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;
    target.set_status(503);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;
    let incident = open_incident(&stack, &key, id).await;
    let og_ack_path = format!("/v2/alerts/{incident}/acknowledge?identifierType=alias");
    // Both were paged under the incident's id.
    stack
        .eventually(Duration::from_secs(30), || async {
            let paged = pagerduty_actions(&pagerduty.accepted(), ROUTING_KEY)
                .contains(&("trigger".to_string(), incident.clone()));
            let created = opsgenie
                .accepted()
                .iter()
                .any(|t| t.path == "/v2/alerts" && t.body["alias"] == incident.as_str());
            (paged && created).then_some(())
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "not paged: {:?} {:?}",
                pagerduty.accepted(),
                opsgenie.accepted()
            )
        });

    let acked = post(
        &stack,
        &key,
        &format!("/api/v1/incidents/{incident}/acknowledge"),
        json!({}),
    )
    .await;
    assert_eq!(acked["state"], "acknowledged", "{acked}");
    // Acknowledging again changes nothing and tells nobody again.
    post(
        &stack,
        &key,
        &format!("/api/v1/incidents/{incident}/acknowledge"),
        json!({}),
    )
    .await;
    stack
        .eventually(Duration::from_secs(30), || async {
            let pd_acked = pagerduty_actions(&pagerduty.accepted(), ROUTING_KEY)
                .contains(&("acknowledge".to_string(), incident.clone()));
            let og_acked = opsgenie.accepted().iter().any(|t| t.path == og_ack_path);
            (pd_acked && og_acked).then_some(())
        })
        .await
        .unwrap_or_else(|| {
            panic!(
                "not acknowledged: {:?} {:?} refused {:?} {:?}",
                pagerduty.accepted(),
                opsgenie.accepted(),
                pagerduty.refused(),
                opsgenie.refused()
            )
        });

    // The recovery resolves it; a contact's deliveries go out in order, so
    // by then every acknowledgement that was written has been sent.
    target.set_status(200);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "up").await;
    let og_close_path = format!("/v2/alerts/{incident}/close?identifierType=alias");
    stack
        .eventually(Duration::from_secs(30), || async {
            let resolved = pagerduty_actions(&pagerduty.accepted(), ROUTING_KEY)
                .contains(&("resolve".to_string(), incident.clone()));
            let closed = opsgenie.accepted().iter().any(|t| t.path == og_close_path);
            (resolved && closed).then_some(())
        })
        .await
        .expect("resolved at both");
    let actions: Vec<String> = pagerduty_actions(&pagerduty.accepted(), ROUTING_KEY)
        .into_iter()
        .filter(|(_, k)| *k == incident)
        .map(|(a, _)| a)
        .collect();
    assert_eq!(
        actions,
        ["trigger", "acknowledge", "resolve"],
        "exactly once each"
    );
    let og_paths: Vec<String> = opsgenie.accepted().iter().map(|t| t.path.clone()).collect();
    assert_eq!(
        og_paths,
        ["/v2/alerts".to_string(), og_ack_path, og_close_path]
    );
    assert!(pagerduty.refused().is_empty() && opsgenie.refused().is_empty());
}

#[tokio::test]
async fn escalation_reaches_step_two_unacknowledged_and_stops_when_acknowledged() {
    let pagerduty = ProviderReceiver::start(Provider::PagerDuty).await;
    let options = StackOptions {
        alert_providers: AlertProviderSettings::all_at(&pagerduty.base),
        escalation: EscalationSettings {
            min_delay_secs: 1,
            sweep_interval_ms: 100,
            ..EscalationSettings::default()
        },
        ..StackOptions::default()
    };
    let stack = Stack::start(options).await.unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    // Three on-call people, one PagerDuty service (routing key) each.
    let routing_keys: Vec<String> = (0..3)
        .map(|i| format!("{i}{}", &ROUTING_KEY[1..]))
        .collect();
    let mut contacts = Vec::new();
    for (i, routing_key) in routing_keys.iter().enumerate() {
        let c = post(
            &stack,
            &key,
            "/api/v1/alert-contacts",
            json!({"name": format!("oncall-{i}"), "type": "pagerduty", "secret": routing_key}),
        )
        .await;
        contacts.push(c["id"].clone());
    }
    const STEP_ONE_DELAY_SECS: i64 = 2;
    let policy = post(
        &stack,
        &key,
        "/api/v1/escalation-policies",
        json!({"name": "shop on-call",
        "steps": [
            {"contact_ids": [contacts[0]], "delay_secs": STEP_ONE_DELAY_SECS},
            {"contact_ids": [contacts[1]], "delay_secs": 10},
            {"contact_ids": [contacts[2]], "delay_secs": 60},
        ]}),
    )
    .await;
    let m = post(
        &stack,
        &key,
        "/api/v1/monitors",
        json!({"name": "shop", "type": "http",
        "target": target.url("/"), "interval_secs": 3600, "confirmation_count": 1}),
    )
    .await;
    let id = m["id"].as_i64().unwrap();
    let (s, linked) = stack
        .call(
            Method::PUT,
            &format!("/api/v1/monitors/{id}/escalation-policy"),
            &key,
            Some(json!({"escalation_policy_id": policy["id"]})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK, "{linked}");
    wait_status(&stack, &key, id, "up").await;
    target.set_status(503);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;
    let incident = open_incident(&stack, &key, id).await;
    let triggered = |i: usize| {
        pagerduty_actions(&pagerduty.accepted(), &routing_keys[i])
            .contains(&("trigger".to_string(), incident.clone()))
    };
    let (_, opened) = stack
        .call(
            Method::GET,
            &format!("/api/v1/incidents/{incident}"),
            &key,
            None,
        )
        .await
        .unwrap();
    let started_at: chrono::DateTime<chrono::Utc> =
        opened["started_at"].as_str().unwrap().parse().unwrap();
    // Step one at once; nobody acknowledges; step two after step one's delay.
    stack
        .eventually(Duration::from_secs(30), || async {
            triggered(0).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("step one not paged: {:?}", pagerduty.accepted()));
    let step_two_seen_at = stack
        .eventually(Duration::from_secs(30), || async {
            triggered(1).then(chrono::Utc::now)
        })
        .await
        .unwrap_or_else(|| panic!("step two not paged: {:?}", pagerduty.accepted()));
    assert!(
        step_two_seen_at - started_at >= chrono::Duration::seconds(STEP_ONE_DELAY_SECS),
        "step two came {} after the incident opened",
        step_two_seen_at - started_at
    );
    // Acknowledged before step two's delay: the escalation stops there,
    // and both people paged are told.
    post(
        &stack,
        &key,
        &format!("/api/v1/incidents/{incident}/acknowledge"),
        json!({}),
    )
    .await;
    let incident_id: uuid::Uuid = incident.parse().unwrap();
    let stopped = stack
        .eventually(Duration::from_secs(30), || async {
            let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await.unwrap();
            let state = uptime_db::escalations::state_of(&mut conn, incident_id)
                .await
                .unwrap()?;
            state.stopped
        })
        .await;
    assert_eq!(stopped.as_deref(), Some("acknowledged"));
    stack
        .eventually(Duration::from_secs(30), || async {
            let acked = |i: usize| {
                pagerduty_actions(&pagerduty.accepted(), &routing_keys[i])
                    .contains(&("acknowledge".to_string(), incident.clone()))
            };
            (acked(0) && acked(1)).then_some(())
        })
        .await
        .unwrap_or_else(|| panic!("not acknowledged: {:?}", pagerduty.accepted()));
    assert!(
        pagerduty_actions(&pagerduty.accepted(), &routing_keys[2]).is_empty(),
        "step three was never reached: {:?}",
        pagerduty.accepted()
    );
    // Exactly once per step.
    for key in &routing_keys[..2] {
        let triggers = pagerduty_actions(&pagerduty.accepted(), key)
            .iter()
            .filter(|(a, _)| a == "trigger")
            .count();
        assert_eq!(triggers, 1, "{key}: {:?}", pagerduty.accepted());
    }
    assert!(pagerduty.refused().is_empty(), "{:?}", pagerduty.refused());
}
