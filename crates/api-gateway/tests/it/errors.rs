//! Every kind of bad request answers a JSON error with the contract's status,
//! never a framework page and never a 500.

use crate::common::{spawn_app, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// Sends a raw body (with the given content type, if any) and returns the
/// status and the body, which must be a JSON error object.
async fn send_raw(
    app: &TestApp,
    method: Method,
    path: &str,
    key: Option<&str>,
    content_type: Option<&str>,
    body: Option<Vec<u8>>,
) -> (StatusCode, Value) {
    let mut req = app.client.request(method.clone(), app.url(path));
    if let Some(key) = key {
        req = req.bearer_auth(key);
    }
    if let Some(ct) = content_type {
        req = req.header("Content-Type", ct);
    }
    if let Some(body) = body {
        req = req.body(body);
    }
    let res = req.send().await.expect("request sent");
    let status = res.status();
    let content_type = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    assert_ne!(
        status,
        StatusCode::INTERNAL_SERVER_ERROR,
        "{method} {path}: {text}"
    );
    let json: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{method} {path} -> {status}: not JSON ({e}): {text:?}"));
    assert_eq!(
        content_type.as_deref(),
        Some("application/json"),
        "{method} {path}"
    );
    assert!(json["error"].is_string(), "{method} {path}: {json}");
    (status, json)
}

fn detail_messages(body: &Value) -> String {
    body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .map(|d| format!("{}: {}", d["field"], d["message"]))
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::test]
async fn malformed_json_wrong_types_and_missing_bodies_are_400() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let json_ct = Some("application/json");
    for path in ["/api/v1/monitors", "/api/v1/alert-contacts"] {
        for (what, body) in [
            ("malformed", Some(b"{\"name\": ".to_vec())),
            ("not an object", Some(b"[1, 2]".to_vec())),
            ("a string", Some(b"\"monitor\"".to_vec())),
            ("empty", Some(Vec::new())),
            ("absent", None),
        ] {
            let (status, err) = send_raw(&app, Method::POST, path, Some(&key), json_ct, body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path} {what}: {err}");
            assert_eq!(err["error"], "invalid request body", "{path} {what}");
            assert!(!detail_messages(&err).is_empty());
        }
        // Without a Content-Type the body is still read as JSON.
        let (status, err) = send_raw(&app, Method::POST, path, Some(&key), None, None).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
    }

    for body in [
        json!({"name": 5, "type": "http", "target": "https://e.com"}),
        json!({"name": "a", "type": "http", "target": "https://e.com", "interval_secs": "60"}),
        json!({"name": "a", "type": "http", "target": "https://e.com", "interval_secs": 60.5}),
        json!({"name": "a", "type": "http", "target": "https://e.com", "active": "yes"}),
        json!({"name": "a", "type": "http", "target": "https://e.com", "alert_contact_ids": "1"}),
        json!({"name": "a", "type": ["http"], "target": "https://e.com"}),
    ] {
        let (status, err) = app.post("/api/v1/monitors", &key, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert_eq!(err["error"], "invalid request body");
    }
    let (status, err) = app
        .patch(
            &format!("/api/v1/monitors/{}", create_monitor(&app, &key).await),
            &key,
            json!({"interval_secs": "sixty"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
}

async fn create_monitor(app: &TestApp, key: &str) -> i64 {
    let (status, m) = app
        .post(
            "/api/v1/monitors",
            key,
            json!({"name": "a", "type": "http", "target": "https://e.com"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{m}");
    m["id"].as_i64().unwrap()
}

#[tokio::test]
async fn unknown_fields_are_400_naming_the_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let id = create_monitor(&app, &key).await;
    let monitor_path = format!("/api/v1/monitors/{id}");
    for (method, path, body) in [
        (
            Method::POST,
            "/api/v1/monitors",
            json!({"name": "a", "type": "http", "target": "https://e.com", "intervall": 60}),
        ),
        (
            Method::PATCH,
            monitor_path.as_str(),
            json!({"intervall": 60}),
        ),
        (
            Method::PATCH,
            monitor_path.as_str(),
            json!({"status": "up"}),
        ),
        (
            Method::POST,
            "/api/v1/alert-contacts",
            json!({"name": "a", "type": "email", "value": "a@b.co", "intervall": 1}),
        ),
        (
            Method::POST,
            "/api/v1/api-keys",
            json!({"name": "a", "intervall": 1}),
        ),
    ] {
        let field = body
            .as_object()
            .unwrap()
            .keys()
            .find(|k| ["intervall", "status"].contains(&k.as_str()))
            .unwrap()
            .clone();
        let (status, err) = app
            .call(method.clone(), path, Some(&key), Some(body.clone()))
            .await;
        assert_eq!(
            status,
            StatusCode::BAD_REQUEST,
            "{method} {path} {body}: {err}"
        );
        assert_eq!(err["error"], "invalid request body");
        let details = detail_messages(&err);
        assert!(details.contains(&format!("`{field}`")), "{body}: {details}");
    }
}

#[tokio::test]
async fn bodies_over_64_kib_are_413() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let big_name = "x".repeat(64 * 1024 + 1);
    let body =
        serde_json::to_vec(&json!({"name": big_name, "type": "http", "target": "https://e.com"}))
            .unwrap();
    for path in ["/api/v1/monitors", "/api/v1/alert-contacts"] {
        let (status, err) = send_raw(
            &app,
            Method::POST,
            path,
            Some(&key),
            Some("application/json"),
            Some(body.clone()),
        )
        .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {err}");
        assert_eq!(err["error"], "request body too large");
    }
    let id = create_monitor(&app, &key).await;
    let (status, _) = send_raw(
        &app,
        Method::PATCH,
        &format!("/api/v1/monitors/{id}"),
        Some(&key),
        Some("application/json"),
        Some(body),
    )
    .await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

    // Just under the limit is read (and refused for its content, not its size).
    let name = "x".repeat(64 * 1024 - 100);
    let (status, err) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": name, "type": "http", "target": "https://e.com"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
}

#[tokio::test]
async fn ids_that_are_not_integers_are_404() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for path in [
        "/api/v1/monitors/abc",
        "/api/v1/monitors/1.5",
        "/api/v1/monitors/-",
        "/api/v1/monitors/99999999999999999999999",
        "/api/v1/alert-contacts/abc",
        "/api/v1/monitors/0",
        "/api/v1/monitors/-1",
        "/api/v1/alert-contacts/424242",
    ] {
        for method in [Method::GET, Method::DELETE] {
            let (status, err) = send_raw(&app, method.clone(), path, Some(&key), None, None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {err}");
            assert_eq!(err, json!({"error": "not found"}));
        }
    }
}

#[tokio::test]
async fn bad_queries_are_400() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for query in [
        "limit=abc",
        "limit=0",
        "limit=101",
        "limit=1.5",
        "cursor=%%%",
        "cursor=MTIz",
    ] {
        for path in ["/api/v1/monitors", "/api/v1/alert-contacts"] {
            let path = format!("{path}?{query}");
            let (status, err) = send_raw(&app, Method::GET, &path, Some(&key), None, None).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {err}");
            assert!(!detail_messages(&err).is_empty());
        }
    }
}

#[tokio::test]
async fn unknown_routes_are_404_json_and_wrong_methods_405_json() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for path in [
        "/",
        "/nope",
        "/api/v1",
        "/api/v1/nope",
        "/api/v2/monitors",
        "/api/v1/monitors/1/nope",
    ] {
        for method in [Method::GET, Method::POST] {
            let (status, err) = send_raw(&app, method.clone(), path, Some(&key), None, None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}: {err}");
            assert_eq!(err["error"], "not found");
        }
    }
    for (method, path) in [
        (Method::PUT, "/api/v1/monitors"),
        (Method::DELETE, "/api/v1/monitors"),
        (Method::PUT, "/api/v1/monitors/1"),
        (Method::POST, "/api/v1/monitors/1"),
        (Method::PUT, "/api/v1/alert-contacts/1"),
        (Method::PATCH, "/api/v1/alert-contacts"),
    ] {
        // Without a key too: the method is wrong whoever asks.
        for key in [Some(key.as_str()), None] {
            let (status, err) = send_raw(&app, method.clone(), path, key, None, None).await;
            assert_eq!(
                status,
                StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: {err}"
            );
            assert_eq!(err["error"], "method not allowed");
        }
    }
}

#[tokio::test]
async fn every_route_needs_a_key() {
    let app = spawn_app().await;
    for (method, path) in [
        (Method::GET, "/api/v1/monitors"),
        (Method::POST, "/api/v1/monitors"),
        (Method::GET, "/api/v1/monitors/1"),
        (Method::PATCH, "/api/v1/monitors/1"),
        (Method::DELETE, "/api/v1/monitors/1"),
        (Method::GET, "/api/v1/alert-contacts"),
        (Method::POST, "/api/v1/alert-contacts"),
        (Method::GET, "/api/v1/alert-contacts/1"),
        (Method::PATCH, "/api/v1/alert-contacts/1"),
        (Method::DELETE, "/api/v1/alert-contacts/1"),
    ] {
        let body = matches!(method, Method::POST | Method::PATCH).then(|| json!({"name": "x"}));
        let (status, err) = app.call(method.clone(), path, None, body).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}: {err}");
        assert_eq!(err, json!({"error": "unauthorized"}));
    }
}

/// Authentication comes before the body: an unknown (well-formed) key with a
/// malformed, oversized or NUL-carrying body is 401, never 400 or 413, so a
/// caller without a key learns nothing about what a body would have done.
#[tokio::test]
async fn unknown_keys_are_401_whatever_the_body() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let id = create_monitor(&app, &key).await;
    let monitor = format!("/api/v1/monitors/{id}");
    let unknown = format!("upt_{}", "A".repeat(40));
    let revoked = {
        let (status, created) = app
            .post("/api/v1/api-keys", &key, json!({"name": "soon revoked"}))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{created}");
        let path = format!("/api/v1/api-keys/{}", created["id"]);
        assert_eq!(app.delete(&path, &key).await.0, StatusCode::NO_CONTENT);
        created["key"].as_str().unwrap().to_string()
    };
    let big = serde_json::to_vec(&json!({"name": "x".repeat(70 * 1024)})).unwrap();
    for bad_key in [unknown.as_str(), revoked.as_str()] {
        for (method, path) in [
            (Method::POST, "/api/v1/monitors"),
            (Method::PATCH, monitor.as_str()),
            (Method::POST, "/api/v1/alert-contacts"),
            (Method::PATCH, "/api/v1/alert-contacts/1"),
            (Method::POST, "/api/v1/api-keys"),
        ] {
            for body in [
                b"{\"name\": ".to_vec(),
                b"[1, 2]".to_vec(),
                br#"{"name": "a\u0000b"}"#.to_vec(),
                big.clone(),
            ] {
                let (status, err) = send_raw(
                    &app,
                    method.clone(),
                    path,
                    Some(bad_key),
                    Some("application/json"),
                    Some(body),
                )
                .await;
                assert_eq!(status, StatusCode::UNAUTHORIZED, "{method} {path}: {err}");
                assert_eq!(err, json!({"error": "unauthorized"}));
            }
        }
    }
    // The right key still gets the body's own error.
    let (status, err) = send_raw(
        &app,
        Method::POST,
        "/api/v1/monitors",
        Some(&key),
        Some("application/json"),
        Some(b"{\"name\": ".to_vec()),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");
}

/// A 405 says in `Allow` which methods the path does serve.
#[tokio::test]
async fn wrong_methods_name_the_allowed_ones() {
    let app = spawn_app().await;
    for (method, path, allowed) in [
        (Method::PUT, "/api/v1/monitors", "GET, POST"),
        (Method::POST, "/api/v1/monitors/1", "DELETE, GET, PATCH"),
        (Method::GET, "/api/v1/monitors/1/check", "POST"),
        (Method::PUT, "/api/v1/heartbeat/x", "GET, HEAD, POST"),
        (Method::DELETE, "/api/v1/api-keys", "GET, POST"),
        (Method::GET, "/api/v1/alert-contacts/1/test", "POST"),
        (Method::PUT, "/api/v1/alert-contacts/1/deliveries", "GET"),
    ] {
        let res = app
            .client
            .request(method.clone(), app.url(path))
            .send()
            .await
            .unwrap();
        assert_eq!(
            res.status(),
            StatusCode::METHOD_NOT_ALLOWED,
            "{method} {path}"
        );
        let allow = res
            .headers()
            .get("allow")
            .unwrap_or_else(|| panic!("{method} {path}: no Allow header"))
            .to_str()
            .unwrap()
            .to_string();
        let mut methods: Vec<&str> = allow.split(',').map(str::trim).collect();
        methods.sort_unstable();
        assert_eq!(methods.join(", "), allowed, "{method} {path}");
        let body: Value = res.json().await.unwrap();
        assert_eq!(body, json!({"error": "method not allowed"}));
    }
}
