//! The served OpenAPI document describes every route the API serves.

use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::{json, Value};

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
    assert_eq!(values("MonitorType").len(), 7, "{}", schemas["MonitorType"]);
    assert_eq!(
        values("MonitorStatus").len(),
        4,
        "{}",
        schemas["MonitorStatus"]
    );
    assert_eq!(
        values("ContactType").len(),
        10,
        "{}",
        schemas["ContactType"]
    );

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
        .filter(|p| p["in"] == "query")
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        params,
        ["limit", "cursor", "type", "status", "active", "search", "label"]
    );
}

/// Every bound of the API contract, as the document states it.
#[tokio::test]
async fn the_document_carries_every_bound_of_the_contract() {
    let spec = fetch_spec().await;
    let schemas = &spec["components"]["schemas"];
    let field = |schema: &str, name: &str| schemas[schema]["properties"][name].clone();
    for schema in ["CreateMonitor", "UpdateMonitor"] {
        for (name, min, max) in [
            ("interval_secs", 10, 86_400),
            ("timeout_secs", 1, 120),
            ("expected_status", 100, 599),
            ("confirmation_count", 1, 10),
            ("ssl_warn_days", 0, 365),
            ("latency_warn_ms", 1, 600_000),
        ] {
            let f = field(schema, name);
            assert_eq!(f["minimum"], min, "{schema}.{name}: {f}");
            assert_eq!(f["maximum"], max, "{schema}.{name}: {f}");
        }
        for (name, min, max) in [("name", 1, 200), ("target", 1, 2048), ("keyword", 1, 1024)] {
            let f = field(schema, name);
            assert_eq!(f["minLength"], min, "{schema}.{name}: {f}");
            assert_eq!(f["maxLength"], max, "{schema}.{name}: {f}");
            assert!(f["pattern"].is_string(), "{schema}.{name}: {f}");
        }
        assert_eq!(schemas[schema]["additionalProperties"], false, "{schema}");
    }
    for schema in ["CreateContact", "UpdateContact"] {
        assert_eq!(field(schema, "name")["maxLength"], 200, "{schema}");
        assert_eq!(field(schema, "value")["maxLength"], 2048, "{schema}");
    }
    assert_eq!(field("CreateApiKey", "name")["maxLength"], 200);
    // Names may not be only whitespace, and no string may hold U+0000.
    let name_pattern = field("CreateApiKey", "name")["pattern"].clone();
    assert!(name_pattern.to_string().contains("u0000"), "{name_pattern}");
    assert!(name_pattern.to_string().contains("u3000"), "{name_pattern}");
    assert!(field("CreateContact", "value")["pattern"]
        .to_string()
        .contains("u0000"));
    // The enums.
    let values = |name: &str| schemas[name]["enum"].clone();
    assert_eq!(
        values("MonitorType"),
        json!(["http", "keyword", "heartbeat", "tcp", "tls", "dns", "icmp"])
    );
    assert_eq!(values("KeywordType"), json!(["contains", "not_contains"]));
    assert_eq!(
        values("ContactType"),
        json!([
            "email",
            "slack",
            "webhook",
            "pagerduty",
            "opsgenie",
            "teams",
            "discord",
            "telegram",
            "ntfy",
            "pushover"
        ])
    );
    assert_eq!(values("Region"), json!(["us", "eu"]));
    assert_eq!(values("SecretState"), json!(["set", "unset"]));
    for schema in ["CreateContact", "UpdateContact"] {
        assert_eq!(field(schema, "secret")["maxLength"], 256, "{schema}");
        assert_eq!(field(schema, "server")["maxLength"], 2048, "{schema}");
    }

    // Query parameters and tokens.
    let param = |path: &str, name: &str| -> Value {
        spec["paths"][path]["get"]["parameters"]
            .as_array()
            .unwrap_or_else(|| panic!("{path} parameters"))
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{path} ?{name}"))["schema"]
            .clone()
    };
    for (path, name, min, max) in [
        ("/api/v1/monitors", "limit", 1, 100),
        ("/api/v1/alert-contacts", "limit", 1, 100),
        ("/api/v1/monitors/{id}/results", "limit", 1, 100),
        ("/api/v1/alert-contacts/{id}/deliveries", "limit", 1, 100),
        ("/api/v1/monitors/{id}/uptime/daily", "days", 1, 365),
    ] {
        let p = param(path, name);
        assert_eq!(
            (p["minimum"].clone(), p["maximum"].clone()),
            (json!(min), json!(max)),
            "{path} ?{name}: {p}"
        );
    }
    for (path, name) in [
        ("/api/v1/monitors", "cursor"),
        ("/api/v1/monitors/{id}/results", "before"),
        ("/api/v1/heartbeat/{token}", "token"),
        ("/api/v1/alert-contacts/verify/{token}", "token"),
    ] {
        assert!(param(path, name)["pattern"].is_string(), "{path} {name}");
    }
}

