//! Monitoring as code: `ref` on monitors and contacts, `PUT .../by-ref/{ref}`
//! and `POST /api/v1/apply` (plan, dry run, prune, refs across kinds, all or
//! nothing, quotas of the end state).

use crate::common::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const APPLY: &str = "/api/v1/apply";

fn contact(r#ref: &str) -> Value {
    json!({"kind": "AlertContact", "ref": r#ref,
        "spec": {"name": "On call", "type": "webhook", "value": "https://hooks.example.com/oncall"}})
}

fn monitor(r#ref: &str, interval: i64) -> Value {
    json!({"kind": "Monitor", "ref": r#ref,
        "spec": {"name": format!("Monitor {}", r#ref), "type": "http",
                 "target": format!("https://{}.example.com/health", r#ref),
                 "interval_secs": interval, "alert_contact_refs": ["oncall"],
                 "labels": {"team": "payments"}}})
}

async fn apply(
    app: &TestApp,
    key: &str,
    resources: Vec<Value>,
    dry_run: bool,
    prune: bool,
) -> (StatusCode, Value) {
    app.post(
        APPLY,
        key,
        json!({"resources": resources, "dry_run": dry_run, "prune": prune}),
    )
    .await
}

async fn monitors_of(app: &TestApp, key: &str) -> Vec<Value> {
    let (status, page) = app.get("/api/v1/monitors?limit=100", key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["monitors"].as_array().unwrap().clone()
}

async fn put(
    app: &TestApp,
    path: &str,
    key: &str,
    body: Value,
    if_match: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    let mut req = app
        .client
        .request(Method::PUT, app.url(path))
        .bearer_auth(key)
        .json(&body);
    if let Some(tag) = if_match {
        req = req.header("If-Match", tag);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let tag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    (
        status,
        tag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

mod audit;
mod by_ref;
mod plan;
