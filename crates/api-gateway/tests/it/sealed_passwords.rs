//! Issue 19 in the API: basic-auth passwords are stored sealed, never in
//! plain text; a stored password does not follow a monitor to another
//! origin unless the request restates it; without a key no password is
//! accepted; and at start the gateway seals legacy plain-text passwords and
//! re-seals those of a retired key.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use crate::monitor_kinds::{assert_invalid, create, patch, stored, with, MONITORS};
use api_gateway::startup::Application;
use diesel::sql_types::{BigInt, Nullable, Text};
use diesel::QueryableByName;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};
use uptime_secrets::Purpose;

const SECRET: &str = "s3cr3t-Pa55-w0rd";

fn with_password(target: &str) -> Value {
    json!({"name": "api", "type": "http", "target": target,
           "basic_auth": {"username": "monitor", "password": SECRET}})
}

#[derive(QueryableByName)]
struct Row {
    #[diesel(sql_type = Text)]
    json: String,
    #[diesel(sql_type = Nullable<Text>)]
    http_password_sealed: Option<String>,
}

/// The whole stored row, as text, and its sealed password.
async fn raw_row(app: &TestApp, id: &Value) -> Row {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(
        "SELECT row_to_json(m)::text AS json, http_password_sealed FROM monitors m WHERE id = $1",
    )
    .bind::<BigInt, _>(id.as_i64().unwrap())
    .get_result(&mut conn)
    .await
    .unwrap()
}

#[tokio::test]
async fn a_created_monitor_stores_its_password_sealed_only() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, with_password("https://api.example.com/health")).await;
    let row = raw_row(&app, &m["id"]).await;
    assert!(
        !row.json.contains(SECRET),
        "plain text stored: {}",
        row.json
    );
    let sealed = row.http_password_sealed.expect("a sealed password");
    assert!(sealed.starts_with("v1.test."), "{sealed}");
    assert_eq!(stored(&app, &m["id"]).await.1.as_deref(), Some(SECRET));
}

#[tokio::test]
async fn a_new_origin_needs_the_password_restated_or_basic_auth_removed() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, with_password("https://api.example.com/health")).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    // Another host, scheme or port without the password: refused, naming
    // the field; nothing changed.
    for (request, target) in [
        (json!({"target": "https://evil.example/collect"}), "host"),
        (json!({"target": "http://api.example.com/health"}), "scheme"),
        (
            json!({"target": "https://api.example.com:8443/health"}),
            "port",
        ),
        (
            json!({"target": "https://evil.example/", "basic_auth": {"username": "monitor"}}),
            "user name only",
        ),
        (
            json!({"target": "https://evil.example/", "basic_auth": {"username": "m", "password": null}}),
            "password null",
        ),
    ] {
        let (status, body) = app.patch(&path, &key, request.clone()).await;
        assert_invalid(status, &body, "basic_auth.password", &request);
        let message = body["details"][0]["message"].as_str().unwrap();
        assert_eq!(
            message, "the target's origin changed: restate the password or remove basic_auth",
            "{target}"
        );
    }
    let (_, unchanged) = app.get(&path, &key).await;
    assert_eq!(unchanged["target"], "https://api.example.com/health");

    // The same origin keeps the password without restating it.
    let moved = patch(
        &app,
        &key,
        &m["id"],
        json!({"target": "https://API.example.com:443/v2/health?full=1"}),
    )
    .await;
    assert_eq!(moved["basic_auth"]["password_set"], true);
    assert_eq!(stored(&app, &m["id"]).await.1.as_deref(), Some(SECRET));

    // Restated, the password goes along.
    let restated = patch(
        &app,
        &key,
        &m["id"],
        json!({"target": "https://status.example.net/",
               "basic_auth": {"username": "monitor", "password": "other-pw"}}),
    )
    .await;
    assert_eq!(restated["target"], "https://status.example.net/");
    assert_eq!(restated["basic_auth"]["password_set"], true);
    assert_eq!(stored(&app, &m["id"]).await.1.as_deref(), Some("other-pw"));

    // Removing it (the password, or basic auth altogether) is fine too.
    let no_password = patch(
        &app,
        &key,
        &m["id"],
        json!({"target": "https://a.example/", "basic_auth": {"username": "m", "password": ""}}),
    )
    .await;
    assert_eq!(no_password["basic_auth"]["password_set"], false);
    // Without a stored password, the origin may change freely.
    patch(
        &app,
        &key,
        &m["id"],
        json!({"target": "https://b.example/"}),
    )
    .await;
    let m2 = create(&app, &key, with_password("https://api.example.com/")).await;
    let dropped = patch(
        &app,
        &key,
        &m2["id"],
        json!({"target": "https://c.example/", "basic_auth": null}),
    )
    .await;
    assert!(dropped["basic_auth"].is_null());
    assert_eq!(stored(&app, &m2["id"]).await.1, None);
}

