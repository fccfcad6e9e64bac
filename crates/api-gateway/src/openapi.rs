//! The OpenAPI 3 document, generated from the handlers' annotations, served at
//! `/api/v1/openapi.json`.
//!
//! The annotations carry each operation's own answers and each field's
//! bounds. [`document`] then adds what holds for every operation alike, so
//! no annotation can forget it:
//! - `503` everywhere (PostgreSQL or NATS unreachable, or a full queue,
//!   with `Retry-After`);
//! - `401` (with `WWW-Authenticate`) and `429` (with `Retry-After`) on every
//!   operation that needs a key;
//! - `400` on operations with a body or query parameters, `413` on those
//!   with a body, `404` on those with path parameters;
//! - `pattern`s for request strings: no U+0000 anywhere (PostgreSQL cannot
//!   store it), names not only whitespace, the exact shape of cursors and
//!   tokens.
//!
//! What the deployment configures is stated as configured when served
//! ([`serve`]): the alert rules' floors.
//!
//! A method a path does not serve answers `405` with an `Allow` header
//! listing the methods it does; being about undocumented methods, it is
//! described in `info.description` rather than on any operation.

mod client_contract;
mod examples;
mod status_pages;
mod teams;

use crate::error::{ErrorBody, FieldError};
use crate::routes;
use actix_web::HttpResponse;
use serde_json::{json, Map, Value};
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "Uptime API", version = "1", description = "Monitors, alert contacts, API keys, heartbeats, results and uptime. Every error is `{\"error\": ..., \"details\"?: [...]}` (`details`: `[{\"field\", \"message\"}]`).\n\nEvery operation that needs a key answers `401 unauthorized` (with `WWW-Authenticate: Bearer`) before it reads the body, and `429 rate limit exceeded` (with `Retry-After`) past the caller's rate limit. Bodies over 64 KiB are `413` (4 MiB for `POST /api/v1/monitors/bulk`). A string holding U+0000 anywhere in a body is `400 invalid request body`. When PostgreSQL or NATS cannot be reached, or the queue a manual check or heartbeat ping goes to is full (nothing is queued then), the answer is `503 service unavailable` with `Retry-After`. A method a path does not serve is `405 method not allowed` with an `Allow` header listing the methods it does; unknown paths are `404 not found`.\n\nConventions (docs/api.md): every operation has a unique `operationId` and a declared tag. Lists page alike: `?limit=` 1 to 100 and `?cursor=` from the previous page's `next_cursor` (`null` on the last page). Every `201` has a `Location` header (a bulk create's: the monitors' list). A query parameter an operation does not take is `400 invalid query parameters` naming it; heartbeat pings and the verification link ignore query strings instead."),
    paths(
        routes::api_keys::create,
        routes::api_keys::list,
        routes::api_keys::get,
        routes::api_keys::revoke,
        routes::audit_log::list,
        routes::incidents::list,
        routes::incidents::get,
        routes::incidents::acknowledge,
        routes::incident_links::confirm_page,
        routes::incident_links::acknowledge_by_link,
        routes::maintenance_windows::create,
        routes::maintenance_windows::list,
        routes::maintenance_windows::get,
        routes::maintenance_windows::update,
        routes::maintenance_windows::delete,
        routes::escalation_policies::create,
        routes::escalation_policies::list,
        routes::escalation_policies::get,
        routes::escalation_policies::update,
        routes::escalation_policies::delete,
        routes::escalation_policies::monitor_link::get_monitor_policy,
        routes::escalation_policies::monitor_link::set_monitor_policy,
        routes::checks::check_now,
        routes::checks::results::results,
        routes::checks::rounds::rounds,
        routes::checks::daily_uptime,
        routes::regions::list,
        routes::usage::get,
        routes::metrics::get,
        routes::heartbeats::ping,
        routes::heartbeats::fail,
        routes::heartbeats::start,
        routes::heartbeats::exit_code,
        routes::monitors::create,
        routes::monitors::bulk_create,
        routes::monitors::list,
        routes::monitors::get,
        routes::monitors::update,
        routes::monitors::delete,
        routes::monitors::put_by_ref,
        routes::contacts::put_contact_by_ref,
        routes::monitors::get_monitor_by_ref,
        routes::monitors::delete_monitor_by_ref,
        routes::contacts::get_contact_by_ref,
        routes::contacts::delete_contact_by_ref,
        routes::maintenance_windows::put_window_by_ref,
        routes::maintenance_windows::get_window_by_ref,
        routes::maintenance_windows::delete_window_by_ref,
        routes::status_pages::put_status_page_by_ref,
        routes::status_pages::get_status_page_by_ref,
        routes::status_pages::delete_status_page_by_ref,
        routes::escalation_policies::put_policy_by_ref,
        routes::escalation_policies::get_policy_by_ref,
        routes::escalation_policies::delete_policy_by_ref,
        crate::apply::apply,
        routes::contacts::create,
        routes::contacts::list,
        routes::contacts::get,
        routes::contacts::update,
        routes::contacts::delete,
        routes::contacts::resend_verification,
        routes::alerts::verify,
        routes::alerts::send_test,
        routes::alerts::deliveries,
    ),
    components(schemas(
        ErrorBody,
        FieldError,
        routes::alerts::Verified,
        routes::alerts::TestSent,
        routes::alerts::DeliveryList,
        routes::alerts::DeliveryLog,
        routes::alerts::AttemptLog,
        routes::monitors::MonitorType,
        routes::monitors::KeywordType,
        routes::monitors::MonitorStatus,
        routes::monitors::CreateMonitor,
        routes::monitors::UpdateMonitor,
        routes::monitors::MonitorResponse,
        routes::monitors::MonitorList,
        routes::monitors::BulkCreateMonitors,
        routes::monitors::BulkCreatedMonitors,
        routes::contacts::ContactType,
        routes::contacts::CreateContact,
        routes::contacts::UpdateContact,
        routes::contacts::ContactResponse,
        routes::contacts::ContactList,
        routes::contacts::Region,
        routes::contacts::SecretState,
        routes::contacts::EventKind,
        routes::contacts::MinSeverity,
        routes::maintenance_windows::Effect,
        routes::maintenance_windows::CreateWindow,
        routes::maintenance_windows::UpdateWindow,
        routes::maintenance_windows::WindowResponse,
        routes::maintenance_windows::WindowList,
        routes::maintenance_windows::Occurrence,
        routes::escalation_policies::CreatePolicy,
        routes::escalation_policies::UpdatePolicy,
        routes::escalation_policies::PolicyResponse,
        routes::escalation_policies::PolicyList,
        routes::escalation_policies::StepBody,
        routes::escalation_policies::MonitorPolicyBody,
        crate::apply::request::ApplyRequest,
        crate::apply::request::ResourceInput,
        crate::apply::request::Kind,
        crate::apply::request::Action,
        crate::apply::request::PlanEntry,
        crate::apply::request::Summary,
        crate::apply::request::ApplyResponse,
        crate::apply::request::ResourceError,
        crate::apply::request::ApplyRefusal,
        crate::apply::changes::FieldChange,
    )),
    tags(
        (name = "monitors", description = "What is checked, how and how often: create (one or in bulk), list, read, change, pause and delete monitors."),
        (name = "checks", description = "A monitor's outcomes: on-demand checks, results, multi-region rounds and daily uptime."),
        (name = "heartbeats", description = "Pings from cron jobs and other scheduled work to heartbeat monitors. The token in the path is the credential; no API key."),
        (name = "alert-contacts", description = "Where alerts go (email, Slack, webhooks): contacts, their verification, test alerts and the delivery log."),
        (name = "api-keys", description = "The caller's API keys: create (the raw key is shown once), list and revoke."),
        (name = "audit-log", description = "Who changed what in the organisation, when and from where: every write, newest first, filtered and paged."),
        (name = "incidents", description = "Confirmed down periods of monitors: list, read and acknowledge them (with a key, or with the signed link each down alert carries)."),
        (name = "maintenance-windows", description = "When monitors' alerts are held (`silence`) or their checks not run (`pause`): one-off, ad hoc (from now for N minutes) and recurring (RFC 5545 RRULE in an IANA zone) windows over monitor ids and label selectors."),
        (name = "escalation-policies", description = "Who is called when nobody acknowledges: ordered steps of contacts, each with a delay, repeated a number of times; and the policy a monitor alerts through (a policy or contacts, not both)."),
        (name = "regions", description = "The regions monitors can be checked from, and whether each has a live checker."),
        (name = "usage", description = "The caller's usage against their quotas."),
        (name = "apply", description = "Monitoring as code: a whole desired set of monitors, alert contacts, escalation policies, maintenance windows and status pages, named by their refs, planned (create / update / unchanged / delete) and applied in one transaction."),
    ),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("upt_...")
                    .build(),
            ),
        );
    }
}

