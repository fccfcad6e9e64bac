//! What [`super::document`] adds to every operation and schema alike
//! (the module's opening lists it): the common answers, the locations of
//! created resources, distinct operation ids and the request strings'
//! `pattern`s.

use super::{
    HEARTBEAT_TOKEN_PATTERN, NAME_PATTERN, REGION_PATTERN, TEXT_PATTERN, VERIFICATION_TOKEN_PATTERN,
};
use crate::routes;
use serde_json::{json, Map, Value};

/// Request schemas whose string properties get [`NAME_PATTERN`] (names) or
/// [`TEXT_PATTERN`] (everything else), unless their annotation gives a
/// pattern of its own.
const REQUEST_SCHEMAS: &[&str] = &[
    "CreateMonitor",
    "UpdateMonitor",
    "CreateContact",
    "UpdateContact",
    "CreateApiKey",
    "CreateInvitation",
    "AcceptInvitation",
    "RenameOrganisation",
    "DeleteOrganisation",
    "AssertionInput",
    "BasicAuthInput",
    "RequestHeader",
    "CreateStatusPage",
    "UpdateStatusPage",
    "PageGroup",
    "CreateNotice",
    "AddNoticeUpdate",
];

/// Request properties that are arrays of strings, with the bounds of each
/// string (1 to this many characters, not only whitespace), which utoipa's
/// annotations cannot put on array items.
const STRING_ITEMS: &[(&str, usize)] = &[("dns_expected", 255)];

/// Every operation of the document: its path, its method and itself.
pub(crate) fn operations(doc: &mut Value) -> impl Iterator<Item = (&str, &str, &mut Value)> + '_ {
    let paths = doc["paths"].as_object_mut().into_iter().flatten();
    paths.flat_map(|(path, item)| {
        let ops = item.as_object_mut().into_iter().flatten();
        ops.map(move |(method, op)| (path.as_str(), method.as_str(), op))
    })
}

fn error_response(description: &str, headers: &[(&str, &str)]) -> Value {
    let mut response = json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
    });
    if !headers.is_empty() {
        let headers: Map<String, Value> = headers
            .iter()
            .map(|(name, description)| {
                (
                    name.to_string(),
                    json!({"description": description, "required": true, "schema": {"type": "string"}}),
                )
            })
            .collect();
        response["headers"] = Value::Object(headers);
    }
    response
}

/// A handler serving several methods (the heartbeat pings answer `GET`,
/// `HEAD` and `POST`) has one `operation_id`; client generators need one per
/// operation. `GET` keeps it, every other method gets its name appended
/// (`pingHeartbeat`, `pingHeartbeatHead`, `pingHeartbeatPost`).
pub(super) fn distinct_operation_ids(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        let ids: Vec<String> = item
            .values()
            .filter_map(|op| op["operationId"].as_str().map(String::from))
            .collect();
        for (method, op) in item.iter_mut() {
            let Some(id) = op["operationId"].as_str() else {
                continue;
            };
            if method != "get" && ids.iter().filter(|other| *other == id).count() > 1 {
                let mut suffix = method.clone();
                suffix[..1].make_ascii_uppercase();
                op["operationId"] = Value::String(format!("{id}{suffix}"));
            }
        }
    }
}

/// Every `201` carries `Location`: the created resource (`{path}/{id}`),
/// unless the annotation says otherwise (a bulk create's list).
pub(super) fn add_locations(doc: &mut Value) {
    for (path, _, op) in operations(doc) {
        let Some(created) = op["responses"].get_mut("201") else {
            continue;
        };
        let headers = created
            .as_object_mut()
            .map(|c| c.entry("headers").or_insert_with(|| json!({})));
        if let Some(Value::Object(headers)) = headers {
            headers.entry("Location").or_insert_with(|| {
                json!({
                    "description": format!("The created resource: `{path}/{{id}}`"),
                    "schema": {"type": "string"},
                })
            });
            if let Some(location) = headers.get_mut("Location") {
                location["required"] = json!(true);
            }
        }
    }
}

