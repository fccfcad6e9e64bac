//! Contacts of the alert providers (pagerduty, opsgenie, teams, discord,
//! telegram, ntfy, pushover): what each takes, credentials write-only and
//! sealed at rest, bad input a 400 naming its field, and the test alert
//! saying the provider's error plainly.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_testkit::receiver::WebhookReceiver;

const CONTACTS: &str = "/api/v1/alert-contacts";
const ROUTING_KEY: &str = "R0UT1NGKEY0123456789abcdefABCDEF";
const BOT_TOKEN: &str = "123456:TEST-token_x";

fn assert_invalid(status: StatusCode, body: &Value, field: &str, request: &Value) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{request} -> {body}");
    let named = body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .any(|d| d["field"] == field);
    assert!(named, "{request}: expected {field} in {body}");
}

/// The stored `secret_sealed` of contact `id`.
async fn sealed_secret(app: &TestApp, id: i64) -> Option<String> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::alert_contacts;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    alert_contacts::table
        .filter(alert_contacts::id.eq(id))
        .select(alert_contacts::secret_sealed)
        .first(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn every_provider_type_is_created_with_its_credential_sealed_and_never_answered() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let bodies = [
        json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY}),
        json!({"name": "og", "type": "opsgenie", "secret": "4f1e2d3c-0000-1111-2222-333344445555", "region": "eu"}),
        json!({"name": "teams", "type": "teams", "value": "https://prod.westeurope.logic.azure.com/workflows/a/triggers/manual/paths/invoke?sig=x"}),
        json!({"name": "discord", "type": "discord", "value": "https://discord.com/api/webhooks/123/t0ken"}),
        json!({"name": "tg", "type": "telegram", "value": "-1001234567890", "secret": BOT_TOKEN}),
        json!({"name": "ntfy", "type": "ntfy", "value": "shop-alerts", "server": "https://ntfy.example.org"}),
        json!({"name": "po", "type": "pushover", "value": "uQiRzpo4DXghDmr9QzzfQu27cmVRsG", "secret": "azGDORePK8gMaC0QOYAMyEEuzJnyUi"}),
    ];
    let keyring = uptime_secrets::Keyring::from_settings(&uptime_testkit::secrets::test_secrets())
        .unwrap()
        .unwrap();
    for body in bodies {
        let (status, created) = app.post(CONTACTS, &key, body.clone()).await;
        assert_eq!(status, StatusCode::CREATED, "{body} -> {created}");
        assert_eq!(created["verified"], true, "no verification mail: {created}");
        assert_eq!(created["type"], body["type"]);
        let id = created["id"].as_i64().unwrap();
        let (_, read) = app.get(&format!("{CONTACTS}/{id}"), &key).await;
        match body.get("secret").and_then(Value::as_str) {
            Some(plain) => {
                assert_eq!(read["secret"], "set", "{read}");
                assert!(!read.to_string().contains(plain), "{read}");
                let sealed = sealed_secret(&app, id).await.expect("sealed");
                assert!(sealed.starts_with("v1."), "sealed at rest");
                let opened = keyring
                    .open(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, &sealed)
                    .unwrap();
                assert_eq!(opened.as_str(), plain);
            }
            None if body["type"] == "ntfy" => assert_eq!(read["secret"], "unset", "{read}"),
            None => assert!(read.get("secret").is_none(), "{read}"),
        }
    }
    let (_, list) = app.get(CONTACTS, &key).await;
    let listed = list.to_string();
    assert!(
        !listed.contains(ROUTING_KEY) && !listed.contains(BOT_TOKEN),
        "{listed}"
    );
    assert!(listed.contains(r#""region":"eu""#), "{listed}");
    assert!(
        listed.contains(r#""server":"https://ntfy.example.org""#),
        "{listed}"
    );
}

#[tokio::test]
async fn bad_provider_input_is_a_400_naming_the_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let cases = [
        (json!({"name": "pd", "type": "pagerduty"}), "secret"),
        (
            json!({"name": "pd", "type": "pagerduty", "secret": "short"}),
            "secret",
        ),
        (
            json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY, "value": "x"}),
            "value",
        ),
        (
            json!({"name": "og", "type": "opsgenie", "secret": "k", "value": "x"}),
            "value",
        ),
        (
            json!({"name": "tg", "type": "telegram", "value": "ops", "secret": BOT_TOKEN}),
            "value",
        ),
        (
            json!({"name": "tg", "type": "telegram", "value": "1", "secret": "no-colon"}),
            "secret",
        ),
        (
            json!({"name": "tg", "type": "telegram", "value": "1", "secret": BOT_TOKEN, "region": "eu"}),
            "region",
        ),
        (
            json!({"name": "tg", "type": "telegram", "secret": BOT_TOKEN}),
            "value",
        ),
        (
            json!({"name": "ntfy", "type": "ntfy", "value": "a/b"}),
            "value",
        ),
        (
            json!({"name": "ntfy", "type": "ntfy", "value": "t", "server": "ftp://x"}),
            "server",
        ),
        (
            json!({"name": "po", "type": "pushover", "value": "short", "secret": "x"}),
            "value",
        ),
        (
            json!({"name": "d", "type": "discord", "value": "https://discord.com/not-a-webhook"}),
            "value",
        ),
        (
            json!({"name": "s", "type": "slack", "value": "https://hooks.slack.com/x", "secret": "x"}),
            "secret",
        ),
        (
            json!({"name": "s", "type": "slack", "value": "https://hooks.slack.com/x", "server": "https://x"}),
            "server",
        ),
        (json!({"name": "e", "type": "email"}), "value"),
        (
            json!({"name": "s", "type": "slack", "value": "https://hooks.slack.com/x", "events": []}),
            "events",
        ),
    ];
    for (body, field) in cases {
        let (status, answer) = app.post(CONTACTS, &key, body.clone()).await;
        assert_invalid(status, &answer, field, &body);
    }
    // A required credential cannot be removed; an optional one can.
    let (_, tg) = app
        .post(
            CONTACTS,
            &key,
            json!({"name": "tg", "type": "telegram", "value": "1", "secret": BOT_TOKEN}),
        )
        .await;
    let patch = json!({"secret": null});
    let (status, answer) = app
        .patch(&format!("{CONTACTS}/{}", tg["id"]), &key, patch.clone())
        .await;
    assert_invalid(status, &answer, "secret", &patch);
    let (_, ntfy) = app
        .post(
            CONTACTS,
            &key,
            json!({"name": "n", "type": "ntfy", "value": "t", "secret": "tk_x"}),
        )
        .await;
    assert_eq!(ntfy["secret"], "set");
    let (status, cleared) = app
        .patch(&format!("{CONTACTS}/{}", ntfy["id"]), &key, patch)
        .await;
    assert_eq!(status, StatusCode::OK, "{cleared}");
    assert_eq!(cleared["secret"], "unset");
    // A PATCH that leaves the credential out keeps it.
    let (status, renamed) = app
        .patch(
            &format!("{CONTACTS}/{}", tg["id"]),
            &key,
            json!({"name": "renamed"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{renamed}");
    assert_eq!(renamed["secret"], "set");
    assert_eq!(renamed["events"], Value::Null, "every kind by default");
    assert_eq!(renamed["min_severity"], "info");
    let filters = json!({"events": ["up", "down", "down"], "min_severity": "warning"});
    let (status, filtered) = app
        .patch(&format!("{CONTACTS}/{}", tg["id"]), &key, filters)
        .await;
    assert_eq!(status, StatusCode::OK, "{filtered}");
    assert_eq!(filtered["events"], json!(["down", "up"]));
    assert_eq!(filtered["min_severity"], "warning");
    let (_, reset) = app
        .patch(
            &format!("{CONTACTS}/{}", tg["id"]),
            &key,
            json!({"events": null, "min_severity": null}),
        )
        .await;
    assert_eq!(reset["events"], Value::Null);
    assert_eq!(reset["min_severity"], "info");
    assert!(sealed_secret(&app, tg["id"].as_i64().unwrap())
        .await
        .is_some());
}

#[tokio::test]
async fn without_a_secrets_key_a_credential_is_refused_by_name() {
    let app = spawn_app_with(|s| s.secrets = Default::default()).await;
    let (_, key) = app.new_user("ops").await;
    let body = json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY});
    let (status, answer) = app.post(CONTACTS, &key, body.clone()).await;
    assert_invalid(status, &answer, "secret", &body);
}

