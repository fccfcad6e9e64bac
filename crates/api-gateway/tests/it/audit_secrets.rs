//! Issue 35, section 4: the audit log says that a credential changed. A
//! write-only secret (a contact's `secret`, a monitor's basic-auth
//! password, a webhook URL that carries its token, a status page's access
//! token) is named in the entry as `"[changed]"` (`"[set]"`,
//! `"[removed]"`), never with its value, by whichever route wrote it.

use crate::audit_log::entries;
use crate::common::{spawn_app, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const FIRST_KEY: &str = "0123456789abcdef0123456789abcdef";
const SECOND_KEY: &str = "fedcba9876543210fedcba9876543210";
const FIRST_PASSWORD: &str = "first-Pa55-w0rd";
const SECOND_PASSWORD: &str = "second-Pa55-w0rd";
const SLACK_TOKEN: &str = "B0000000/XXXXsecretXXXX";
const OTHER_SLACK_TOKEN: &str = "B1111111/YYYYsecretYYYY";

/// The changes of the newest `update` entry about `kind` `id`.
async fn last_update(app: &TestApp, key: &str, kind: &str, id: &Value) -> Value {
    let found = entries(
        app,
        key,
        &format!("?resource_kind={kind}&resource_id={id}&action=update"),
    )
    .await;
    found
        .first()
        .unwrap_or_else(|| panic!("no update of {kind} {id}"))["changes"]
        .clone()
}

/// The whole log, as text: no secret may appear in it.
async fn whole_log(app: &TestApp, key: &str) -> String {
    Value::Array(entries(app, key, "?limit=100").await).to_string()
}

fn changed() -> Value {
    json!({"before": "[changed]", "after": "[changed]"})
}

#[tokio::test]
async fn a_replaced_contact_secret_is_logged_as_changed_by_patch_and_by_put() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("audit-secrets").await;
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "pd", "type": "pagerduty", "secret": FIRST_KEY, "ref": "pd"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    let id = &contact["id"];

    let (status, body) = app
        .patch(
            &format!("/api/v1/alert-contacts/{id}"),
            &key,
            json!({"secret": SECOND_KEY}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let changes = last_update(&app, &key, "alert_contact", id).await;
    assert_eq!(changes, json!({"secret": changed()}), "PATCH: {changes}");

    let (status, body) = app
        .call(
            Method::PUT,
            "/api/v1/alert-contacts/by-ref/pd",
            Some(&key),
            Some(json!({"name": "pd", "type": "pagerduty", "secret": FIRST_KEY})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let changes = last_update(&app, &key, "alert_contact", id).await;
    assert_eq!(changes, json!({"secret": changed()}), "PUT: {changes}");

    let log = whole_log(&app, &key).await;
    for secret in [FIRST_KEY, SECOND_KEY] {
        assert!(!log.contains(secret), "{secret} in the log: {log}");
    }
}

#[tokio::test]
async fn a_new_basic_auth_password_is_logged_as_changed() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("audit-password").await;
    let (status, monitor) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "api", "type": "http", "target": "https://example.com/health",
                   "basic_auth": {"username": "u", "password": FIRST_PASSWORD}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{monitor}");
    let id = &monitor["id"];
    let created = entries(
        &app,
        &key,
        &format!("?resource_kind=monitor&resource_id={id}&action=create"),
    )
    .await;
    assert_eq!(
        created[0]["changes"]["basic_auth.password"],
        json!({"before": null, "after": "[set]"}),
        "{created:?}"
    );

    let (status, body) = app
        .patch(
            &format!("/api/v1/monitors/{id}"),
            &key,
            json!({"basic_auth": {"username": "u", "password": SECOND_PASSWORD}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let changes = last_update(&app, &key, "monitor", id).await;
    assert_eq!(
        changes["basic_auth.password"],
        changed(),
        "the password is named: {changes}"
    );

    let (status, body) = app
        .patch(
            &format!("/api/v1/monitors/{id}"),
            &key,
            json!({"basic_auth": null}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let changes = last_update(&app, &key, "monitor", id).await;
    assert_eq!(
        changes["basic_auth.password"],
        json!({"before": "[removed]", "after": null}),
        "{changes}"
    );

    let log = whole_log(&app, &key).await;
    for secret in [FIRST_PASSWORD, SECOND_PASSWORD, "v1.test."] {
        assert!(!log.contains(secret), "{secret} in the log: {log}");
    }
}

#[tokio::test]
async fn a_webhook_url_carrying_its_token_is_logged_as_changed_never_shown() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("audit-slack").await;
    let url = |token: &str| format!("https://hooks.slack.com/services/T0000000/{token}");
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "chat", "type": "slack", "value": url(SLACK_TOKEN)}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    let id = &contact["id"];
    let (status, body) = app
        .patch(
            &format!("/api/v1/alert-contacts/{id}"),
            &key,
            json!({"value": url(OTHER_SLACK_TOKEN)}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let changes = last_update(&app, &key, "alert_contact", id).await;
    assert_eq!(changes, json!({"value": changed()}), "{changes}");
    let log = whole_log(&app, &key).await;
    for secret in [SLACK_TOKEN, OTHER_SLACK_TOKEN] {
        assert!(!log.contains(secret), "{secret} in the log: {log}");
    }
}

#[tokio::test]
async fn making_a_status_page_private_logs_its_new_access_token_as_set() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("audit-page").await;
    let (status, page) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "audit-page", "title": "Status"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    let id = &page["id"];
    let (status, body) = app
        .patch(
            &format!("/api/v1/status-pages/{id}"),
            &key,
            json!({"private": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let token = body["access_token"].as_str().expect("a token").to_string();
    let changes = last_update(&app, &key, "status_page", id).await;
    assert_eq!(
        changes["access_token"],
        json!({"before": null, "after": "[set]"}),
        "{changes}"
    );
    assert!(!whole_log(&app, &key).await.contains(&token));
}
