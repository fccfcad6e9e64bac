//! The monitor API: what a create answers and refuses, what a PATCH
//! changes and keeps, paging, deletion and the change it announces.

use crate::common::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};

const MONITORS: &str = "/api/v1/monitors";

fn http_monitor() -> Value {
    json!({"name": "site", "type": "http", "target": "https://example.com/health"})
}

/// `base` with `extra`'s fields set on it.
fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, created) = app.post(MONITORS, key, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body} -> {created}");
    created
}

/// Asserts a 400 `invalid request body` whose details name `field`.
fn assert_invalid(status: StatusCode, body: &Value, field: &str, request: &Value) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{request} -> {body}");
    assert_eq!(body["error"], "invalid request body", "{body}");
    let fields: Vec<&str> = body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&field),
        "{request}: expected {field} in {body}"
    );
}

async fn contact(app: &TestApp, key: &str, name: &str) -> i64 {
    let (status, c) = app
        .post(
            "/api/v1/alert-contacts",
            key,
            json!({"name": name, "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    c["id"].as_i64().unwrap()
}

mod create;
mod lifecycle;
mod listing;
mod update;
