//! `/api/v1/monitors`: create, list, read, update (including pause and
//! resume through `active`) and delete the caller's monitors.
//!
//! Decisions the contract leaves open, made here:
//! - `target` of a heartbeat monitor is optional and only a label (1 to 2048
//!   characters, any text): nothing ever connects to it. http and keyword
//!   targets must be absolute `http://`/`https://` URLs without credentials
//!   (a password in the URL would be shown back and sent along in alerts);
//!   literal loopback/private/link-local/metadata hosts are refused unless the
//!   deployment allows private targets.
//! - `keyword` and `keyword_type` belong to keyword monitors only: a value on
//!   another type is a 400; on other types both read back as `null`.
//! - When `timeout_secs` is not given and the default (30) exceeds
//!   `interval_secs`, the timeout becomes the interval. Likewise a PATCH that
//!   lowers `interval_secs` below the stored timeout without giving
//!   `timeout_secs` lowers the timeout with it. An explicit timeout above the
//!   interval is a 400.
//! - A PATCH is merged into the stored monitor and the result validated as a
//!   whole: switching to `keyword` needs a keyword; switching away from
//!   `keyword` drops the keyword; switching to `heartbeat` generates a token,
//!   away from it removes the token; `null` clears `target`, `keyword`,
//!   `keyword_type` (back to `contains` on keyword monitors) and
//!   `latency_warn_ms`, and is a 400 on every other field.
//! - Runtime state (status, failure streak, certificate expiry, last
//!   heartbeat) is kept across edits, pausing and resuming, except when what
//!   is watched changes (the type, or the target of an http/keyword monitor):
//!   then the monitor starts again as `pending`.
//!
//! - Issue 12 (docs/architecture.md, "Monitor kinds and check options"):
//!   tcp, tls, dns and icmp targets are checked by type under the same
//!   address rule as http targets (`dns_server` too); the options (`method`,
//!   `headers`, `body`, `basic_auth`, `assertions`, `dns_*`,
//!   `tls_fingerprint_sha256`, `schedule`, `timezone`) are flat fields, each
//!   for some types only, shown with their defaults on those types and
//!   `null` on the others, stored without defaults (a NULL column for a
//!   monitor without options) and dropped when a PATCH changes the type.
//!   The basic-auth password is write-only (`password_set` in responses).
//! - Issue 13 ([`placement`]): `regions` (1 to 16 distinct known regions,
//!   stored sorted) and `quorum` (1 to the number of regions); `null` or
//!   absent stores NULL, the deployment's default regions and a majority,
//!   which responses show as their effective values. Heartbeats refuse both
//!   and show `null`; a monitor turned into a heartbeat drops them. Like
//!   every rule, the quorum is checked against the merged monitor, so a
//!   PATCH that leaves fewer regions than the stored quorum is a 400 on
//!   `quorum`.
//!
//! - Issue 22 ([`alert_rules`]): reminders, `depends_on` and flapping
//!   thresholds, off by default; `depends_on` names monitors of the same
//!   organisation, at most 10, without cycles (400 naming the field).
//!
//! The module is split by what a reader looks for: [`kinds`] has one
//! module per monitor kind owning its fields, rules, stored form and
//! response (adding an option to a kind touches that module), [`common`]
//! the fields every monitor has and [`placement`] its regions; [`types`]
//! assembles them into the request and response bodies (the OpenAPI
//! schemas) through [`fields`]; [`draft`] is the definition being validated
//! (defaults, PATCH merging, the order of the rules); [`resource`] makes
//! monitors a `crate::resource::Resource` (reads, deletes, `PUT` by ref
//! and an apply's monitors), [`handlers`] has the create, list and PATCH
//! endpoints and [`writes`] the writes behind them all, which check
//! [`contact_ids`] and [`labels::check_selector`] and, once committed,
//! [`announce`] the change to the scheduler; [`bulk`] creates
//! many monitors in one request, with [`batch`]'s multi-row insert (which
//! an apply's plain creates use too).

/// An API enum declared with `From` both ways to the contracts' enum of
/// the same variants (the API's carries the API's documentation; rows come
/// typed from uptime-db, so the conversions cannot fail):
/// `mirror! { #[derive(...)] pub enum Api = uptime_contracts::Enum { A, B } }`.
/// Alert contacts' type mirrors `uptime_alerts::Channel` so too.
macro_rules! mirror {
    ($(#[$m:meta])* pub enum $api:ident = $contract:path {
        $($(#[$vm:meta])* $v:ident),* $(,)?
    }) => {
        $(#[$m])*
        pub enum $api { $($(#[$vm])* $v),* }

        impl From<$contract> for $api {
            fn from(v: $contract) -> Self {
                use $contract as C;
                match v { $(C::$v => Self::$v),* }
            }
        }
        impl From<$api> for $contract {
            fn from(v: $api) -> Self {
                match v { $($api::$v => Self::$v),* }
            }
        }
    };
}
pub(crate) use mirror;

mod alert_rules;
mod announce;
mod batch;
mod bulk;
mod common;
mod contact_ids;
mod draft;
mod fields;
mod handlers;
mod kinds;
mod labels;
mod monitor_type;
mod placement;
mod reference;
mod replace;
mod resource;
mod types;
mod writes;

pub use draft::{
    DEFAULT_CONFIRMATION_COUNT, DEFAULT_EXPECTED_STATUS, DEFAULT_INTERVAL_SECS,
    DEFAULT_SSL_WARN_DAYS, DEFAULT_TIMEOUT_SECS,
};
// The handlers with the path items utoipa generates beside them, which
// `openapi.rs` names through this module.
pub use alert_rules::Floors;
pub(crate) use batch::{announce_all, insert_plain};
pub use bulk::*;
pub use common::MonitorStatus;
pub use handlers::*;
pub use kinds::keyword::KeywordType;
pub use monitor_type::MonitorType;
pub(crate) use resource::is_plain_create;
pub use resource::*;
pub use types::*;

/// The monitors' routes, their access and their operations (`crate::api::table`).
pub fn routes() -> crate::api::table::Routes {
    use crate::api::table::routes;
    routes![list: READ, create: WRITE]
        // Before `/monitors/{id}`, which would take `bulk` for an id.
        .then(routes![bulk_create: WRITE].shaped(|r| r.app_data(bulk::json_config())))
        .then(routes![
            get_monitor_by_ref: READ,
            put_by_ref: WRITE,
            delete_monitor_by_ref: WRITE,
            get: READ,
            update: WRITE,
            delete: WRITE,
        ])
}
