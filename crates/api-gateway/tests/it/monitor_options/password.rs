//! The basic-auth password: accepted, never shown, sealed on the wire.

use super::{http, SECRET};
use crate::check_support::stream_messages;
use crate::common::{spawn_app, TestApp};
use crate::monitor_kinds::{create, patch, stored, with, MONITORS};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, DueCheck, HttpMethod};

/// Asserts `body` shows no password anywhere.
fn assert_no_secret(body: &Value) {
    assert!(!body.to_string().contains(SECRET), "password shown: {body}");
}

async fn queued_password(app: &TestApp, key: &str, id: &Value) -> Option<String> {
    let (status, body) = app
        .call(
            Method::POST,
            &format!("{MONITORS}/{id}/check"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let queued = stream_messages(&app.state.js, streams::CHECKS_STREAM).await;
    let (_, _, payload) = queued
        .iter()
        .rev()
        .find(|(_, _, p)| p["monitor_id"] == *id)
        .expect("a due check of the monitor");
    // Issue 19: on the wire, the password is sealed (check-due.v5).
    assert_no_secret(payload);
    let due: DueCheck = serde_json::from_value(payload.clone()).unwrap();
    let http = due.spec.options.http.expect("the request");
    assert_eq!(http.method, HttpMethod::Get);
    http.basic_auth
        .expect("basic auth")
        .password_sealed
        .map(|sealed| {
            uptime_testkit::secrets::test_keyring()
                .open(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, &sealed)
                .expect("opens with the test key")
                .to_string()
        })
}

#[tokio::test]
async fn the_basic_auth_password_is_write_only() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let req = with(
        http(),
        json!({"basic_auth": {"username": "monitor", "password": SECRET}}),
    );
    let m = create(&app, &key, req).await;
    assert_no_secret(&m);
    assert_eq!(
        m["basic_auth"],
        json!({"username": "monitor", "password_set": true})
    );
    let (options, password) = stored(&app, &m["id"]).await;
    assert_eq!(password.as_deref(), Some(SECRET));
    assert!(!options.unwrap().to_string().contains(SECRET));

    let (_, got) = app.get(&format!("{MONITORS}/{}", m["id"]), &key).await;
    assert_no_secret(&got);
    assert_eq!(got["basic_auth"], m["basic_auth"]);
    let (_, list) = app.get(MONITORS, &key).await;
    assert_no_secret(&list);
    assert_eq!(list["monitors"][0]["basic_auth"]["password_set"], true);
    let (status, bulk) = app
        .post(
            &format!("{MONITORS}/bulk"),
            &key,
            json!({"monitors": [with(http(), json!({"basic_auth": {"username": "b", "password": SECRET}}))]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{bulk}");
    assert_no_secret(&bulk);
    assert_eq!(bulk["monitors"][0]["basic_auth"]["password_set"], true);

    // The checker gets it, sealed, in the due check only.
    assert_eq!(
        queued_password(&app, &key, &m["id"]).await.as_deref(),
        Some(SECRET)
    );

    // A new user name without a password keeps the stored password.
    let renamed = patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "other"}}),
    )
    .await;
    assert_no_secret(&renamed);
    assert_eq!(
        renamed["basic_auth"],
        json!({"username": "other", "password_set": true})
    );
    assert_eq!(stored(&app, &m["id"]).await.1.as_deref(), Some(SECRET));
    // `""` removes the password, null removes both.
    let no_password = patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "other", "password": ""}}),
    )
    .await;
    assert_eq!(no_password["basic_auth"]["password_set"], false);
    assert_eq!(stored(&app, &m["id"]).await.1, None);
    patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "x", "password": SECRET}}),
    )
    .await;
    let cleared = patch(&app, &key, &m["id"], json!({"basic_auth": null})).await;
    assert!(cleared["basic_auth"].is_null());
    assert_eq!(stored(&app, &m["id"]).await, (None, None));

    // Another type drops user name and password.
    let bulk_id = &bulk["monitors"][0]["id"];
    patch(
        &app,
        &key,
        bulk_id,
        json!({"type": "tcp", "target": "example.com:443"}),
    )
    .await;
    assert_eq!(stored(&app, bulk_id).await, (None, None));
}
