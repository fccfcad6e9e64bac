//! The PostgreSQL store: schema, migrations, the connection pool and the
//! queries services run. Services never write SQL of their own; they call the
//! functions of the modules below, one module per table family.

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
