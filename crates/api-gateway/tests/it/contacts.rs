use crate::common::{spawn_app, spawn_app_with, TestApp};
use base64::Engine;
use reqwest::StatusCode;
use serde_json::{json, Value};

const CONTACTS: &str = "/api/v1/alert-contacts";
const SLACK_URL: &str = "https://hooks.slack.com/services/T000/B000/XXXX";
const WEBHOOK_URL: &str = "https://hooks.example.com/uptime";

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, created) = app.post(CONTACTS, key, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body} -> {created}");
    created
}

fn assert_invalid(status: StatusCode, body: &Value, field: &str, request: &Value) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{request} -> {body}");
    assert_eq!(body["error"], "invalid request body", "{body}");
    let named = body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .any(|d| d["field"] == field);
    assert!(named, "{request}: expected {field} in {body}");
}

fn assert_signing_secret(secret: &Value) {
    let secret = secret.as_str().expect("signing_secret");
    let raw = secret.strip_prefix("whsec_").expect("whsec_ prefix");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .unwrap_or_else(|e| panic!("standard base64 {secret}: {e}"));
    assert_eq!(bytes.len(), 32, "{secret}");
}

/// Marks a contact verified, as following the verification link would.
async fn mark_verified(app: &TestApp, id: i64) {
    use diesel_async::RunQueryDsl;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query("UPDATE alert_contacts SET verified = TRUE WHERE id = $1")
        .bind::<diesel::sql_types::BigInt, _>(id)
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn an_email_contact_starts_unverified_and_has_no_secret() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let c = create(
        &app,
        &key,
        json!({"name": "on-call", "type": "email", "value": "oncall@example.com"}),
    )
    .await;
    assert!(c["id"].as_i64().unwrap() > 0);
    assert_eq!(c["user_id"], user_id);
    assert_eq!(c["type"], "email");
    assert_eq!(c["name"], "on-call");
    assert_eq!(c["value"], "oncall@example.com");
    assert_eq!(c["verified"], false);
    assert!(c.get("signing_secret").is_none(), "{c}");
    for ts in ["created_at", "updated_at"] {
        assert!(chrono::DateTime::parse_from_rfc3339(c[ts].as_str().unwrap()).is_ok());
    }
    let (status, got) = app.get(&format!("{CONTACTS}/{}", c["id"]), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, c);
}

