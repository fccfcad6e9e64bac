//! The partitions of `check_results` (migration 000008): one per UTC day of
//! `slot_at`, named `check_results_pYYYYMMDD`, and `check_results_default`,
//! which takes any result no day partition covers so that an accepted result
//! is never refused. `uptime-retention` decides which days to create and drop;
//! these are the statements it runs.
//!
//! Every change of the partition layout is one short transaction that waits
//! at most [`DDL_LOCK_TIMEOUT`] for its locks: a long query on `check_results`
//! then delays a maintenance step (retried on the next round) instead of
//! queueing every writer behind the step for as long as that query runs.

use crate::DbResult;
use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use diesel::sql_types::{BigInt, Date, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};

/// The partitioned table.
pub const PARENT: &str = "check_results";
/// The partition for results no day partition covers.
pub const DEFAULT_PARTITION: &str = "check_results_default";
/// The longest a layout change waits for a lock before it gives up.
pub const DDL_LOCK_TIMEOUT: &str = "1s";

const DAY_PREFIX: &str = "check_results_p";

/// The name of the partition of `day`.
pub fn partition_name(day: NaiveDate) -> String {
    format!("{DAY_PREFIX}{}", day.format("%Y%m%d"))
}

/// The day of a partition named by [`partition_name`]; `None` for any other
/// name (the default partition, or a table someone attached by hand, which
/// maintenance leaves alone).
pub fn day_of(name: &str) -> Option<NaiveDate> {
    let digits = name.strip_prefix(DAY_PREFIX)?;
    if digits.len() != 8 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    NaiveDate::parse_from_str(digits, "%Y%m%d").ok()
}

/// The first instant of `day` (UTC): the lower bound of its partition.
pub fn start_of(day: NaiveDate) -> DateTime<Utc> {
    day.and_time(NaiveTime::MIN).and_utc()
}

#[derive(QueryableByName)]
struct Name {
    #[diesel(sql_type = Text)]
    name: String,
}

#[derive(QueryableByName)]
struct Day {
    #[diesel(sql_type = Date)]
    day: NaiveDate,
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// The partitions of `check_results` as they are now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Layout {
    /// The days that have a partition, oldest first.
    pub days: Vec<NaiveDate>,
    /// Whether `check_results_default` is attached.
    pub has_default: bool,
}

/// Reads the partitions attached to `check_results`.
pub async fn layout(conn: &mut AsyncPgConnection) -> DbResult<Layout> {
    let names: Vec<Name> = diesel::sql_query(
        "SELECT c.relname::text AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid \
         WHERE i.inhparent = 'check_results'::regclass",
    )
    .load(conn)
    .await?;
    let mut days: Vec<NaiveDate> = names.iter().filter_map(|n| day_of(&n.name)).collect();
    days.sort_unstable();
    Ok(Layout {
        days,
        has_default: names.iter().any(|n| n.name == DEFAULT_PARTITION),
    })
}

/// The UTC days of the results in the default partition, oldest first. It
/// holds none while maintenance keeps partitions ahead of time.
pub async fn days_in_default(conn: &mut AsyncPgConnection) -> DbResult<Vec<NaiveDate>> {
    let days: Vec<Day> = diesel::sql_query(
        "SELECT DISTINCT (slot_at AT TIME ZONE 'UTC')::date AS day FROM check_results_default \
         ORDER BY 1",
    )
    .load(conn)
    .await?;
    Ok(days.into_iter().map(|d| d.day).collect())
}

/// Rows in the default partition, counted up to `cap` (a number to watch,
/// not to scan a big table for).
pub async fn rows_in_default(conn: &mut AsyncPgConnection, cap: i64) -> DbResult<i64> {
    let count: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM (SELECT 1 FROM check_results_default LIMIT $1) AS r",
    )
    .bind::<BigInt, _>(cap)
    .get_result(conn)
    .await?;
    Ok(count.n)
}

/// Deletes the results in the default partition from before `before` (past
/// retention: their day partition is gone or never existed). Returns how
/// many went.
pub async fn expire_from_default(
    conn: &mut AsyncPgConnection,
    before: DateTime<Utc>,
) -> DbResult<u64> {
    let n = diesel::sql_query("DELETE FROM check_results_default WHERE slot_at < $1")
        .bind::<Timestamptz, _>(before)
        .execute(conn)
        .await?;
    Ok(n as u64)
}

