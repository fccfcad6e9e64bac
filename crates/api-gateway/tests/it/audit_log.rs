//! The audit log (issue 21): every write leaves exactly one entry naming its
//! actor, in the transaction of the change, so a write that fails leaves
//! none; secrets never appear; the list filters and pages.

use crate::common::{spawn_app, TestApp};
use api_gateway::authz::{self, Access};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::organisations::{Role, Scope};

/// Write routes no scenario below covers, and why.
const AUDITED_ELSEWHERE: &[(&str, &str, &str)] = &[
    (
        "PUT",
        "/api/v1/monitors/by-ref/{ref}",
        "tests/it/apply.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "PUT",
        "/api/v1/alert-contacts/by-ref/{ref}",
        "tests/it/apply.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/monitors/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "DELETE",
        "/api/v1/alert-contacts/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/maintenance-windows/by-ref/{ref}",
        "tests/it/by_ref.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/maintenance-windows/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/status-pages/by-ref/{ref}",
        "tests/it/by_ref.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "PUT",
        "/api/v1/escalation-policies/by-ref/{ref}",
        "tests/it/by_ref.rs: one entry per create or replacement, none when nothing changes",
    ),
    (
        "DELETE",
        "/api/v1/escalation-policies/by-ref/{ref}",
        "tests/it/by_ref.rs: the id route's delete, its one entry",
    ),
    (
        "POST",
        "/api/v1/apply",
        "tests/it/apply.rs: entries per resource written, none for a dry run or a refusal",
    ),
    (
        "DELETE",
        "/api/v1/organisation",
        "its entry goes with the organisation's log; members::the_organisation_is_read_renamed_and_deleted_with_everything_of_it \
         checks that it is published",
    ),
    (
        "POST",
        "/api/v1/incidents/{id}/acknowledge",
        "tests/it/incidents.rs: needs an incident, which the recorder opens",
    ),
    (
        "POST",
        "/api/v1/status-pages",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "PATCH",
        "/api/v1/status-pages/{id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/access-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/monitors/{id}/badge-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/monitors/{id}/badge-token",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/notices",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}/notices/{notice_id}",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "DELETE",
        "/api/v1/status-pages/{id}/subscribers/{subscriber_id}",
        "tests/it/status_page_subscribers.rs: needs a subscriber, which the status-pages service makes",
    ),
    (
        "POST",
        "/api/v1/status-pages/{id}/notices/{notice_id}/updates",
        "tests/it/status_pages.rs: one entry per write, tokens never in it",
    ),
    (
        "POST",
        "/api/v1/escalation-policies",
        "tests/it/escalation_policies.rs: one entry per create, update and delete",
    ),
    (
        "PATCH",
        "/api/v1/escalation-policies/{id}",
        "tests/it/escalation_policies.rs",
    ),
    (
        "DELETE",
        "/api/v1/escalation-policies/{id}",
        "tests/it/escalation_policies.rs",
    ),
    (
        "PUT",
        "/api/v1/monitors/{id}/escalation-policy",
        "tests/it/escalation_policies.rs: an update entry of the monitor per change",
    ),
];

/// The route pattern of a scenario's path: placeholders and ids become `{id}`.
pub(crate) fn pattern_of(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            if segment.starts_with('{')
                || (!segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit()))
            {
                "{id}"
            } else {
                segment
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// A write of the scenario: method, path, body, expected status, and the
/// action and resource kind its entry must name.
pub(crate) type Step = (
    Method,
    String,
    Option<Value>,
    StatusCode,
    &'static str,
    &'static str,
);

pub(crate) async fn entries(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let (status, page) = app.get(&format!("/api/v1/audit-log{query}"), key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["entries"].as_array().unwrap().clone()
}

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

async fn org_of(app: &TestApp, key: &str) -> Value {
    let (_, organisation) = app.get("/api/v1/organisation", key).await;
    organisation["id"].clone()
}

pub(crate) async fn count(app: &TestApp, key: &str) -> usize {
    entries(app, key, "?limit=100").await.len()
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

#[tokio::test]
async fn secrets_never_reach_the_log_and_changes_say_before_and_after() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (_, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "hook", "type": "webhook", "value": "https://hooks.example.com/x"}),
        )
        .await;
    let secret = contact["signing_secret"].as_str().unwrap().to_string();
    let (_, created) = app
        .post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    let raw = created["key"].as_str().unwrap().to_string();
    let id = contact["id"].as_i64().unwrap();
    app.patch(
        &format!("/api/v1/alert-contacts/{id}"),
        &key,
        json!({"name": "hook 2"}),
    )
    .await;

    let log = entries(&app, &key, "").await;
    let text = serde_json::to_string(&log).unwrap();
    assert!(
        !text.contains(&secret),
        "the signing secret is logged: {text}"
    );
    assert!(!text.contains(&raw), "the raw key is logged: {text}");
    assert_eq!(
        log[0]["changes"],
        json!({"name": {"before": "hook", "after": "hook 2"}})
    );
    let contact_created = log
        .iter()
        .find(|e| e["resource_kind"] == "alert_contact" && e["action"] == "create")
        .unwrap();
    assert_eq!(
        contact_created["changes"]["signing_secret"]["after"],
        "[set]"
    );
}

#[tokio::test]
async fn the_log_filters_and_pages_newest_first_and_belongs_to_its_organisation() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (_, other) = app.new_user("other").await;
    let mut monitors = Vec::new();
    for i in 0..3 {
        let (_, m) = app
            .post(
                "/api/v1/monitors",
                &key,
                json!({"name": format!("m{i}"), "type": "heartbeat"}),
            )
            .await;
        monitors.push(m["id"].as_i64().unwrap());
    }
    app.post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    app.patch(
        &format!("/api/v1/monitors/{}", monitors[1]),
        &key,
        json!({"name": "renamed"}),
    )
    .await;

    // Five writes, and the key's first use.
    let all = entries(&app, &key, "").await;
    assert_eq!(all.len(), 6);
    assert_eq!(entries(&app, &key, "?action=use").await.len(), 1);
    let ids: Vec<i64> = all.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_eq!(entries(&app, &key, "?resource_kind=monitor").await.len(), 4);
    assert_eq!(entries(&app, &key, "?action=update").await.len(), 1);
    assert_eq!(
        entries(
            &app,
            &key,
            &format!("?resource_kind=monitor&resource_id={}", monitors[1])
        )
        .await
        .len(),
        2
    );
    assert_eq!(entries(&app, &key, "?actor=999999").await.len(), 0);
    assert_eq!(
        entries(&app, &key, "?since=2999-01-01T00:00:00Z")
            .await
            .len(),
        0
    );
    assert_eq!(
        entries(&app, &key, "?until=2999-01-01T00:00:00Z")
            .await
            .len(),
        6
    );
    let (org, other_org) = (all[0]["org_id"].clone(), org_of(&app, &other).await);
    assert!(
        entries(&app, &other, "")
            .await
            .iter()
            .all(|e| e["org_id"] == other_org && e["org_id"] != org),
        "another organisation sees none"
    );

    // Two at a time, following the cursor, gives the same entries.
    let mut paged = Vec::new();
    let mut query = "?limit=2".to_string();
    loop {
        let (status, page) = app.get(&format!("/api/v1/audit-log{query}"), &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        paged.extend(
            page["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_i64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(paged, ids);
    let (status, _) = app.get("/api/v1/audit-log?cursor=bogus", &key).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
