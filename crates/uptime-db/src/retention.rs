//! Retention: the batched deletes that keep every table but `check_results`
//! bounded (its partitions are dropped whole, elsewhere), and the advisory
//! lock that lets one replica at a time run them.
//!
//! Every function removes at most `limit` rows past a cutoff the caller
//! computes (so tests inject the clock) and returns how many it removed; the
//! caller loops until a batch comes back short. Each statement is its own
//! short transaction over rows found through an index of migration 000009,
//! so a batch never scans a table and never holds locks for long. The rows a
//! batch found are handed to its DELETE as an array (`= ANY (ARRAY(...))`),
//! which the planner answers with key lookups: an `IN (subquery)` may be
//! planned as a hash join over the whole table. Every
//! condition is checked again on the row being changed, so a row that a
//! concurrent writer moved out of reach in between is left alone.

use crate::DbResult;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::sql_types::{BigInt, Bool, Date, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The key of the session advisory lock held while a retention round runs
/// (ASCII "uptReten", recognisable in `pg_locks`; the scheduler's is
/// "uptSched").
pub const RETENTION_LOCK: i64 = 0x7570_7452_6574_656e;

/// Deletes up to `limit` rows of `table` that `doomed` picks (an SQL
/// predicate on the table, the cutoff `before` bound as `$1`), their ids
/// handed to the DELETE as an array; `recheck`, a predicate checked again
/// on each row deleted (a row whose condition a concurrent writer can
/// undo). How many went. The statement of every retention delete by id.
pub(crate) async fn delete_batch(
    conn: &mut AsyncPgConnection,
    table: &str,
    doomed: &str,
    recheck: Option<&str>,
    before: DateTime<Utc>,
    limit: i64,
) -> DbResult<u64> {
    let recheck = recheck.map(|r| format!(" AND {r}")).unwrap_or_default();
    let n = diesel::sql_query(format!(
        "DELETE FROM {table} \
          WHERE id = ANY (ARRAY(SELECT id FROM {table} WHERE {doomed} LIMIT $2)){recheck}"
    ))
    .bind::<Timestamptz, _>(before)
    .bind::<BigInt, _>(limit)
    .execute(conn)
    .await?;
    Ok(n as u64)
}

/// A retention delete as its module offers it: `pub fn NAME(BEFORE)`, which
/// deletes up to `limit` rows of `$table` that `$doomed` picks (see
/// [`delete_batch`]; `recheck` names the predicate checked again).
macro_rules! delete_batch_fn {
    ($(#[$doc:meta])* pub fn $name:ident($before:ident): $table:literal where $doomed:literal
     $(, recheck $recheck:literal)?) => {
        $(#[$doc])*
        pub async fn $name(
            conn: &mut diesel_async::AsyncPgConnection,
            $before: chrono::DateTime<chrono::Utc>,
            limit: i64,
        ) -> $crate::DbResult<u64> {
            let recheck: Option<&str> = None $(.or(Some($recheck)))?;
            $crate::retention::delete_batch(conn, $table, $doomed, recheck, $before, limit).await
        }
    };
}
pub(crate) use delete_batch_fn;

#[derive(QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    ok: bool,
}

/// Takes the retention lock for the session of `conn` without waiting;
/// `false` when another session holds it. The lock lives until
/// [`unlock_round`] or the end of the session, so `conn` must never go back
/// to a pool while it holds it.
pub async fn try_lock_round(conn: &mut AsyncPgConnection) -> DbResult<bool> {
    let row: Flag = diesel::sql_query("SELECT pg_try_advisory_lock($1) AS ok")
        .bind::<BigInt, _>(RETENTION_LOCK)
        .get_result(conn)
        .await?;
    Ok(row.ok)
}

/// Gives the retention lock up; `false` when this session did not hold it.
pub async fn unlock_round(conn: &mut AsyncPgConnection) -> DbResult<bool> {
    let row: Flag = diesel::sql_query("SELECT pg_advisory_unlock($1) AS ok")
        .bind::<BigInt, _>(RETENTION_LOCK)
        .get_result(conn)
        .await?;
    Ok(row.ok)
}

#[derive(QueryableByName)]
struct DeliveriesCount {
    #[diesel(sql_type = BigInt)]
    deliveries: i64,
    #[diesel(sql_type = BigInt)]
    attempts: i64,
}

/// What one batch of [`delete_settled_deliveries`] removed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeliveriesRemoved {
    pub deliveries: u64,
    pub attempts: u64,
}

/// Deletes up to `limit` delivered or failed deliveries created before
/// `created_before`, with their attempts. Pending deliveries are never
/// touched, however old. The attempts are deleted in the same statement
/// (so they can be counted; the cascade then finds none). A delivery a
/// notifier has locked right now is skipped, and picked up by a later batch.
pub async fn delete_settled_deliveries(
    conn: &mut AsyncPgConnection,
    created_before: DateTime<Utc>,
    limit: i64,
) -> DbResult<DeliveriesRemoved> {
    // The status predicate is the one of alert_deliveries_settled_created_idx,
    // word for word. FOR UPDATE checks it again on the current row version.
    let row: DeliveriesCount = diesel::sql_query(
        "WITH doomed AS (
             SELECT id FROM alert_deliveries
              WHERE status IN ('delivered', 'failed') AND created_at < $1
              LIMIT $2
                FOR UPDATE SKIP LOCKED
         ), attempts AS (
             DELETE FROM alert_delivery_attempts
              WHERE delivery_id = ANY (ARRAY(SELECT id FROM doomed))
             RETURNING 1
         ), deliveries AS (
             DELETE FROM alert_deliveries
              WHERE id = ANY (ARRAY(SELECT id FROM doomed))
             RETURNING 1
         )
         SELECT (SELECT count(*) FROM deliveries) AS deliveries,
                (SELECT count(*) FROM attempts) AS attempts",
    )
    .bind::<Timestamptz, _>(created_before)
    .bind::<BigInt, _>(limit)
    .get_result(conn)
    .await?;
    Ok(DeliveriesRemoved {
        deliveries: row.deliveries as u64,
        attempts: row.attempts as u64,
    })
}