/// Creates the partition of `day` and moves into it the results of that day
/// waiting in the default partition. Returns how many moved.
///
/// The partition is made as a plain table and attached, rather than with
/// `CREATE TABLE ... PARTITION OF`: attaching locks `check_results` only in
/// SHARE UPDATE EXCLUSIVE mode, so the recorder keeps inserting while it
/// runs. The default partition is locked for the few milliseconds it takes
/// (PostgreSQL must check that none of its rows belong to the new range; the
/// lock also keeps a result of that day from arriving there in between).
pub async fn create_partition(
    conn: &mut AsyncPgConnection,
    day: NaiveDate,
    has_default: bool,
) -> DbResult<u64> {
    let name = partition_name(day);
    let from = start_of(day);
    let to = start_of(day.succ_opt().unwrap_or(day));
    conn.transaction(|conn| {
        async move {
            set_lock_timeout(conn).await?;
            if has_default {
                diesel::sql_query(format!(
                    "LOCK TABLE {DEFAULT_PARTITION} IN ACCESS EXCLUSIVE MODE"
                ))
                .execute(conn)
                .await?;
            }
            diesel::sql_query(format!(
                "CREATE TABLE \"{name}\" (LIKE {PARENT} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
            ))
            .execute(conn)
            .await?;
            let moved = if has_default {
                diesel::sql_query(format!(
                    "WITH moved AS (DELETE FROM {DEFAULT_PARTITION} \
                         WHERE slot_at >= $1 AND slot_at < $2 RETURNING *) \
                     INSERT INTO \"{name}\" SELECT * FROM moved"
                ))
                .bind::<Timestamptz, _>(from)
                .bind::<Timestamptz, _>(to)
                .execute(conn)
                .await?
            } else {
                0
            };
            diesel::sql_query(format!(
                "ALTER TABLE {PARENT} ATTACH PARTITION \"{name}\" FOR VALUES FROM ('{}') TO ('{}')",
                from.format("%Y-%m-%d %H:%M:%S+00"),
                to.format("%Y-%m-%d %H:%M:%S+00"),
            ))
            .execute(conn)
            .await?;
            Ok(moved as u64)
        }
        .scope_boxed()
    })
    .await
}

/// Drops the partition of `day` with its results: the purge. Returns whether
/// it existed.
///
/// Dropping a partition locks `check_results` (and the default partition) in
/// ACCESS EXCLUSIVE mode for the moment it takes to unlink the files.
/// `DETACH PARTITION ... CONCURRENTLY` would avoid that, but PostgreSQL does
/// not allow it while a default partition exists (docs/architecture.md,
/// Retention, says why the default partition is worth it).
pub async fn drop_partition(conn: &mut AsyncPgConnection, day: NaiveDate) -> DbResult<bool> {
    let name = partition_name(day);
    conn.transaction(|conn| {
        async move {
            set_lock_timeout(conn).await?;
            let attached: Vec<Name> = diesel::sql_query(
                "SELECT c.relname::text AS name FROM pg_inherits i \
                 JOIN pg_class c ON c.oid = i.inhrelid \
                 WHERE i.inhparent = 'check_results'::regclass AND c.relname = $1",
            )
            .bind::<Text, _>(&name)
            .load(conn)
            .await?;
            if attached.is_empty() {
                return Ok(false);
            }
            diesel::sql_query(format!("DROP TABLE \"{name}\""))
                .execute(conn)
                .await?;
            Ok(true)
        }
        .scope_boxed()
    })
    .await
}

async fn set_lock_timeout(conn: &mut AsyncPgConnection) -> DbResult<()> {
    diesel::sql_query(format!("SET LOCAL lock_timeout = '{DDL_LOCK_TIMEOUT}'"))
        .execute(conn)
        .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_days_round_trip() {
        let day = NaiveDate::from_ymd_opt(2026, 3, 7).unwrap();
        assert_eq!(partition_name(day), "check_results_p20260307");
        assert_eq!(day_of("check_results_p20260307"), Some(day));
        for other in [
            "check_results_default",
            "check_results_p2026030",
            "check_results_p202603071",
            "check_results_p2026-3-7",
            "check_results_p20260230",
            "other_p20260307",
        ] {
            assert_eq!(day_of(other), None, "{other}");
        }
        assert_eq!(start_of(day).to_rfc3339(), "2026-03-07T00:00:00+00:00");
    }
}
