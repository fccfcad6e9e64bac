//! The OpenAPI 3 document, generated from the handlers' annotations, served at
//! `/api/v1/openapi.json`.
//!
//! The annotations carry each operation's own answers and each field's
//! bounds. [`document`] then adds what holds for every operation alike, so
//! no annotation can forget it:
//! - the bearer `security` (narrowed to its scope) on every operation
//!   that needs a key, as `crate::authz::ROUTES` says;
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
pub(crate) mod shared;

use crate::routes;
use actix_web::HttpResponse;
use serde_json::{json, Value};
use std::sync::OnceLock;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "Uptime API", version = "1", description = "Monitors, alert contacts, API keys, heartbeats, results and uptime. Every error is `{\"error\": ..., \"details\"?: [...]}` (`details`: `[{\"field\", \"message\"}]`).\n\nEvery operation that needs a key answers `401 unauthorized` (with `WWW-Authenticate: Bearer`) before it reads the body, and `429 rate limit exceeded` (with `Retry-After`) past the caller's rate limit. Bodies over 64 KiB are `413` (4 MiB for `POST /api/v1/monitors/bulk`). A string holding U+0000 anywhere in a body is `400 invalid request body`. When PostgreSQL or NATS cannot be reached, or the queue a manual check or heartbeat ping goes to is full (nothing is queued then), the answer is `503 service unavailable` with `Retry-After`. A method a path does not serve is `405 method not allowed` with an `Allow` header listing the methods it does; unknown paths are `404 not found`.\n\nConventions (docs/api.md): every operation has a unique `operationId` and a declared tag. Lists page alike: `?limit=` 1 to 100 and `?cursor=` from the previous page's `next_cursor` (`null` on the last page). Every `201` has a `Location` header (a bulk create's: the monitors' list). A query parameter an operation does not take is `400 invalid query parameters` naming it; heartbeat pings and the verification link ignore query strings instead."),
    // The common answers (`shared::add_common_responses`) refer to it; every
    // other schema comes with the operations that name it.
    components(schemas(crate::error::ErrorBody)),
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
        (name = "organisation", description = "The key's organisation: what it holds, its name, and deleting it with everything of it."),
        (name = "members", description = "Who belongs to the organisation and with which role (owner, admin, editor, viewer): members, role changes, removal and leaving, and invitations by email."),
        (name = "status-pages", description = "Public status pages of chosen monitors (names and states only), in groups, on the service's domain or a custom one, public or behind an access token; the page's email subscribers (visitors subscribe on the page, double opt-in; each notice and update mails the confirmed ones once); and badge tokens, the unguessable names of monitors in their badge URLs."),
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

/// A region's name (`uptime_contracts::regions::is_valid_region`).
pub const REGION_PATTERN: &str = "^[a-z0-9][a-z0-9-]{0,31}$";

/// The served document: the annotations plus what every operation shares.
pub fn document() -> &'static Value {
    static DOCUMENT: OnceLock<Value> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        let mut api = ApiDoc::openapi();
        routes::all().document(&mut api);
        let mut doc = serde_json::to_value(api).unwrap_or_else(|_| json!({}));
        crate::authz::require_keys(&mut doc);
        shared::distinct_operation_ids(&mut doc);
        shared::add_locations(&mut doc);
        examples::add(&mut doc);
        shared::add_common_responses(&mut doc);
        shared::add_patterns(&mut doc);
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

    /// Every `{ref}` path parameter and every `ref` property of a request
    /// states the one syntax of `crate::refs` (the annotations of the
    /// bodies repeat it as a literal: utoipa takes no constant there).
    #[test]
    fn every_ref_has_the_one_pattern() {
        let doc = super::document();
        let mut seen = 0;
        for item in doc["paths"].as_object().expect("paths").values() {
            for operation in item.as_object().expect("a path item").values() {
                for parameter in operation["parameters"].as_array().into_iter().flatten() {
                    if parameter["name"] == "ref" {
                        assert_eq!(parameter["schema"]["pattern"], crate::refs::REF_PATTERN);
                        seen += 1;
                    }
                }
            }
        }
        // Request bodies; responses state no pattern.
        for (name, schema) in doc["components"]["schemas"].as_object().expect("schemas") {
            let Some(r#ref) = schema["properties"].get("ref") else {
                continue;
            };
            if name.starts_with("Create") || name.starts_with("Update") || name == "ResourceInput" {
                assert_eq!(r#ref["pattern"], crate::refs::REF_PATTERN, "{name}");
                seen += 1;
            }
        }
        assert!(seen >= 15 + 11, "{seen} refs found");
    }
}
