//! What the recorder's maintenance sweep runs, in one transaction per round:
//! take the round's lock ([`try_lock`]), read the windows that may be open
//! ([`windows_to_expand`]) and the open spans ([`open_spans`]), open and
//! close spans ([`upsert_spans`], [`close_spans`]), mark the monitors the
//! open spans cover ([`refresh_markers`], set-based, in monitor id order),
//! and read what a release needs ([`open_incidents_of`], [`latest_result`]).

use super::MaintenanceWindow;
use crate::incidents::Incident;
use crate::models::CheckResult;
use crate::schema::{check_results, incidents, maintenance_spans, maintenance_windows};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Bool, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// The key of the transaction advisory lock that makes one recorder replica
/// run a sweep round at a time (ASCII "uptMaint").
pub const SWEEP_LOCK: i64 = 0x7570_744d_6169_6e74;

/// An occurrence the sweep opened.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = maintenance_spans)]
pub struct SpanRow {
    pub id: i64,
    pub window_id: Option<i64>,
    pub org_id: i64,
    pub effect: String,
    pub monitor_ids: Vec<i64>,
    pub label_selector: Option<serde_json::Value>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    pub closed_at: Option<DateTime<Utc>>,
}

/// An occurrence open now, as its window defines it.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenSpan {
    pub window_id: i64,
    pub org_id: i64,
    pub effect: String,
    pub monitor_ids: Vec<i64>,
    pub label_selector: Option<serde_json::Value>,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = Bool)]
    locked: bool,
}

/// Takes the sweep's lock for the rest of the transaction, without waiting;
/// `false`: another replica is sweeping.
pub async fn try_lock(conn: &mut AsyncPgConnection) -> DbResult<bool> {
    let row: Locked = diesel::sql_query("SELECT pg_try_advisory_xact_lock($1) AS locked")
        .bind::<BigInt, _>(SWEEP_LOCK)
        .get_result(conn)
        .await?;
    Ok(row.locked)
}

/// Every window that may still open at or after `now`.
pub async fn windows_to_expand(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
) -> DbResult<Vec<MaintenanceWindow>> {
    Ok(maintenance_windows::table
        .filter(
            maintenance_windows::last_ends_at
                .is_null()
                .or(maintenance_windows::last_ends_at.gt(now)),
        )
        .order(maintenance_windows::id.asc())
        .select(MaintenanceWindow::as_select())
        .load(conn)
        .await?)
}

/// The spans not closed yet.
pub async fn open_spans(conn: &mut AsyncPgConnection) -> DbResult<Vec<SpanRow>> {
    Ok(maintenance_spans::table
        .filter(maintenance_spans::closed_at.is_null())
        .order(maintenance_spans::id.asc())
        .select(SpanRow::as_select())
        .load(conn)
        .await?)
}

/// Opens `spans`, or brings an open one of the same occurrence up to its
/// window's definition now (an edit while it is open). A closed occurrence
/// stays closed.
pub async fn upsert_spans(conn: &mut AsyncPgConnection, spans: &[OpenSpan]) -> DbResult<()> {
    for s in spans {
        diesel::sql_query(
            "INSERT INTO maintenance_spans
                 (window_id, org_id, effect, monitor_ids, label_selector, starts_at, ends_at)
             VALUES ($1, $2, $3, $4, $5, $6, $7)
             ON CONFLICT (window_id, starts_at) DO UPDATE SET
                 effect = EXCLUDED.effect, monitor_ids = EXCLUDED.monitor_ids,
                 label_selector = EXCLUDED.label_selector, ends_at = EXCLUDED.ends_at
             WHERE maintenance_spans.closed_at IS NULL
               AND (maintenance_spans.effect, maintenance_spans.monitor_ids,
                    maintenance_spans.label_selector, maintenance_spans.ends_at)
                   IS DISTINCT FROM
                   (EXCLUDED.effect, EXCLUDED.monitor_ids,
                    EXCLUDED.label_selector, EXCLUDED.ends_at)",
        )
        .bind::<BigInt, _>(s.window_id)
        .bind::<BigInt, _>(s.org_id)
        .bind::<Text, _>(&s.effect)
        .bind::<Array<BigInt>, _>(&s.monitor_ids)
        .bind::<Nullable<Jsonb>, _>(&s.label_selector)
        .bind::<Timestamptz, _>(s.starts_at)
        .bind::<Timestamptz, _>(s.ends_at)
        .execute(conn)
        .await?;
    }
    Ok(())
}

/// Closes spans `ids` at `now` (a span closed before its planned end, by an
/// edit or a deletion, ends at `now`).
pub async fn close_spans(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
    now: DateTime<Utc>,
) -> DbResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    diesel::sql_query(
        "UPDATE maintenance_spans SET closed_at = $2, ends_at = least(ends_at, $2)
          WHERE id = ANY ($1) AND closed_at IS NULL",
    )
    .bind::<Array<BigInt>, _>(ids)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await?;
    Ok(())
}

/// A monitor whose marker a sweep round changed.
#[derive(Debug, Clone, PartialEq, Eq, QueryableByName)]
pub struct MarkerChange {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    /// Its status after the lock (the latest committed).
    #[diesel(sql_type = Text)]
    pub status: String,
    /// The marker was removed: no open span covers it any more.
    #[diesel(sql_type = Bool)]
    pub cleared: bool,
}

/// Marks every monitor an open span covers (by id, or by labels holding
/// the span's selector, evaluated now: a monitor created after the window
/// opened joins here) and clears the marker of every other; only rows whose
/// marker changes are written, locked in id order (as the recorder's
/// batches lock them) so the two queue instead of deadlocking. A `pause`
/// wins over a `silence`; the marker's start is the earliest covering span's.
pub async fn refresh_markers(conn: &mut AsyncPgConnection) -> DbResult<Vec<MarkerChange>> {
    let query = format!(
        "WITH {desired}, candidates AS (
             SELECT id FROM desired
             UNION
             SELECT id FROM monitors WHERE maintenance_effect IS NOT NULL
         ), changed AS (
             SELECT m.id, d.effect, d.since, d.until
               FROM monitors m
               JOIN candidates c ON c.id = m.id
               LEFT JOIN desired d ON d.id = m.id
              WHERE (m.maintenance_effect, m.maintenance_since, m.maintenance_until)
                    IS DISTINCT FROM (d.effect, d.since, d.until)
              ORDER BY m.id
              FOR UPDATE OF m
         )
         UPDATE monitors m
            SET maintenance_effect = c.effect,
                maintenance_since = c.since,
                maintenance_until = c.until
           FROM changed c
          WHERE m.id = c.id
         RETURNING m.id AS monitor_id, m.status, (c.effect IS NULL) AS cleared",
        desired = super::markers::desired_markers_cte("TRUE"),
    );
    Ok(diesel::sql_query(query).load(conn).await?)
}

/// The open incidents of `monitor_ids`.
pub async fn open_incidents_of(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
) -> DbResult<Vec<Incident>> {
    if monitor_ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(incidents::table
        .filter(incidents::monitor_id.eq_any(monitor_ids))
        .filter(incidents::resolved_at.is_null())
        .select(Incident::as_select())
        .load(conn)
        .await?)
}

/// The newest stored result of `monitor_id` (the check a released alert
/// reports).
pub async fn latest_result(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
) -> DbResult<Option<CheckResult>> {
    Ok(check_results::table
        .filter(check_results::monitor_id.eq(monitor_id))
        .order((check_results::slot_at.desc(), check_results::id.desc()))
        .select(CheckResult::as_select())
        .first(conn)
        .await
        .optional()?)
}