delete_batch_fn! {
    /// Deletes up to `limit` outbox rows published before `published_before`.
    /// Unpublished rows (the relay's work) are never touched. Returns how many.
    pub fn delete_published_outbox(published_before): "outbox_events"
        where "published_at IS NOT NULL AND published_at < $1",
    recheck "published_at < $1"
}

/// Clears up to `limit` email verification tokens issued before
/// `issued_before`: their links stop working, and the contact stays (still
/// unverified, a new link can be asked for). Issuing a token sets the
/// contact's `updated_at`, so a token whose contact was last updated before
/// the cutoff is older than it; a token issued again meanwhile moved
/// `updated_at` and is kept. Returns how many tokens were cleared.
pub async fn clear_expired_verification_tokens(
    conn: &mut AsyncPgConnection,
    issued_before: DateTime<Utc>,
    limit: i64,
) -> DbResult<u64> {
    let n = diesel::sql_query(
        "UPDATE alert_contacts SET verification_token_sha256 = NULL
          WHERE id = ANY (ARRAY(SELECT id FROM alert_contacts
                                 WHERE verification_token_sha256 IS NOT NULL AND updated_at < $1
                                 LIMIT $2))
            AND verification_token_sha256 IS NOT NULL AND updated_at < $1",
    )
    .bind::<Timestamptz, _>(issued_before)
    .bind::<BigInt, _>(limit)
    .execute(conn)
    .await?;
    Ok(n as u64)
}

/// Deletes up to `limit` daily uptime rows of days before `before_day`.
/// Returns how many.
pub async fn delete_daily_uptime(
    conn: &mut AsyncPgConnection,
    before_day: NaiveDate,
    limit: i64,
) -> DbResult<u64> {
    // By ctid: the table's key is (monitor_id, day), and a tid list is the
    // cheapest way back to the rows the subquery found through daily_uptime_day_idx.
    let n = diesel::sql_query(
        "DELETE FROM daily_uptime
          WHERE ctid = ANY (ARRAY(SELECT ctid FROM daily_uptime WHERE day < $1 LIMIT $2))
            AND day < $1",
    )
    .bind::<Date, _>(before_day)
    .bind::<BigInt, _>(limit)
    .execute(conn)
    .await?;
    Ok(n as u64)
}

delete_batch_fn! {
    /// Deletes up to `limit` API keys revoked before `revoked_before`. A revoked
    /// key authenticates nothing and is listed nowhere; only a user who mints
    /// and revokes keys forever would make them pile up. Returns how many.
    pub fn delete_revoked_api_keys(revoked_before): "api_keys"
        where "revoked_at IS NOT NULL AND revoked_at < $1",
    recheck "revoked_at < $1"
}