pub use crate::validation::TEXT_PATTERN;
/// Text without U+0000 that is not only whitespace (Unicode `White_Space`,
/// what Rust's `str::trim` removes), like every `name`.
pub const NAME_PATTERN: &str = "^[^\\u0000]*[^\\u0000\\t\\n\\u000b\\u000c\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000][^\\u0000]*$";
/// A heartbeat token: `hb_` and 32 lowercase hex characters.
pub const HEARTBEAT_TOKEN_PATTERN: &str = "^hb_[0-9a-f]{32}$";
/// A verification token: 43 base64url characters.
pub const VERIFICATION_TOKEN_PATTERN: &str = "^[A-Za-z0-9_-]{43}$";

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

/// A region's name (`uptime_contracts::regions::is_valid_region`).
pub const REGION_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,31}$";

/// The served document: the annotations plus what every operation shares.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut api = ApiDoc::openapi();
        api.merge(teams::TeamsDoc::openapi());
        api.merge(status_pages::StatusPagesDoc::openapi());
        let mut doc = serde_json::to_value(api).unwrap_or_else(|_| json!({}));
        distinct_operation_ids(&mut doc);
        add_locations(&mut doc);
        examples::add(&mut doc);
        add_common_responses(&mut doc);
        add_patterns(&mut doc);
        client_contract::add(&mut doc);
        crate::authz::annotate(&mut doc);
        doc
    })
}