/// Every status code an operation can answer is in the document.
#[tokio::test]
async fn every_operation_lists_every_status_it_can_answer() {
    let spec = fetch_spec().await;
    let mut operations = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            operations += 1;
            let responses = op["responses"].as_object().unwrap();
            let has = |status: &str| responses.contains_key(status);
            let needs_key = op["security"].as_array().is_some_and(|s| !s.is_empty());
            let mut expected = vec!["503"];
            if needs_key {
                expected.extend(["401", "429"]);
                assert!(
                    responses["401"]["headers"]["WWW-Authenticate"].is_object(),
                    "{method} {path}"
                );
                assert!(
                    responses["429"]["headers"]["Retry-After"].is_object(),
                    "{method} {path}"
                );
            }
            if op["requestBody"].is_object() {
                expected.extend(["400", "413"]);
            }
            if path.contains('{') {
                expected.push("404");
            }
            if method == "post"
                && [
                    "/api/v1/monitors",
                    "/api/v1/alert-contacts",
                    "/api/v1/api-keys",
                ]
                .contains(&path.as_str())
            {
                expected.push("403");
            }
            if path.starts_with("/api/v1/heartbeat/") {
                expected.push("429");
            }
            for status in expected {
                assert!(has(status), "{method} {path} does not list {status}");
            }
        }
    }
    assert!(operations >= 25, "{operations}");
    assert!(spec["info"]["description"]
        .as_str()
        .unwrap()
        .contains("`Allow`"));
}

/// The routes the gateway serves without a key are exactly those the
/// document lists without `security`.
#[tokio::test]
async fn public_routes_are_the_documented_ones() {
    let spec = fetch_spec().await;
    let mut public: Vec<String> = Vec::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for op in item.as_object().unwrap().values() {
            if op["security"].as_array().is_none_or(|s| s.is_empty()) && !public.contains(path) {
                public.push(path.clone());
            }
        }
    }
    public.push("/api/v1/openapi.json".into());
    public.sort();
    let mut served: Vec<String> = api_gateway::authz::public_routes()
        .iter()
        .map(|r| r.to_string())
        .collect();
    served.sort();
    assert_eq!(public, served);
}

