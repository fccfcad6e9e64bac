//! Request and response examples of the main operations (monitors, alert
//! contacts, API keys), put into the document by operation id. Kept here
//! rather than in the annotations: they are long, and together they tell
//! one story (a shop's checkout monitored, an on-call contact, a key for
//! Terraform).

use serde_json::{json, Value};

fn monitor() -> Value {
    json!({
        "id": 42,
        "org_id": 7,
        "user_id": 7,
        "name": "Shop checkout",
        "type": "http",
        "target": "https://shop.example.com/health",
        "method": "GET",
        "headers": [],
        "body": null,
        "basic_auth": null,
        "assertions": [],
        "interval_secs": 60,
        "timeout_secs": 10,
        "keyword": null,
        "keyword_type": null,
        "expected_status": 200,
        "confirmation_count": 2,
        "heartbeat_token": null,
        "schedule": null,
        "timezone": null,
        "next_expected_at": null,
        "ssl_warn_days": 30,
        "latency_warn_ms": 1500,
        "dns_record_type": null,
        "dns_server": null,
        "dns_expected": null,
        "tls_fingerprint_sha256": null,
        "regions": null,
        "quorum": null,
        "definition_version": 1,
        "consecutive_failures": 0,
        "last_heartbeat_at": null,
        "ssl_expires_at": "2027-02-01T12:00:00Z",
        "active": true,
        "status": "up",
        "last_checked_at": "2026-11-22T10:15:00Z",
        "created_at": "2026-11-22T10:00:00Z",
        "updated_at": "2026-11-22T10:00:00Z",
        "alert_contact_ids": [3],
    })
}

fn contact() -> Value {
    json!({
        "id": 3,
        "org_id": 7,
        "user_id": 7,
        "type": "email",
        "name": "On-call",
        "value": "oncall@example.com",
        "verified": false,
        "verification_link_sent": true,
        "created_at": "2026-11-22T10:00:00Z",
        "updated_at": "2026-11-22T10:00:00Z",
    })
}

fn api_key(raw: bool) -> Value {
    let mut key = json!({
        "id": 12,
        "org_id": 7,
        "user_id": 7,
        "name": "terraform",
        "prefix": "upt_8fKq",
        "last_used_at": null,
        "created_at": "2026-11-22T10:00:00Z",
    });
    if raw {
        key["key"] = json!("upt_8fKq2LmN4pR7sT9vW1xY3zA5bC6dE8fG0hJ2kM4n");
    }
    key
}

/// (operation id, request example, (status, response example)).
type Example = (&'static str, Option<Value>, Option<(&'static str, Value)>);

fn examples() -> Vec<Example> {
    let cursor = crate::validation::encode_cursor(42);
    let mut paused = monitor();
    paused["active"] = json!(false);
    vec![
        (
            "createMonitor",
            Some(json!({
                "name": "Shop checkout",
                "type": "http",
                "target": "https://shop.example.com/health",
                "interval_secs": 60,
                "timeout_secs": 10,
                "confirmation_count": 2,
                "latency_warn_ms": 1500,
                "alert_contact_ids": [3],
            })),
            Some(("201", monitor())),
        ),
        (
            "bulkCreateMonitors",
            Some(json!({"monitors": [
                {"name": "Shop checkout", "type": "http", "target": "https://shop.example.com/health"},
                {"name": "Nightly backup", "type": "heartbeat", "interval_secs": 86400, "timeout_secs": 120},
            ]})),
            None,
        ),
        (
            "listMonitors",
            None,
            Some((
                "200",
                json!({"monitors": [monitor()], "next_cursor": cursor}),
            )),
        ),
        ("getMonitor", None, Some(("200", monitor()))),
        (
            "updateMonitor",
            Some(json!({"active": false})),
            Some(("200", paused)),
        ),
        (
            "createContact",
            Some(json!({"name": "On-call", "type": "email", "value": "oncall@example.com"})),
            Some(("201", contact())),
        ),
        (
            "listContacts",
            None,
            Some((
                "200",
                json!({"alert_contacts": [contact()], "next_cursor": null}),
            )),
        ),
        ("getContact", None, Some(("200", contact()))),
        (
            "updateContact",
            Some(json!({"name": "On-call (EU)"})),
            Some(("200", {
                let mut c = contact();
                c["name"] = json!("On-call (EU)");
                c
            })),
        ),
        (
            "createApiKey",
            Some(json!({"name": "terraform"})),
            Some(("201", api_key(true))),
        ),
        (
            "listApiKeys",
            None,
            Some((
                "200",
                json!({"api_keys": [api_key(false)], "next_cursor": null}),
            )),
        ),
        ("getApiKey", None, Some(("200", api_key(false)))),
    ]
}

/// Puts each example on its operation's JSON request body or answer.
pub fn add(doc: &mut Value) {
    let by_id = examples();
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for op in paths
        .values_mut()
        .filter_map(Value::as_object_mut)
        .flat_map(|item| item.values_mut())
    {
        let Some((_, request, response)) = by_id.iter().find(|(id, _, _)| op["operationId"] == *id)
        else {
            continue;
        };
        if let Some(request) = request {
            let media = &mut op["requestBody"]["content"]["application/json"];
            if media.is_object() {
                media["example"] = request.clone();
            }
        }
        if let Some((status, response)) = response {
            let media = &mut op["responses"][*status]["content"]["application/json"];
            if media.is_object() {
                media["example"] = response.clone();
            }
        }
    }
}
