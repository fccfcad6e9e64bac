//! The audit entries of writes by ref and by apply.

use super::{apply, contact, monitor, put};
use crate::common::{spawn_app, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn audit_actions(app: &TestApp, key: &str) -> Vec<(String, String)> {
    crate::audit_log::entries(app, key, "?limit=100")
        .await
        .iter()
        .rev()
        // A key's first use is an entry of its own.
        .filter(|e| e["resource_kind"] != "api_key")
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["resource_kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn audited(action: &str, kind: &str) -> (String, String) {
    (action.to_string(), kind.to_string())
}

#[tokio::test]
async fn every_write_by_ref_or_apply_leaves_its_audit_entries_and_no_write_none() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let body =
        json!({"name": "Checkout", "type": "http", "target": "https://checkout.example.com"});
    let res = app
        .client
        .put(app.url("/api/v1/monitors/by-ref/checkout"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let location = res.headers()["location"].to_str().unwrap().to_string();
    let created: Value = res.json().await.unwrap();
    assert_eq!(location, format!("/api/v1/monitors/{}", created["id"]));
    // Unchanged: no entry; replaced: one.
    put(&app, "/api/v1/monitors/by-ref/checkout", &key, body, None).await;
    let renamed =
        json!({"name": "Checkout 2", "type": "http", "target": "https://checkout.example.com"});
    let (status, _, _) = put(
        &app,
        "/api/v1/monitors/by-ref/checkout",
        &key,
        renamed,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let contact_body = json!({"name": "c", "type": "webhook", "value": "https://h.example.com/a"});
    put(
        &app,
        "/api/v1/alert-contacts/by-ref/oncall",
        &key,
        contact_body,
        None,
    )
    .await;
    assert_eq!(
        audit_actions(&app, &key).await,
        vec![
            audited("create", "monitor"),
            audited("update", "monitor"),
            audited("create", "alert_contact")
        ]
    );

    // A dry run and a refusal: nothing; an apply: an entry per contact
    // written and per monitor updated or deleted, one for the monitors
    // created together.
    let before = audit_actions(&app, &key).await.len();
    apply(
        &app,
        &key,
        vec![monitor("a", 60), contact("oncall")],
        true,
        false,
    )
    .await;
    apply(
        &app,
        &key,
        vec![monitor("a", 5), contact("oncall")],
        false,
        false,
    )
    .await;
    assert_eq!(audit_actions(&app, &key).await.len(), before);
    let (status, _) = apply(
        &app,
        &key,
        vec![monitor("a", 60), monitor("b", 60), contact("oncall")],
        false,
        true,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let after = audit_actions(&app, &key).await;
    assert_eq!(
        after[before..].to_vec(),
        vec![
            audited("update", "alert_contact"),
            audited("bulk_create", "monitor"),
            audited("delete", "monitor")
        ]
    );
}