/// Issue 12: the new monitor types' fields, each described and bounded.
#[tokio::test]
async fn the_document_states_the_new_fields_and_their_bounds() {
    let spec = fetch_spec().await;
    let schemas = &spec["components"]["schemas"];
    let enum_of = |name: &str| schemas[name]["enum"].clone();
    assert_eq!(
        enum_of("HttpMethod"),
        json!(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"])
    );
    assert_eq!(
        enum_of("DnsRecordType"),
        json!(["A", "AAAA", "CNAME", "MX", "TXT", "NS"])
    );
    assert_eq!(
        enum_of("AssertionSource"),
        json!([
            "status_code",
            "header",
            "json_body",
            "text_body",
            "response_time"
        ])
    );
    assert_eq!(enum_of("AssertionComparison").as_array().unwrap().len(), 9);

    for schema in ["CreateMonitor", "UpdateMonitor"] {
        let field = |name: &str| schemas[schema]["properties"][name].clone();
        for name in ["headers", "assertions", "dns_expected"] {
            assert_eq!(field(name)["maxItems"], 20, "{schema}.{name}");
        }
        assert_eq!(field("body")["maxLength"], 16384, "{schema}");
        assert_eq!(field("schedule")["maxLength"], 255, "{schema}");
        assert_eq!(field("timezone")["maxLength"], 64, "{schema}");
        assert_eq!(field("dns_server")["maxLength"], 64, "{schema}");
        assert_eq!(field("dns_expected")["items"]["maxLength"], 255, "{schema}");
        assert!(
            field("tls_fingerprint_sha256")["pattern"]
                .as_str()
                .unwrap()
                .contains("{64}"),
            "{schema}"
        );
        for name in crate::monitor_kinds::OPTION_FIELDS {
            assert!(
                field(name)["description"].is_string()
                    || field(name)["oneOf"][1]["description"].is_string(),
                "{schema}.{name} is described: {}",
                field(name)
            );
        }
    }
    let update = &schemas["UpdateMonitor"]["properties"];
    for name in crate::monitor_kinds::OPTION_FIELDS {
        assert!(
            update[name].to_string().contains("null"),
            "UpdateMonitor.{name} takes null"
        );
    }
    let header = &schemas["RequestHeader"];
    assert_eq!(header["properties"]["name"]["maxLength"], 128);
    assert_eq!(header["properties"]["value"]["maxLength"], 1024);
    assert!(header["properties"]["name"]["pattern"].is_string());
    assert_eq!(header["additionalProperties"], false);
    let assertion = &schemas["AssertionInput"];
    assert_eq!(assertion["properties"]["property"]["maxLength"], 256);
    assert_eq!(schemas["AssertionTarget"]["oneOf"][0]["maxLength"], 1024);
    assert_eq!(
        schemas["BasicAuthInput"]["properties"]["password"]["maxLength"],
        256
    );

    let response = schemas["MonitorResponse"]["properties"]
        .as_object()
        .unwrap();
    for name in crate::monitor_kinds::OPTION_FIELDS.into_iter().chain([
        "schedule",
        "timezone",
        "next_expected_at",
    ]) {
        assert!(response.contains_key(name), "MonitorResponse.{name}");
    }
    assert!(
        !schemas["BasicAuthView"]
            .to_string()
            .contains("\"password\""),
        "responses have no password: {}",
        schemas["BasicAuthView"]
    );
}

/// Issue 20: client generators name a method per `operationId` and group
/// them by tag, so every operation has its own id and a declared tag.
#[tokio::test]
async fn every_operation_has_a_unique_id_and_a_declared_tag() {
    let spec = fetch_spec().await;
    let declared: Vec<&str> = spec["tags"]
        .as_array()
        .expect("top-level tags")
        .iter()
        .map(|t| {
            assert!(t["description"].is_string(), "tag {t} is described");
            t["name"].as_str().unwrap()
        })
        .collect();
    let mut ids = std::collections::HashMap::new();
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            let id = op["operationId"].as_str().unwrap_or_default();
            assert!(
                id.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                    && id.chars().all(|c| c.is_ascii_alphanumeric()),
                "{method} {path}: operationId {id:?} is camelCase"
            );
            if let Some(other) = ids.insert(id.to_string(), format!("{method} {path}")) {
                panic!("{method} {path} and {other} share the operationId {id}");
            }
            let tags = op["tags"].as_array().map(Vec::as_slice).unwrap_or(&[]);
            assert!(!tags.is_empty(), "{method} {path} has no tag");
            for tag in tags {
                assert!(
                    declared.contains(&tag.as_str().unwrap()),
                    "{method} {path}: tag {tag} is not declared"
                );
            }
        }
    }
}