pub(super) fn add_common_responses(doc: &mut Value) {
    for (path, _, op) in operations(doc) {
        let Some(op) = op.as_object_mut() else {
            continue;
        };
        let needs_key = op
            .get("security")
            .and_then(Value::as_array)
            .is_some_and(|s| !s.is_empty());
        let has_body = op.contains_key("requestBody");
        let has_query = op
            .get("parameters")
            .and_then(Value::as_array)
            .is_some_and(|ps| ps.iter().any(|p| p["in"] == "query"));
        let mut add = Vec::new();
        if has_body || has_query {
            add.push(("400", error_response("`invalid request body` or `invalid query parameters`, naming each problem in `details`", &[])));
        }
        if needs_key {
            add.push((
                "401",
                error_response(
                    "`unauthorized`: no key, or an unknown or revoked one",
                    &[("WWW-Authenticate", "`Bearer`")],
                ),
            ));
        }
        // A ref in the path is checked before anything is read; with
        // no body or query, it is the only `400`.
        if path.contains("{ref}") && !has_body && !has_query {
            add.push(("400", error_response("the ref is malformed (`ref`)", &[])));
        }
        if path.contains('{') {
            add.push((
                "404",
                error_response("`not found`: no such resource of the caller", &[]),
            ));
        }
        if has_body {
            add.push((
                "413",
                error_response("`request body too large`: over 64 KiB", &[]),
            ));
        }
        if needs_key {
            add.push((
                "429",
                error_response(
                    "`rate limit exceeded`: the caller's requests are over the rate limit",
                    &[("Retry-After", "Seconds to wait")],
                ),
            ));
        }
        add.push((
                "503",
                error_response(
                    "`service unavailable`: PostgreSQL or NATS cannot be reached, or the queue is full; retry later",
                    &[("Retry-After", "Seconds to wait")],
                ),
            ));
        let responses = op
            .entry("responses")
            .or_insert_with(|| json!({}))
            .as_object_mut();
        if let Some(responses) = responses {
            for (status, response) in add {
                match responses.get_mut(status) {
                    // An annotation's own description wins (an empty one
                    // says nothing: the common one stands for it); the
                    // headers every such answer carries are added to it.
                    Some(Value::Object(existing)) => {
                        if existing.get("description").is_none_or(|d| d == "") {
                            existing.insert("description".into(), response["description"].clone());
                        }
                        if let Some(headers) = response.get("headers") {
                            existing.entry("headers").or_insert(headers.clone());
                        }
                    }
                    _ => {
                        responses.insert(status.to_string(), response);
                    }
                }
            }
            // Present them in status order.
            let mut sorted: Vec<(String, Value)> = std::mem::take(responses).into_iter().collect();
            sorted.sort_by(|a, b| a.0.cmp(&b.0));
            responses.extend(sorted);
        }
    }
}

fn set_pattern(schema: &mut Value, pattern: &str) {
    if let Some(schema) = schema.as_object_mut() {
        schema.insert("pattern".into(), Value::String(pattern.into()));
    }
}

/// Sets `pattern` unless the schema has one (an annotation's own wins).
fn default_pattern(schema: &mut Value, pattern: &str) {
    if let Some(schema) = schema.as_object_mut() {
        schema
            .entry("pattern")
            .or_insert_with(|| Value::String(pattern.into()));
    }
}

fn is_string(schema: &Value) -> bool {
    match &schema["type"] {
        Value::String(t) => t == "string",
        Value::Array(ts) => ts.iter().any(|t| t == "string"),
        _ => false,
    }
}

pub(super) fn add_patterns(doc: &mut Value) {
    for name in REQUEST_SCHEMAS {
        let Some(properties) = doc["components"]["schemas"][*name]["properties"].as_object_mut()
        else {
            continue;
        };
        for (field, schema) in properties.iter_mut() {
            if is_string(schema) {
                default_pattern(
                    schema,
                    if field == "name" {
                        NAME_PATTERN
                    } else {
                        TEXT_PATTERN
                    },
                );
            }
            if field == "regions" {
                // Distinct region names; which ones exist is the
                // deployment's (`GET /api/v1/regions`), a 400 otherwise.
                schema["uniqueItems"] = json!(true);
                let items = &mut schema["items"];
                if is_string(items) {
                    items["minLength"] = json!(1);
                    items["maxLength"] = json!(uptime_contracts::regions::MAX_REGION_CHARS);
                    set_pattern(items, REGION_PATTERN);
                }
            }
            if let Some(&(_, max)) = STRING_ITEMS.iter().find(|(f, _)| f == field) {
                let items = &mut schema["items"];
                if is_string(items) {
                    items["minLength"] = json!(1);
                    items["maxLength"] = json!(max);
                    set_pattern(items, NAME_PATTERN);
                }
            }
        }
    }
    let cursor = crate::validation::cursor_pattern();
    for (path, _, op) in operations(doc) {
        let token_pattern = if path.contains("/verify/") {
            VERIFICATION_TOKEN_PATTERN
        } else if path.contains("/incidents/ack/") {
            routes::incident_links::ACK_TOKEN_PATTERN
        } else {
            HEARTBEAT_TOKEN_PATTERN
        };
        let Some(params) = op.get_mut("parameters").and_then(Value::as_array_mut) else {
            continue;
        };
        for param in params {
            if param["in"] == "query" && param["name"] == "before" {
                // The former name of `cursor` (results), still accepted.
                param["deprecated"] = json!(true);
            }
            let pattern = match (param["in"].as_str(), param["name"].as_str()) {
                // Results have cursors of their own (a time and an id),
                // rounds and deliveries too (a time and a UUID).
                (Some("query"), Some("cursor" | "before")) if path.ends_with("/results") => {
                    routes::checks::RESULTS_CURSOR_PATTERN
                }
                (Some("query"), Some("cursor"))
                    if path.ends_with("/rounds")
                        || path.ends_with("/deliveries")
                        || path.ends_with("/incidents") =>
                {
                    crate::validation::positions::POSITION_CURSOR_PATTERN
                }
                (Some("query"), Some("cursor")) => cursor.as_str(),
                (Some("path"), Some("token")) => token_pattern,
                _ => continue,
            };
            set_pattern(&mut param["schema"], pattern);
        }
    }
}