#[tokio::test]
async fn a_test_alert_reaches_the_provider_and_says_its_error_plainly() {
    let pagerduty = WebhookReceiver::start().await;
    let base = pagerduty.url("");
    let refusing = refusing_telegram().await;
    let app = spawn_app_with(|s| {
        s.alert_providers.pagerduty_url = base.clone();
        s.alert_providers.telegram_url = refusing.clone();
    })
    .await;
    let (_, key) = app.new_user("ops").await;
    let (_, pd) = app
        .post(
            CONTACTS,
            &key,
            json!({"name": "pd", "type": "pagerduty", "secret": ROUTING_KEY}),
        )
        .await;
    let (status, body) = app
        .post(&format!("{CONTACTS}/{}/test", pd["id"]), &key, json!({}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let sent: Vec<Value> = pagerduty.received().iter().map(|r| r.json()).collect();
    let actions: Vec<&str> = sent
        .iter()
        .map(|b| b["event_action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["trigger", "resolve"], "{sent:?}");
    assert_eq!(sent[0]["dedup_key"], sent[1]["dedup_key"]);
    assert_eq!(sent[0]["routing_key"], ROUTING_KEY);
    assert_eq!(pagerduty.received()[0].path, "/v2/enqueue");

    let (_, tg) = app
        .post(
            CONTACTS,
            &key,
            json!({"name": "tg", "type": "telegram", "value": "-100", "secret": BOT_TOKEN}),
        )
        .await;
    let (status, body) = app
        .post(&format!("{CONTACTS}/{}/test", tg["id"]), &key, json!({}))
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let cause = body["details"][0]["message"].as_str().unwrap();
    assert_eq!(cause, "HTTP 400 Bad Request: Bad Request: chat not found");
    assert!(!cause.contains(BOT_TOKEN));
}

/// A Telegram Bot API that refuses every message as Telegram does for an
/// unknown chat; its base URL.
async fn refusing_telegram() -> String {
    use actix_web::{web, App, HttpResponse, HttpServer};
    let server = HttpServer::new(|| {
        App::new().default_service(web::to(|| async {
            HttpResponse::BadRequest().json(
                json!({"ok": false, "error_code": 400, "description": "Bad Request: chat not found"}),
            )
        }))
    })
    .workers(1)
    .disable_signals()
    .bind("127.0.0.1:0")
    .unwrap();
    let base = format!("http://{}", server.addrs()[0]);
    tokio::spawn(server.run());
    base
}
