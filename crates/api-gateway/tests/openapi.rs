//! The served OpenAPI document describes every route the API serves.

mod common;

use common::spawn_app;
use reqwest::StatusCode;
use serde_json::Value;

async fn fetch_spec() -> Value {
    let app = spawn_app().await;
    // The document is public: no key needed.
    let res = app
        .client
        .get(app.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    res.json().await.expect("JSON document")
}

#[tokio::test]
async fn the_document_is_openapi_3_and_lists_every_crud_route() {
    let spec = fetch_spec().await;
    let version = spec["openapi"].as_str().expect("openapi version");
    assert!(version.starts_with("3."), "{version}");
    assert!(spec["info"]["title"].is_string());

    let expected = [
        ("/api/v1/api-keys", &["get", "post"][..]),
        ("/api/v1/api-keys/{id}", &["delete"][..]),
        ("/api/v1/monitors", &["get", "post"][..]),
        ("/api/v1/monitors/{id}", &["get", "patch", "delete"][..]),
        ("/api/v1/alert-contacts", &["get", "post"][..]),
        (
            "/api/v1/alert-contacts/{id}",
            &["get", "patch", "delete"][..],
        ),
    ];
    for (path, methods) in expected {
        let item = &spec["paths"][path];
        assert!(item.is_object(), "{path} missing from the document");
        for method in methods {
            let op = &item[*method];
            assert!(op.is_object(), "{method} {path} missing");
            assert!(
                op["responses"].is_object(),
                "{method} {path} has no responses"
            );
            assert!(
                op["security"].is_array(),
                "{method} {path} does not say it needs a key"
            );
        }
    }
    assert!(spec["components"]["securitySchemes"]["bearer"].is_object());
}

#[tokio::test]
async fn the_schemas_name_every_contract_field() {
    let spec = fetch_spec().await;
    let schemas = &spec["components"]["schemas"];
    let properties = |name: &str| -> Vec<String> {
        schemas[name]["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("schema {name} has properties"))
            .keys()
            .cloned()
            .collect()
    };

    let monitor = properties("MonitorResponse");
    for field in [
        "id",
        "user_id",
        "name",
        "type",
        "target",
        "interval_secs",
        "timeout_secs",
        "keyword",
        "keyword_type",
        "expected_status",
        "confirmation_count",
        "heartbeat_token",
        "ssl_warn_days",
        "latency_warn_ms",
        "consecutive_failures",
        "last_heartbeat_at",
        "ssl_expires_at",
        "active",
        "status",
        "last_checked_at",
        "created_at",
        "updated_at",
        "alert_contact_ids",
    ] {
        assert!(
            monitor.contains(&field.to_string()),
            "MonitorResponse.{field}"
        );
    }
    let create = properties("CreateMonitor");
    for field in [
        "name",
        "type",
        "target",
        "latency_warn_ms",
        "alert_contact_ids",
        "active",
    ] {
        assert!(create.contains(&field.to_string()), "CreateMonitor.{field}");
    }
    let contact = properties("ContactResponse");
    for field in [
        "id",
        "user_id",
        "type",
        "name",
        "value",
        "verified",
        "created_at",
        "updated_at",
        "signing_secret",
    ] {
        assert!(
            contact.contains(&field.to_string()),
            "ContactResponse.{field}"
        );
    }
    assert!(properties("MonitorList").contains(&"next_cursor".to_string()));
    assert!(properties("ContactList").contains(&"alert_contacts".to_string()));

    // The enums list their values.
    let values = |name: &str| {
        schemas[name]["enum"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    assert_eq!(values("MonitorType").len(), 3, "{}", schemas["MonitorType"]);
    assert_eq!(
        values("MonitorStatus").len(),
        4,
        "{}",
        schemas["MonitorStatus"]
    );
    assert_eq!(values("ContactType").len(), 3, "{}", schemas["ContactType"]);

    // PATCH bodies: every field optional; only clearable ones take null.
    let update = &schemas["UpdateMonitor"];
    assert!(
        update["required"].as_array().is_none_or(|r| r.is_empty()),
        "{update}"
    );
    let nullable = |field: &str| update["properties"][field].to_string().contains("null");
    for field in ["target", "keyword", "keyword_type", "latency_warn_ms"] {
        assert!(
            nullable(field),
            "UpdateMonitor.{field} can be cleared with null"
        );
    }
    for field in [
        "name",
        "type",
        "interval_secs",
        "active",
        "alert_contact_ids",
    ] {
        assert!(!nullable(field), "UpdateMonitor.{field} refuses null");
    }

    // The list endpoint documents its query parameters.
    let params: Vec<&str> = spec["paths"]["/api/v1/monitors"]["get"]["parameters"]
        .as_array()
        .expect("parameters")
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(params, ["limit", "cursor"]);
}