#[tokio::test]
async fn slack_and_webhook_contacts_are_verified_and_webhooks_get_a_secret() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let slack = create(
        &app,
        &key,
        json!({"name": "chan", "type": "slack", "value": SLACK_URL}),
    )
    .await;
    assert_eq!(slack["verified"], true);
    assert!(slack.get("signing_secret").is_none(), "{slack}");

    let hook = create(
        &app,
        &key,
        json!({"name": "hook", "type": "webhook", "value": WEBHOOK_URL}),
    )
    .await;
    assert_eq!(hook["verified"], true);
    assert_signing_secret(&hook["signing_secret"]);
    let other = create(
        &app,
        &key,
        json!({"name": "hook2", "type": "webhook", "value": WEBHOOK_URL}),
    )
    .await;
    assert_ne!(other["signing_secret"], hook["signing_secret"]);

    // The secret reads back the same and survives a change of URL.
    let path = format!("{CONTACTS}/{}", hook["id"]);
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["signing_secret"], hook["signing_secret"]);
    let (status, moved) = app
        .patch(&path, &key, json!({"value": "https://other.example.com/h"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["value"], "https://other.example.com/h");
    assert_eq!(moved["signing_secret"], hook["signing_secret"]);
    assert_eq!(moved["verified"], true);
}

#[tokio::test]
async fn invalid_contacts_are_refused_naming_the_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let email = |v: &str| json!({"name": "n", "type": "email", "value": v});
    let hook = |t: &str, v: &str| json!({"name": "n", "type": t, "value": v});
    let long_email = format!("{}@example.com", "a".repeat(243));
    let cases = [
        (email("plain"), "value"),
        (email("@example.com"), "value"),
        (email("a@b"), "value"),
        (email("a@@b.com"), "value"),
        (email("a b@c.com"), "value"),
        (email(""), "value"),
        (email(&long_email), "value"),
        (hook("slack", "not a url"), "value"),
        (hook("slack", "ftp://hooks.example.com"), "value"),
        (hook("webhook", "oncall@example.com"), "value"),
        (hook("webhook", "https://user:pw@example.com/h"), "value"),
        (hook("webhook", "https://"), "value"),
        (
            json!({"name": "", "type": "email", "value": "a@b.co"}),
            "name",
        ),
        (
            json!({"name": "x".repeat(201), "type": "email", "value": "a@b.co"}),
            "name",
        ),
    ];
    for (req, field) in cases {
        let (status, body) = app.post(CONTACTS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // 254 characters and 200-character names are fine.
    create(&app, &key, email(&long_email[1..])).await;
    create(
        &app,
        &key,
        json!({"name": "x".repeat(200), "type": "email", "value": "a@b.co"}),
    )
    .await;

    for req in [
        json!({"name": "n", "type": "sms", "value": "+4912345"}),
        json!({"name": "n", "type": "email"}),
        json!({"type": "email", "value": "a@b.co"}),
        json!({"name": "n", "value": "a@b.co"}),
        json!({"name": "n", "type": "email", "value": "a@b.co", "verified": true}),
    ] {
        let (status, body) = app.post(CONTACTS, &key, req.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{req}: {body}");
        assert_eq!(body["error"], "invalid request body");
    }
    let (_, list) = app.get(CONTACTS, &key).await;
    assert_eq!(
        list["alert_contacts"].as_array().unwrap().len(),
        2,
        "only the valid ones exist"
    );
}

#[tokio::test]
async fn plain_http_and_private_hosts_need_private_targets_allowed() {
    let strict = spawn_app_with(|s| s.safety.allow_private_targets = false).await;
    let (_, key) = strict.new_user("ops").await;
    for (kind, value) in [
        ("webhook", "http://hooks.example.com/h"),
        ("slack", "http://hooks.slack.com/services/x"),
        ("webhook", "https://127.0.0.1/h"),
        ("webhook", "https://localhost:8443/h"),
        ("webhook", "https://169.254.169.254/latest"),
        ("webhook", "https://[::1]/h"),
        ("slack", "https://192.168.0.10/h"),
        // IPv4-compatible form of 127.0.0.1, as the checker sees it.
        ("webhook", "https://[::127.0.0.1]/h"),
    ] {
        let req = json!({"name": "n", "type": kind, "value": value});
        let (status, body) = strict.post(CONTACTS, &key, req.clone()).await;
        assert_invalid(status, &body, "value", &req);
    }
    create(
        &strict,
        &key,
        json!({"name": "n", "type": "webhook", "value": WEBHOOK_URL}),
    )
    .await;

    let lax = spawn_app().await;
    let (_, key) = lax.new_user("ops").await;
    let c = create(
        &lax,
        &key,
        json!({"name": "n", "type": "webhook", "value": "http://127.0.0.1:9000/h"}),
    )
    .await;
    assert_signing_secret(&c["signing_secret"]);
}

#[tokio::test]
async fn changing_an_email_address_makes_it_unverified_again() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let c = create(
        &app,
        &key,
        json!({"name": "me", "type": "email", "value": "a@example.com"}),
    )
    .await;
    let id = c["id"].as_i64().unwrap();
    let path = format!("{CONTACTS}/{id}");
    mark_verified(&app, id).await;

    // A new name, or the same address again, keeps it verified.
    let (status, renamed) = app.patch(&path, &key, json!({"name": "me, renamed"})).await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(
        (renamed["name"].as_str(), renamed["verified"].as_bool()),
        (Some("me, renamed"), Some(true))
    );
    let (_, same) = app
        .patch(
            &path,
            &key,
            json!({"value": "a@example.com", "type": "email"}),
        )
        .await;
    assert_eq!(same["verified"], true, "{same}");

    let (_, moved) = app
        .patch(&path, &key, json!({"value": "b@example.com"}))
        .await;
    assert_eq!(moved["value"], "b@example.com");
    assert_eq!(moved["verified"], false);
    assert_eq!(moved["name"], "me, renamed");
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["verified"], false, "stored");

    for (req, field) in [
        (json!({"type": "webhook"}), "type"),
        (json!({"value": "not-an-address"}), "value"),
        (json!({"name": null}), "name"),
        (json!({"value": null}), "value"),
        (json!({"name": ""}), "name"),
    ] {
        let (status, body) = app.patch(&path, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    let (status, body) = app.patch(&path, &key, json!({"verified": true})).await;
    assert_eq!(
        status,
        StatusCode::BAD_REQUEST,
        "verified is not writable: {body}"
    );
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["verified"], false);
}

#[tokio::test]
async fn list_is_in_id_order_and_pages() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let c = create(
            &app,
            &key,
            json!({"name": format!("c{i}"), "type": "slack", "value": SLACK_URL}),
        )
        .await;
        ids.push(c["id"].as_i64().unwrap());
    }
    let (status, all) = app.get(CONTACTS, &key).await;
    assert_eq!(status, StatusCode::OK);
    let listed: Vec<i64> = all["alert_contacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(listed, ids);
    assert!(all["next_cursor"].is_null());

    let (_, first) = app.get(&format!("{CONTACTS}?limit=2"), &key).await;
    let cursor = first["next_cursor"].as_str().expect("more pages");
    let (_, second) = app
        .get(&format!("{CONTACTS}?limit=2&cursor={cursor}"), &key)
        .await;
    let page: Vec<i64> = second["alert_contacts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(page, ids[2..4]);

    let (status, _) = app.get(&format!("{CONTACTS}?limit=101"), &key).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn users_cannot_see_touch_or_link_each_others_contacts() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let c = create(
        &app,
        &alice,
        json!({"name": "a", "type": "webhook", "value": WEBHOOK_URL}),
    )
    .await;
    let path = format!("{CONTACTS}/{}", c["id"]);

    for (status, body) in [
        app.get(&path, &bob).await,
        app.patch(&path, &bob, json!({"name": "mine"})).await,
        app.delete(&path, &bob).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, json!({"error": "not found"}));
    }
    let (_, bobs) = app.get(CONTACTS, &bob).await;
    assert_eq!(bobs["alert_contacts"], json!([]));
    assert!(!bobs
        .to_string()
        .contains(c["signing_secret"].as_str().unwrap()));

    let req = json!({"name": "m", "type": "http", "target": "https://example.com", "alert_contact_ids": [c["id"]]});
    let (status, body) = app.post("/api/v1/monitors", &bob, req.clone()).await;
    assert_invalid(status, &body, "alert_contact_ids", &req);

    let (_, got) = app.get(&path, &alice).await;
    assert_eq!(got, c, "untouched by bob");
}

#[tokio::test]
async fn delete_answers_204_then_404() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let c = create(
        &app,
        &key,
        json!({"name": "a", "type": "email", "value": "a@example.com"}),
    )
    .await;
    let path = format!("{CONTACTS}/{}", c["id"]);
    let (status, body) = app.delete(&path, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(body.is_null());
    for (status, body) in [app.get(&path, &key).await, app.delete(&path, &key).await] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body["error"], "not found");
    }
}

