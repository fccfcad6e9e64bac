//! The PostgreSQL store: schema, migrations, the connection pool and the
//! queries services run. Services never write SQL of their own; they call the
//! functions of the modules below, one module per table family.
//!
//! The ground every module stands on:
//! - [`schema`]: Diesel's table definitions, matching `migrations/`;
//!   [`models`]: rows as Rust structs; [`pool`]: the connection pool and
//!   the migrations run at start.
//! - [`reach`]: which monitors a caller reaches, the one rule every query of
//!   a monitor's things applies; [`refs`]: the caller-chosen stable names of
//!   resources.
//! - `owned_rows`: the by-id and keyset-page statements of rows that belong
//!   to an organisation or a page, written once for every such table.
//!
//! Tenants and access:
//! - [`organisations`]: organisations and the memberships that tie users to
//!   them; [`users`]: users; [`members`]: an organisation's members listed,
//!   re-roled and removed; [`api_keys`]: keys that act for a member.
//! - [`invitations`]: invitations to join an organisation (only a token's
//!   digest is stored); [`invitation_resends`]: a fresh token for an open
//!   invitation, within limits, since it mails an unconfirmed address.
//! - [`quotas`]: per-organisation quotas and the counts held against them
//!   (locked, so concurrent creates cannot pass a limit together).
//! - [`idempotency`]: the first response to an `Idempotency-Key`, replayed.
//! - [`audit_log`]: one entry per API write, written in the change's own
//!   transaction.
//!
//! Monitors and what they produce:
//! - [`monitors`]: monitors and their alert-contact links, as the API reads
//!   and writes them; [`schedule`]: what the scheduler reads;
//!   [`manual_checks`]: the one on-demand check a monitor may have in flight.
//! - [`monitor_decisions`]: the narrow monitor row the recorder reads and
//!   locks for its decisions (only the columns they need).
//! - [`recording`]: the recorder's writes of a batch of check results;
//!   [`results`]: reading results and the daily rollup; [`rounds`] and
//!   [`rounds_read`]: rounds of several regions, written and read.
//! - [`incidents`]: every confirmed down period; [`alerting`]: the rows
//!   behind reminders, dependencies and flapping.
//! - [`tenant_metrics`]: an organisation's metrics endpoint, in one statement.
//!
//! Alerts:
//! - [`contacts`]: alert contacts; [`contacts_sealing`]: their provider
//!   credentials kept sealed with the current key.
//! - [`deliveries`]: the notifier's durable queue of alert deliveries and
//!   their attempts; [`verification_limits`]: how often verification emails
//!   may go to an address nobody has confirmed.
//! - [`escalation_policies`]: ordered steps of contacts; [`escalations`]:
//!   where each incident's escalation stands.
//! - [`maintenance`]: maintenance windows, and the sweep that holds alerts
//!   while they are open.
//!
//! Status pages:
//! - [`status_pages`]: pages and badge tokens; [`status_notices`]: their
//!   notices; [`status_snapshot`]: what the status-pages service reads per
//!   refresh, in a fixed set of statements.
//! - [`status_subscriptions`]: email subscribers (double opt-in);
//!   [`status_page_mails`]: the outbox of mails to them.
//!
//! - [`retention`]: the batched deletes that keep tables bounded, and the lock
//!   that lets one replica run them.

pub mod alerting;
pub mod api_keys;
pub mod audit_log;
pub mod contacts;
pub mod contacts_sealing;
pub mod deliveries;
pub mod escalation_policies;
pub mod escalations;
pub mod idempotency;
pub mod incidents;
pub mod invitation_resends;
pub mod invitations;
pub mod maintenance;
pub mod manual_checks;
pub mod members;
pub mod models;
pub mod monitor_decisions;
pub mod monitors;
pub mod organisations;
pub(crate) mod owned_rows;
pub mod pool;
pub mod quotas;
pub mod reach;
pub mod recording;
pub mod refs;
pub mod results;
pub mod retention;
pub mod rounds;
pub mod rounds_read;
pub mod schedule;
pub mod schema;
pub mod status_notices;
pub mod status_page_mails;
pub mod status_pages;
pub mod status_snapshot;
pub mod status_subscriptions;
pub mod tenant_metrics;
pub mod users;
pub mod verification_limits;

pub use pool::{connect, migrate, Pool, PooledConn};

/// Errors of the store.
#[derive(Debug, thiserror::Error)]
pub enum DbError {
    #[error("database query failed: {0}")]
    Query(#[from] diesel::result::Error),
    #[error("no database connection available: {0}")]
    Pool(String),
    /// Every pooled connection stayed busy (or none could be opened) for the
    /// whole `pool_wait_timeout_ms`.
    #[error("timed out waiting for a database connection ({0})")]
    PoolTimeout(String),
    #[error("migration failed: {0}")]
    Migration(String),
}

impl DbError {
    /// Whether retrying later may succeed (lost connection, pool exhausted,
    /// serialisation failure), as opposed to a query that can never succeed.
    pub fn is_transient(&self) -> bool {
        use diesel::result::{DatabaseErrorKind, Error};
        match self {
            DbError::Pool(_) | DbError::PoolTimeout(_) => true,
            DbError::Query(Error::DatabaseError(kind, _)) => matches!(
                kind,
                DatabaseErrorKind::SerializationFailure
                    | DatabaseErrorKind::ClosedConnection
                    | DatabaseErrorKind::UnableToSendCommand
            ),
            DbError::Query(Error::BrokenTransactionManager) => true,
            _ => false,
        }
    }
}

pub type DbResult<T> = Result<T, DbError>;

/// `text` as a `LIKE` pattern that matches only itself: PostgreSQL's
/// default escape character (a backslash) before backslashes, `%` and `_`.
pub fn like_literal(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('%', "\\%")
        .replace('_', "\\_")
}

/// The collation search compares names under: ICU's root locale, whose
/// `lower()` knows every script. The database's own collation may be `C`
/// (`initdb --no-locale`), whose `lower()` (and so `ILIKE`) folds ASCII
/// only, so `überwachung` would not find "Überwachung". Its presence is
/// checked by migration `2026-12-02-000352_unicode_case_search`.
pub const SEARCH_COLLATION: &str = "\"und-x-icu\"";

/// `column` (a qualified column name of the query's table) contains `part`
/// in any case, in any script: both sides lowered under
/// [`SEARCH_COLLATION`], `part` taken literally ([`like_literal`]).
pub fn contains_ignoring_case<QS: 'static>(
    column: &'static str,
    part: &str,
) -> Box<dyn diesel::BoxableExpression<QS, diesel::pg::Pg, SqlType = diesel::sql_types::Bool>> {
    Box::new(
        diesel::dsl::sql::<diesel::sql_types::Bool>(&format!(
            "lower({column} COLLATE {SEARCH_COLLATION}) LIKE lower("
        ))
        .bind::<diesel::sql_types::Text, _>(format!("%{}%", like_literal(part)))
        .sql(&format!(" COLLATE {SEARCH_COLLATION})")),
    )
}