#[tokio::test]
async fn without_a_key_no_password_is_accepted() {
    let app = spawn_app_with(|s| s.secrets = Default::default()).await;
    let (_, key) = app.new_user("ops").await;
    let request = with_password("https://api.example.com/");
    let (status, body) = app.post(MONITORS, &key, request.clone()).await;
    assert_invalid(status, &body, "basic_auth.password", &request);
    assert!(
        body["details"][0]["message"]
            .as_str()
            .unwrap()
            .contains("no secrets key"),
        "{body}"
    );
    // Everything else works as before, basic auth without a password too.
    let m = create(
        &app,
        &key,
        with(
            with_password("https://api.example.com/"),
            json!({"basic_auth": {"username": "monitor"}}),
        ),
    )
    .await;
    assert_eq!(m["basic_auth"]["password_set"], false);
}

/// The gateway's settings in `app`, with other secrets.
fn settings_of(
    app: &TestApp,
    secrets: uptime_config::SecretsSettings,
) -> api_gateway::settings::GatewaySettings {
    let mut settings = app.state.settings.clone();
    settings.http.listen = "127.0.0.1:0".into();
    settings.secrets = secrets;
    settings
}

#[tokio::test]
async fn at_start_legacy_passwords_are_sealed_and_retired_keys_resealed() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let legacy = create(&app, &key, with_password("https://api.example.com/")).await;
    let kept = create(&app, &key, with_password("https://kept.example.com/")).await;
    // As a gateway from before issue 19 left it: the password in plain text.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(
        "UPDATE monitors SET http_password = 'legacy-pw', http_password_sealed = NULL WHERE id = $1",
    )
    .bind::<BigInt, _>(legacy["id"].as_i64().unwrap())
    .execute(&mut conn)
    .await
    .unwrap();

    // No key, and a plain-text password to seal: the gateway refuses to start.
    let error = Application::build(settings_of(&app, Default::default()))
        .await
        .err()
        .expect("refuses to start");
    assert!(error.to_string().contains("no secrets key"), "{error}");

    // With a new current key k2 beside the old one: the legacy password is
    // sealed with k2, the other one re-sealed from `test` to k2.
    let mut rotated = uptime_testkit::secrets::test_secrets();
    let k2 = uptime_secrets::generate_key();
    rotated.keys.insert("k2".into(), k2.clone());
    rotated.current_key_id = "k2".into();
    let started = Application::build(settings_of(&app, rotated.clone()))
        .await
        .expect("starts and seals");
    drop(started);
    let only_k2 = uptime_secrets::Keyring::from_settings(&uptime_config::SecretsSettings {
        current_key_id: "k2".into(),
        keys: [("k2".to_string(), k2)].into(),
    })
    .unwrap()
    .unwrap();
    for (m, password) in [(&legacy, "legacy-pw"), (&kept, SECRET)] {
        let row = raw_row(&app, &m["id"]).await;
        assert!(!row.json.contains(password), "{}", row.json);
        let sealed = row.http_password_sealed.unwrap();
        assert!(sealed.starts_with("v1.k2."), "{sealed}");
        let opened = only_k2
            .open(Purpose::HTTP_BASIC_AUTH_PASSWORD, &sealed)
            .unwrap();
        assert_eq!(opened.as_str(), password);
    }
    // Once everything is sealed, a gateway without a key starts (and
    // refuses new passwords).
    Application::build(settings_of(&app, Default::default()))
        .await
        .expect("nothing left in plain text");
}
