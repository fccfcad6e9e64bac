//! Issue 35, section 5: a `PATCH` that changes nothing writes nothing, for
//! every kind that has one: the same `ETag` and `updated_at` as before, no
//! audit entry, and a heartbeat's next deadline where it was. A provider
//! that re-sends what it read (Terraform's refresh-then-apply) must see no
//! drift and leave no trail.

use crate::audit_log::entries;
use crate::common::{spawn_app, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::organisations::Role;

const PASSWORD: &str = "s4me-Pa55-w0rd";
const ROUTING_KEY: &str = "0123456789abcdef0123456789abcdef";

/// Sends `method path` with `body`; the status, the `ETag` and the body.
async fn tagged(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
) -> (StatusCode, Option<String>, Value) {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    let res = req.send().await.expect("request sent");
    let status = res.status();
    let etag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap()
    };
    (status, etag, body)
}

async fn created(app: &TestApp, key: &str, path: &str, body: Value) -> Value {
    let (status, created) = app.post(path, key, body).await;
    assert_eq!(status, StatusCode::CREATED, "{path}: {created}");
    created
}

async fn updates(app: &TestApp, key: &str) -> usize {
    entries(app, key, "?action=update&limit=100").await.len()
}

/// PATCHes `item` (at `path`) with `body` and asserts that nothing moved:
/// the answer is the resource as read before, with its tag, and no update
/// entry was added.
async fn assert_unchanged(app: &TestApp, key: &str, path: &str, body: Value) -> Value {
    let (status, read_tag, before) = tagged(app, Method::GET, path, key, None).await;
    assert_eq!(status, StatusCode::OK, "{path}: {before}");
    let logged = updates(app, key).await;
    let (status, patched_tag, patched) =
        tagged(app, Method::PATCH, path, key, Some(body.clone())).await;
    assert_eq!(status, StatusCode::OK, "{path} {body}: {patched}");
    let (_, after_tag, after) = tagged(app, Method::GET, path, key, None).await;
    assert_eq!(after["updated_at"], before["updated_at"], "{path} {body}");
    assert_eq!(after, before, "{path} {body}: the resource moved");
    assert_eq!(patched_tag, read_tag, "{path} {body}: the PATCH's tag");
    assert_eq!(after_tag, read_tag, "{path} {body}: the stored tag");
    assert_eq!(
        updates(app, key).await,
        logged,
        "{path} {body}: an audit entry for nothing"
    );
    after
}

#[tokio::test]
async fn a_patch_that_changes_nothing_writes_nothing_for_every_kind() {
    let app = spawn_app().await;
    let (org, key) = app.new_user("noop").await;

    let http = created(
        &app,
        &key,
        "/api/v1/monitors",
        json!({"name": "api", "type": "http", "target": "https://example.com/health",
               "interval_secs": 60, "labels": {"team": "payments"},
               "basic_auth": {"username": "u", "password": PASSWORD}}),
    )
    .await;
    let path = format!("/api/v1/monitors/{}", http["id"]);
    assert_unchanged(&app, &key, &path, json!({"name": "api"})).await;
    assert_unchanged(
        &app,
        &key,
        &path,
        json!({"interval_secs": 60, "labels": {"team": "payments"}, "active": true}),
    )
    .await;
    // The password restated as it is stored: nothing to seal anew.
    assert_unchanged(
        &app,
        &key,
        &path,
        json!({"basic_auth": {"username": "u", "password": PASSWORD}}),
    )
    .await;

    let heartbeat = created(
        &app,
        &key,
        "/api/v1/monitors",
        json!({"name": "nightly", "type": "heartbeat", "interval_secs": 3600}),
    )
    .await;
    let path = format!("/api/v1/monitors/{}", heartbeat["id"]);
    let after = assert_unchanged(&app, &key, &path, json!({"name": "nightly"})).await;
    assert_eq!(
        after["next_expected_at"], heartbeat["next_expected_at"],
        "the period did not start again"
    );

    let contact = created(
        &app,
        &key,
        "/api/v1/alert-contacts",
        json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY}),
    )
    .await;
    let path = format!("/api/v1/alert-contacts/{}", contact["id"]);
    assert_unchanged(&app, &key, &path, json!({"name": "pd"})).await;
    assert_unchanged(&app, &key, &path, json!({"secret": ROUTING_KEY})).await;

    let window = created(
        &app,
        &key,
        "/api/v1/maintenance-windows",
        json!({"name": "deploy", "label_selector": {"team": "payments"}, "duration_minutes": 15}),
    )
    .await;
    let path = format!("/api/v1/maintenance-windows/{}", window["id"]);
    assert_unchanged(&app, &key, &path, json!({"name": "deploy"})).await;

    let policy = created(
        &app,
        &key,
        "/api/v1/escalation-policies",
        json!({"name": "oncall", "steps": [{"contact_ids": [contact["id"]], "delay_secs": 300}]}),
    )
    .await;
    let path = format!("/api/v1/escalation-policies/{}", policy["id"]);
    assert_unchanged(&app, &key, &path, json!({"name": "oncall"})).await;

    let page = created(
        &app,
        &key,
        "/api/v1/status-pages",
        json!({"slug": "noop", "title": "Status"}),
    )
    .await;
    let path = format!("/api/v1/status-pages/{}", page["id"]);
    assert_unchanged(
        &app,
        &key,
        &path,
        json!({"title": "Status", "private": false}),
    )
    .await;

    // Members and the organisation have no GET of one with a tag; their
    // PATCH leaves no entry.
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;
    let logged = updates(&app, &key).await;
    let (status, body) = app
        .patch(
            &format!("/api/v1/members/{editor}"),
            &key,
            json!({"role": "editor"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (_, organisation) = app.get("/api/v1/organisation", &key).await;
    let (status, body) = app
        .patch(
            "/api/v1/organisation",
            &key,
            json!({"name": organisation["name"]}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(updates(&app, &key).await, logged, "entries for nothing");

    // A real change still writes, once.
    let (status, body) = app
        .patch(
            &format!("/api/v1/monitors/{}", http["id"]),
            &key,
            json!({"name": "api v2"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(updates(&app, &key).await, logged + 1);
}