/// [`document`] as this deployment serves it: the alert rules' floors are
/// the configured ones (built per request: the document is fetched rarely).
pub async fn serve(state: actix_web::web::Data<crate::state::AppState>) -> HttpResponse {
    let mut doc = document().clone();
    routes::monitors::Floors::from(state.settings.alert_rules).document(&mut doc);
    HttpResponse::Ok().json(doc)
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
fn distinct_operation_ids(doc: &mut Value) {
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
fn add_locations(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
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
}

fn add_common_responses(doc: &mut Value) {
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
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
                        // An annotation's own description wins; the headers
                        // every such answer carries are added to it.
                        Some(Value::Object(existing)) => {
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
                let mut sorted: Vec<(String, Value)> =
                    std::mem::take(responses).into_iter().collect();
                sorted.sort_by(|a, b| a.0.cmp(&b.0));
                responses.extend(sorted);
            }
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

fn add_patterns(doc: &mut Value) {
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
    let Some(paths) = doc["paths"].as_object_mut() else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let token_pattern = if path.contains("/verify/") {
            VERIFICATION_TOKEN_PATTERN
        } else if path.contains("/incidents/ack/") {
            routes::incident_links::ACK_TOKEN_PATTERN
        } else {
            HEARTBEAT_TOKEN_PATTERN
        };
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for op in item.values_mut() {
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
}

#[cfg(test)]
mod tests {
    /// Writes the served document to `$OPENAPI_DUMP` when set, to compare
    /// the documents of two versions of the code (a refactoring must leave
    /// it alone): `OPENAPI_DUMP=/tmp/before.json cargo test -p api-gateway
    /// --lib openapi::tests::dump`, then `diff` the two files.
    #[test]
    fn dump() {
        if let Ok(path) = std::env::var("OPENAPI_DUMP") {
            let text = serde_json::to_string_pretty(super::document()).expect("a JSON value");
            std::fs::write(&path, text).expect("the dump is written");
        }
    }
}
