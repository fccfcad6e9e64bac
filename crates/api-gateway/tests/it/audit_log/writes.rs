//! Every write route leaves one entry naming its actor; a failed write none.

use super::{count, entries, pattern_of, Step, AUDITED_ELSEWHERE};
use crate::common::{spawn_app, TestApp};
use api_gateway::authz::{self, Access};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::organisations::{Role, Scope};

/// The ids of a bulk create's monitors.
fn log_ids(answer: &Value) -> Vec<i64> {
    answer["monitors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect()
}

/// A contact stored directly (no API write, so no entry).
async fn stored_contact(
    app: &TestApp,
    org: i64,
    kind: &str,
    value: &str,
    verified: bool,
) -> uptime_db::models::AlertContact {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::contacts::create(
        &mut conn,
        &uptime_db::models::NewAlertContact {
            org_id: org,
            kind: kind.into(),
            name: format!("{kind} contact"),
            value: value.into(),
            verified,
            verification_token_sha256: None,
            signing_secret: (kind == "webhook")
                .then(|| "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw".to_string()),
            secret_sealed: None,
            options: serde_json::json!({}),
            event_kinds: None,
            min_severity: 0,
        },
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn every_write_leaves_one_entry_with_its_actor_and_a_failed_write_none() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;
    let key = app.key_for(org, editor, Scope::Write).await;
    let prefix = &key[..8];
    // Contacts made outside the API (no entries): a verified webhook that
    // answers, for the test alert, and an unverified email address.
    let receiver = uptime_testkit::receiver::WebhookReceiver::start().await;
    let hook = stored_contact(&app, org, "webhook", &receiver.url("/hook"), true).await;
    let mail = stored_contact(&app, org, "email", "ops@example.com", false).await;
    // A key's first use leaves an entry of its own (`crate::key_use`): made
    // before the scenario counts.
    let (status, _) = app.get("/api/v1/usage", &key).await;
    assert_eq!(status, StatusCode::OK);

    // (method, path, body, expected status, action, kind); `{m}`, `{c}` and
    // `{k}` stand for the monitor, contact and key created on the way.
    let steps: Vec<Step> = vec![
        (
            Method::POST,
            "/api/v1/maintenance-windows".into(),
            Some(
                json!({"name": "deploy", "label_selector": {"app": "shop"}, "duration_minutes": 15}),
            ),
            StatusCode::CREATED,
            "create",
            "maintenance_window",
        ),
        (
            Method::PATCH,
            "/api/v1/maintenance-windows/{w}".into(),
            Some(json!({"effect": "pause"})),
            StatusCode::OK,
            "update",
            "maintenance_window",
        ),
        (
            Method::DELETE,
            "/api/v1/maintenance-windows/{w}".into(),
            None,
            StatusCode::NO_CONTENT,
            "delete",
            "maintenance_window",
        ),
        (
            Method::POST,
            "/api/v1/monitors/bulk".into(),
            Some(json!({"monitors": [
                {"name": "a", "type": "heartbeat"},
                {"name": "b", "type": "heartbeat"},
            ]})),
            StatusCode::CREATED,
            "bulk_create",
            "monitor",
        ),
        (
            Method::POST,
            "/api/v1/monitors".into(),
            Some(json!({"name": "shop", "type": "http", "target": "https://example.com"})),
            StatusCode::CREATED,
            "create",
            "monitor",
        ),
        (
            Method::POST,
            "/api/v1/monitors/{m}/check".into(),
            None,
            StatusCode::ACCEPTED,
            "check",
            "monitor",
        ),
        (
            Method::POST,
            format!("/api/v1/alert-contacts/{}/resend-verification", mail.id),
            None,
            StatusCode::ACCEPTED,
            "resend_verification",
            "alert_contact",
        ),
        (
            Method::POST,
            format!("/api/v1/alert-contacts/{}/test", hook.id),
            None,
            StatusCode::OK,
            "test",
            "alert_contact",
        ),
        (
            Method::PATCH,
            "/api/v1/monitors/{m}".into(),
            Some(json!({"name": "shop checkout"})),
            StatusCode::OK,
            "update",
            "monitor",
        ),
        (
            Method::PATCH,
            "/api/v1/monitors/{m}".into(),
            Some(json!({"active": false})),
            StatusCode::OK,
            "update",
            "monitor",
        ),
        (
            Method::POST,
            "/api/v1/alert-contacts".into(),
            Some(
                json!({"name": "hook", "type": "webhook", "value": "https://hooks.example.com/x"}),
            ),
            StatusCode::CREATED,
            "create",
            "alert_contact",
        ),
        (
            Method::PATCH,
            "/api/v1/alert-contacts/{c}".into(),
            Some(json!({"name": "hook 2"})),
            StatusCode::OK,
            "update",
            "alert_contact",
        ),
        (
            Method::POST,
            "/api/v1/api-keys".into(),
            Some(json!({"name": "ci"})),
            StatusCode::CREATED,
            "create",
            "api_key",
        ),
        (
            Method::DELETE,
            "/api/v1/api-keys/{k}".into(),
            None,
            StatusCode::NO_CONTENT,
            "revoke",
            "api_key",
        ),
        (
            Method::DELETE,
            "/api/v1/alert-contacts/{c}".into(),
            None,
            StatusCode::NO_CONTENT,
            "delete",
            "alert_contact",
        ),
        (
            Method::DELETE,
            "/api/v1/monitors/{m}".into(),
            None,
            StatusCode::NO_CONTENT,
            "delete",
            "monitor",
        ),
    ];
    // Every write route is covered here, in the members' scenario, or
    // listed with the test that covers it.
    let members_steps = crate::audit_members::owner_steps();
    for route in authz::ROUTES {
        if route.method == "GET" || route.access == Access::Public {
            continue;
        }
        let covered = steps
            .iter()
            .chain(&members_steps)
            .any(|(m, p, ..)| m.as_str() == route.method && pattern_of(p) == route.path);
        let excused = AUDITED_ELSEWHERE
            .iter()
            .any(|(m, p, _)| (*m, *p) == (route.method, route.path));
        assert!(
            covered || excused,
            "{} {} is a write with no audit scenario",
            route.method,
            route.path
        );
    }

    let (mut m, mut c, mut k, mut w) = (0, 0, 0, 0);
    for (method, path, body, expected, action, kind) in steps {
        let before = count(&app, &owner_key).await;
        let path = path
            .replace("{m}", &m.to_string())
            .replace("{c}", &c.to_string())
            .replace("{k}", &k.to_string())
            .replace("{w}", &w.to_string());
        let (status, answer) = app.call(method.clone(), &path, Some(&key), body).await;
        assert_eq!(status, expected, "{method} {path}: {answer}");
        match (method.as_str(), kind) {
            ("POST", "monitor") if action == "bulk_create" => {
                assert_eq!(log_ids(&answer).len(), 2);
            }
            ("POST", "monitor") if action == "create" => m = answer["id"].as_i64().unwrap(),
            ("POST", "alert_contact") if action == "create" => c = answer["id"].as_i64().unwrap(),
            ("POST", "api_key") => k = answer["id"].as_i64().unwrap(),
            ("POST", "maintenance_window") => w = answer["id"].as_i64().unwrap(),
            _ => {}
        }
        let log = entries(&app, &owner_key, "?limit=100").await;
        assert_eq!(
            log.len(),
            before + 1,
            "{method} {path} leaves one entry: {log:#?}"
        );
        let entry = &log[0];
        assert_eq!(entry["actor_user_id"], editor, "{entry}");
        assert_eq!(entry["key_prefix"], prefix);
        assert_eq!(
            (entry["action"].as_str(), entry["resource_kind"].as_str()),
            (Some(action), Some(kind)),
            "{entry}"
        );
        assert!(
            entry["address"]
                .as_str()
                .is_some_and(|a| a.starts_with("127.")),
            "{entry}"
        );
    }

    // Failed writes leave nothing.
    let before = count(&app, &owner_key).await;
    for (method, path, body) in [
        (
            Method::POST,
            "/api/v1/monitors".to_string(),
            Some(json!({"name": "x", "type": "http", "target": "nope"})),
        ),
        (
            Method::PATCH,
            "/api/v1/monitors/999999".to_string(),
            Some(json!({"name": "x"})),
        ),
        (Method::DELETE, format!("/api/v1/monitors/{m}"), None),
        (
            Method::DELETE,
            "/api/v1/alert-contacts/999999".to_string(),
            None,
        ),
        (Method::DELETE, format!("/api/v1/api-keys/{k}"), None),
        (
            Method::POST,
            "/api/v1/api-keys".to_string(),
            Some(json!({"name": ""})),
        ),
        (
            Method::POST,
            "/api/v1/monitors/bulk".to_string(),
            Some(json!({"monitors": [
                {"name": "ok", "type": "heartbeat"},
                {"name": "", "type": "heartbeat"},
            ]})),
        ),
    ] {
        let (status, answer) = app.call(method.clone(), &path, Some(&key), body).await;
        assert!(
            status.is_client_error(),
            "{method} {path}: {status} {answer}"
        );
    }
    assert_eq!(
        count(&app, &owner_key).await,
        before,
        "failed writes leave no entry"
    );
}
