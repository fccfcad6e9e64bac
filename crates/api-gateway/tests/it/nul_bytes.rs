//! PostgreSQL cannot store U+0000 in `text` or `jsonb`. A request body that
//! carries one in any string is refused as `400 invalid request body` (never
//! a 500); a heartbeat failure report carrying one is stored sanitised.

use crate::check_support::{insert_heartbeat_monitor, stream_messages};
use crate::common::spawn_app;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, CheckResult};

#[tokio::test]
async fn a_nul_in_any_string_of_a_body_is_400_invalid_request_body() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (status, monitor) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "a", "type": "keyword", "target": "https://e.com", "keyword": "ok"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{monitor}");
    let monitor = format!("/api/v1/monitors/{}", monitor["id"]);
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "a", "type": "webhook", "value": "https://e.com/hook"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    let contact = format!("/api/v1/alert-contacts/{}", contact["id"]);

    let nul = "a\u{0}b";
    let cases = [
        (
            Method::POST,
            "/api/v1/api-keys",
            json!({"name": nul}),
            "name",
        ),
        (
            Method::POST,
            "/api/v1/monitors",
            json!({"name": nul, "type": "http", "target": "https://e.com"}),
            "name",
        ),
        (
            Method::POST,
            "/api/v1/monitors",
            json!({"name": "a", "type": "heartbeat", "target": nul}),
            "target",
        ),
        (
            Method::POST,
            "/api/v1/monitors",
            json!({"name": "a", "type": "keyword", "target": "https://e.com", "keyword": nul}),
            "keyword",
        ),
        (
            Method::PATCH,
            monitor.as_str(),
            json!({"name": nul}),
            "name",
        ),
        (
            Method::PATCH,
            monitor.as_str(),
            json!({"keyword": nul}),
            "keyword",
        ),
        (
            Method::POST,
            "/api/v1/alert-contacts",
            json!({"name": nul, "type": "email", "value": "a@b.co"}),
            "name",
        ),
        (
            Method::POST,
            "/api/v1/alert-contacts",
            json!({"name": "a", "type": "webhook", "value": "https://e.com/a\u{0}"}),
            "value",
        ),
        (
            Method::PATCH,
            contact.as_str(),
            json!({"name": nul}),
            "name",
        ),
    ];
    for (method, path, body, field) in cases {
        let (status, err) = app
            .call(method.clone(), path, Some(&key), Some(body.clone()))
            .await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{method} {path} {body}: {err}"
        );
        assert_eq!(err["error"], "invalid request body", "{err}");
        let details = err["details"].as_array().expect("details");
        assert!(
            details.iter().any(|d| d["field"] == field),
            "{method} {path}: {err}"
        );
    }
    // Nothing was stored: the monitor and the contact kept their names.
    assert_eq!(app.get(&monitor, &key).await.1["name"], "a");
    assert_eq!(app.get(&contact, &key).await.1["name"], "a");
    let (_, keys) = app.get("/api/v1/api-keys", &key).await;
    assert_eq!(keys["api_keys"].as_array().unwrap().len(), 1, "{keys}");

    // `\\u0000` is a backslash and `u0000`, not a NUL: accepted.
    let (status, created) = app
        .post("/api/v1/api-keys", &key, json!({"name": "\\u0000"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["name"], "\\u0000");
}

#[tokio::test]
async fn a_failure_report_with_a_nul_is_stored_with_a_replacement_character() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'd', true).await;
    let res = app
        .client
        .post(app.url(&format!("/api/v1/heartbeat/{token}/fail")))
        .body(b"disk\x00full".to_vec())
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let published: Vec<CheckResult> = stream_messages(&app.state.js, streams::RESULTS_STREAM)
        .await
        .into_iter()
        .map(|(_, _, payload)| serde_json::from_value(payload).unwrap())
        .collect();
    assert_eq!(published.len(), 1, "the report is not dropped");
    let result = &published[0];
    let error = result.error.clone().unwrap();
    assert_eq!(error, "failure reported by the client: disk\u{FFFD}full");

    // Stored the way the recorder stores results, and read back through the API.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let stored = uptime_db::recording::insert_results(
        &mut conn,
        &[uptime_db::recording::NewCheckResult {
            check_id: result.check_id,
            monitor_id: result.monitor_id,
            trigger: "heartbeat".into(),
            status: "down".into(),
            checked_at: result.checked_at,
            due_at: None,
            latency_ms: None,
            http_status: None,
            error: result.error.clone(),
            ssl_expires_at: None,
            reporter: result.reporter.clone(),
            definition_version: Some(result.definition_version),
        }],
    )
    .await
    .expect("PostgreSQL stores the sanitised report");
    assert_eq!(stored, vec![result.check_id]);
    drop(conn);
    let (status, page) = app
        .get(&format!("/api/v1/monitors/{}/results", monitor.id), &key)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["results"][0]["error"], Value::String(error));
}