/// The digest of the outstanding verification token of a contact.
async fn verification_digest(app: &TestApp, id: i64) -> Option<String> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::alert_contacts;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    alert_contacts::table
        .find(id)
        .select(alert_contacts::verification_token_sha256)
        .first(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn email_contacts_are_sent_a_link_on_creation_and_on_a_new_address() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let c = create(
        &app,
        &key,
        json!({"name": "me", "type": "email", "value": "a@example.com"}),
    )
    .await;
    let id = c["id"].as_i64().unwrap();
    let first = verification_digest(&app, id)
        .await
        .expect("a link was issued");

    // The response shows the contact as stored after issuing the link.
    let path = format!("{CONTACTS}/{id}");
    assert_eq!(app.get(&path, &key).await.1, c);

    app.patch(&path, &key, json!({"name": "renamed"})).await;
    assert_eq!(
        verification_digest(&app, id).await.as_deref(),
        Some(first.as_str()),
        "a rename sends nothing"
    );

    app.patch(&path, &key, json!({"value": "b@example.com"}))
        .await;
    let second = verification_digest(&app, id).await.expect("a new link");
    assert_ne!(
        second, first,
        "the old link no longer verifies the new address"
    );

    let slack = create(
        &app,
        &key,
        json!({"name": "s", "type": "slack", "value": SLACK_URL}),
    )
    .await;
    assert!(verification_digest(&app, slack["id"].as_i64().unwrap())
        .await
        .is_none());
}
