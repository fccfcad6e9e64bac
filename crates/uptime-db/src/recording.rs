//! The writes behind recording check results: results, monitor runtime state,
//! the daily rollup and the outbox of events. The recorder calls these inside
//! one transaction per batch; every write is a single set-based statement.

use crate::schema::{monitors, outbox_events};
use crate::DbResult;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Date, Integer, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// One result to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCheckResult {
    pub check_id: Uuid,
    pub monitor_id: i64,
    /// `scheduled`, `manual` or `heartbeat`.
    pub trigger: String,
    /// `up`, `degraded` or `down`.
    pub status: String,
    pub checked_at: DateTime<Utc>,
    pub due_at: Option<DateTime<Utc>>,
    pub latency_ms: Option<i32>,
    pub http_status: Option<i32>,
    pub error: Option<String>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub reporter: String,
    /// The definition the check was made for (`None`: a version-1 message).
    pub definition_version: Option<i64>,
}

impl NewCheckResult {
    /// The time the result's `check_id` fixes, which `check_results` is
    /// partitioned on: the due time for scheduled checks (the slot), manual
    /// checks (when requested) and missed heartbeats (the deadline); for a
    /// ping, which has none, the time it arrived (published once, with it).
    /// A redelivered or re-run check has the same one, so it meets its first
    /// copy in the same partition and `(check_id, slot_at)` keeps it single.
    pub fn slot_at(&self) -> DateTime<Utc> {
        self.due_at.unwrap_or(self.checked_at)
    }
}

/// A monitor's runtime state after a batch, written back in one statement.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorStateUpdate {
    pub id: i64,
    pub status: String,
    pub status_since: Option<DateTime<Utc>>,
    pub consecutive_failures: i32,
    pub last_checked_at: Option<DateTime<Utc>>,
    /// Only ever moves forward: the stored value is kept when it is later.
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub ssl_warned_for: Option<DateTime<Utc>>,
    /// Only ever moves forward, like `last_heartbeat_at`.
    pub heartbeat_counted_until: Option<DateTime<Utc>>,
    /// The newest applied result's latency; `None` keeps the stored one (a
    /// batch whose results carried none).
    pub last_latency_ms: Option<i32>,
}

/// Checks to add to one monitor's day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DailyIncrement {
    pub monitor_id: i64,
    pub day: NaiveDate,
    pub total_checks: i32,
    /// Checks that were `up` or `degraded`.
    pub up_checks: i32,
}

#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = outbox_events)]
pub struct NewOutboxEvent {
    pub id: Uuid,
    /// `None` for events about no monitor (audit entries).
    pub monitor_id: Option<i64>,
    pub subject: String,
    pub payload: serde_json::Value,
}

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = outbox_events)]
pub struct OutboxEvent {
    pub id: Uuid,
    pub monitor_id: Option<i64>,
    pub subject: String,
    pub payload: serde_json::Value,
    pub created_at: DateTime<Utc>,
    pub published_at: Option<DateTime<Utc>>,
}

#[derive(QueryableByName)]
struct InsertedCheck {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    check_id: Uuid,
}

/// Stores `results`, skipping every `check_id` already stored (a redelivered
/// or republished result, or a re-run check: same `check_id`, same
/// [`NewCheckResult::slot_at`]). Returns the `check_id`s that were new.
pub async fn insert_results(
    conn: &mut AsyncPgConnection,
    results: &[NewCheckResult],
) -> DbResult<Vec<Uuid>> {
    insert_placed_results(conn, results, &[]).await
}

/// Where a result was checked: its region and round (`None`: a result from
/// before regions, or a heartbeat).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultPlace {
    pub region: Option<String>,
    pub round_id: Option<Uuid>,
    /// Checked inside a maintenance window (`check_results.in_maintenance`).
    pub in_maintenance: bool,
}

/// [`insert_results`], with each result's region and round: `places[i]` is
/// `results[i]`'s (missing entries: NULL).
pub async fn insert_placed_results(
    conn: &mut AsyncPgConnection,
    results: &[NewCheckResult],
    places: &[ResultPlace],
) -> DbResult<Vec<Uuid>> {
    if results.is_empty() {
        return Ok(Vec::new());
    }
    let check_ids: Vec<Uuid> = results.iter().map(|r| r.check_id).collect();
    let monitor_ids: Vec<i64> = results.iter().map(|r| r.monitor_id).collect();
    let triggers: Vec<String> = results.iter().map(|r| r.trigger.clone()).collect();
    let statuses: Vec<String> = results.iter().map(|r| r.status.clone()).collect();
    let checked_at: Vec<DateTime<Utc>> = results.iter().map(|r| r.checked_at).collect();
    let due_at: Vec<Option<DateTime<Utc>>> = results.iter().map(|r| r.due_at).collect();
    let latency: Vec<Option<i32>> = results.iter().map(|r| r.latency_ms).collect();
    let http_status: Vec<Option<i32>> = results.iter().map(|r| r.http_status).collect();
    let errors: Vec<Option<String>> = results.iter().map(|r| r.error.clone()).collect();
    let ssl: Vec<Option<DateTime<Utc>>> = results.iter().map(|r| r.ssl_expires_at).collect();
    let reporters: Vec<String> = results.iter().map(|r| r.reporter.clone()).collect();
    let versions: Vec<Option<i64>> = results.iter().map(|r| r.definition_version).collect();
    let slots: Vec<DateTime<Utc>> = results.iter().map(NewCheckResult::slot_at).collect();
    let place = |i: usize| places.get(i);
    let regions: Vec<Option<String>> = (0..results.len())
        .map(|i| place(i).and_then(|p| p.region.clone()))
        .collect();
    let rounds: Vec<Option<Uuid>> = (0..results.len())
        .map(|i| place(i).and_then(|p| p.round_id))
        .collect();
    let in_maintenance: Vec<bool> = (0..results.len())
        .map(|i| place(i).is_some_and(|p| p.in_maintenance))
        .collect();

    let inserted: Vec<InsertedCheck> = diesel::sql_query(
        "INSERT INTO check_results (check_id, monitor_id, trigger, status, checked_at, due_at, \
             latency_ms, http_status, error, ssl_expires_at, reporter, definition_version, \
             slot_at, region, round_id, in_maintenance) \
         SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::text[], $4::text[], \
             $5::timestamptz[], $6::timestamptz[], $7::int[], $8::int[], $9::text[], \
             $10::timestamptz[], $11::text[], $12::bigint[], $13::timestamptz[], \
             $14::text[], $15::uuid[], $16::bool[]) \
         ON CONFLICT (check_id, slot_at) DO NOTHING \
         RETURNING check_id",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(check_ids)
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<Array<Text>, _>(triggers)
    .bind::<Array<Text>, _>(statuses)
    .bind::<Array<Timestamptz>, _>(checked_at)
    .bind::<Array<Nullable<Timestamptz>>, _>(due_at)
    .bind::<Array<Nullable<Integer>>, _>(latency)
    .bind::<Array<Nullable<Integer>>, _>(http_status)
    .bind::<Array<Nullable<Text>>, _>(errors)
    .bind::<Array<Nullable<Timestamptz>>, _>(ssl)
    .bind::<Array<Text>, _>(reporters)
    .bind::<Array<Nullable<BigInt>>, _>(versions)
    .bind::<Array<Timestamptz>, _>(slots)
    .bind::<Array<Nullable<Text>>, _>(regions)
    .bind::<Array<Nullable<diesel::sql_types::Uuid>>, _>(rounds)
    .bind::<Array<diesel::sql_types::Bool>, _>(in_maintenance)
    .load(conn)
    .await?;
    Ok(inserted.into_iter().map(|r| r.check_id).collect())
}

/// Writes the runtime state of locked monitors.
pub async fn update_monitor_states(
    conn: &mut AsyncPgConnection,
    updates: &[MonitorStateUpdate],
) -> DbResult<()> {
    if updates.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = updates.iter().map(|u| u.id).collect();
    let statuses: Vec<String> = updates.iter().map(|u| u.status.clone()).collect();
    let since: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.status_since).collect();
    let failures: Vec<i32> = updates.iter().map(|u| u.consecutive_failures).collect();
    let checked: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.last_checked_at).collect();
    let heartbeat: Vec<Option<DateTime<Utc>>> =
        updates.iter().map(|u| u.last_heartbeat_at).collect();
    let ssl: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.ssl_expires_at).collect();
    let warned: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.ssl_warned_for).collect();
    let counted: Vec<Option<DateTime<Utc>>> =
        updates.iter().map(|u| u.heartbeat_counted_until).collect();
    let latency: Vec<Option<i32>> = updates.iter().map(|u| u.last_latency_ms).collect();

    // GREATEST ignores NULLs: a heartbeat ping the api-gateway stored while this
    // batch was being decided is never moved back.
    diesel::sql_query(
        "UPDATE monitors AS m SET status = u.status, status_since = u.status_since, \
             consecutive_failures = u.consecutive_failures, last_checked_at = u.last_checked_at, \
             last_heartbeat_at = GREATEST(m.last_heartbeat_at, u.last_heartbeat_at), \
             ssl_expires_at = u.ssl_expires_at, ssl_warned_for = u.ssl_warned_for, \
             heartbeat_counted_until = GREATEST(m.heartbeat_counted_until, u.heartbeat_counted_until), \
             last_latency_ms = COALESCE(u.last_latency_ms, m.last_latency_ms) \
         FROM UNNEST($1::bigint[], $2::text[], $3::timestamptz[], $4::int[], \
             $5::timestamptz[], $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], \
             $9::timestamptz[], $10::int[]) \
             AS u(id, status, status_since, consecutive_failures, last_checked_at, \
                  last_heartbeat_at, ssl_expires_at, ssl_warned_for, heartbeat_counted_until, \
                  last_latency_ms) \
         WHERE m.id = u.id",
    )
    .bind::<Array<BigInt>, _>(ids)
    .bind::<Array<Text>, _>(statuses)
    .bind::<Array<Nullable<Timestamptz>>, _>(since)
    .bind::<Array<Integer>, _>(failures)
    .bind::<Array<Nullable<Timestamptz>>, _>(checked)
    .bind::<Array<Nullable<Timestamptz>>, _>(heartbeat)
    .bind::<Array<Nullable<Timestamptz>>, _>(ssl)
    .bind::<Array<Nullable<Timestamptz>>, _>(warned)
    .bind::<Array<Nullable<Timestamptz>>, _>(counted)
    .bind::<Array<Nullable<Integer>>, _>(latency)
    .execute(conn)
    .await?;
    Ok(())
}

/// Adds to the daily rollup. `increments` must hold each (monitor, day) at most
/// once: one statement cannot update the same row twice.
pub async fn add_daily_uptime(
    conn: &mut AsyncPgConnection,
    increments: &[DailyIncrement],
) -> DbResult<()> {
    if increments.is_empty() {
        return Ok(());
    }
    let monitor_ids: Vec<i64> = increments.iter().map(|i| i.monitor_id).collect();
    let days: Vec<NaiveDate> = increments.iter().map(|i| i.day).collect();
    let totals: Vec<i32> = increments.iter().map(|i| i.total_checks).collect();
    let ups: Vec<i32> = increments.iter().map(|i| i.up_checks).collect();
    diesel::sql_query(
        "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) \
         SELECT * FROM UNNEST($1::bigint[], $2::date[], $3::int[], $4::int[]) \
         ON CONFLICT (monitor_id, day) DO UPDATE SET \
             total_checks = daily_uptime.total_checks + EXCLUDED.total_checks, \
             up_checks = daily_uptime.up_checks + EXCLUDED.up_checks",
    )
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<Array<Date>, _>(days)
    .bind::<Array<Integer>, _>(totals)
    .bind::<Array<Integer>, _>(ups)
    .execute(conn)
    .await?;
    Ok(())
}

/// Adds events to the outbox. Event ids are deterministic, so writing the same
/// event again is a no-op.
pub async fn insert_outbox(
    conn: &mut AsyncPgConnection,
    events: &[NewOutboxEvent],
) -> DbResult<()> {
    if events.is_empty() {
        return Ok(());
    }
    diesel::insert_into(outbox_events::table)
        .values(events)
        .on_conflict(outbox_events::id)
        .do_nothing()
        .execute(conn)
        .await?;
    Ok(())
}

/// Marks events as published to NATS.
pub async fn mark_published(conn: &mut AsyncPgConnection, ids: &[Uuid]) -> DbResult<()> {
    if ids.is_empty() {
        return Ok(());
    }
    diesel::update(outbox_events::table)
        .filter(outbox_events::id.eq_any(ids))
        .filter(outbox_events::published_at.is_null())
        .set(outbox_events::published_at.eq(diesel::dsl::now))
        .execute(conn)
        .await?;
    Ok(())
}

/// Up to `limit` unpublished events created before `created_before`, in the
/// order they were written (`seq`, migration 000016), locked so that another
/// relay running at the same moment skips them. Order matters within one
/// transaction too: a batch can write a monitor's pending -> up and up -> down
/// together, and they must reach the notifier in that order (the random
/// UUID `id` and the shared `created_at` cannot tell them apart).
pub async fn lock_unpublished(
    conn: &mut AsyncPgConnection,
    created_before: DateTime<Utc>,
    limit: i64,
) -> DbResult<Vec<OutboxEvent>> {
    Ok(outbox_events::table
        .filter(outbox_events::published_at.is_null())
        .filter(outbox_events::created_at.lt(created_before))
        .order(outbox_events::seq.asc())
        .limit(limit)
        .for_update()
        .skip_locked()
        .select(OutboxEvent::as_select())
        .load(conn)
        .await?)
}

/// The heartbeat monitor a ping was recorded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, QueryableByName)]
pub struct PingedMonitor {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pub active: bool,
    /// The definition the ping counts for (its result carries it).
    #[diesel(sql_type = BigInt)]
    pub definition_version: i64,
    /// The start ping of the run this ping ends, if one was in progress.
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub run_started_at: Option<DateTime<Utc>>,
}

/// Records a heartbeat ping (success or failure): sets `last_heartbeat_at`
/// of the heartbeat monitor with this token and ends the run in progress
/// (`heartbeat_started_at` back to NULL), returning when that run started.
/// One statement: the self-join reads the start the update clears. `None`
/// when no heartbeat monitor has the token.
pub async fn record_heartbeat(
    conn: &mut AsyncPgConnection,
    token: &str,
    at: DateTime<Utc>,
) -> DbResult<Option<PingedMonitor>> {
    Ok(diesel::sql_query(
        "UPDATE monitors m \
         SET last_heartbeat_at = $2, heartbeat_started_at = NULL \
         FROM (SELECT id, heartbeat_started_at FROM monitors \
               WHERE heartbeat_token = $1 AND type = $3 FOR UPDATE) old \
         WHERE m.id = old.id \
         RETURNING m.id AS monitor_id, m.active, m.definition_version, \
                   old.heartbeat_started_at AS run_started_at",
    )
    .bind::<Text, _>(token)
    .bind::<Timestamptz, _>(at)
    .bind::<Text, _>(uptime_contracts::MonitorKind::Heartbeat.as_str())
    .get_result(conn)
    .await
    .optional()?)
}

/// The heartbeat monitor a start ping was recorded on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Queryable)]
pub struct StartedMonitor {
    pub monitor_id: i64,
    pub active: bool,
}

/// Records a start ping: sets `heartbeat_started_at` of the heartbeat
/// monitor with this token (a second start replaces the first). Leaves
/// `last_heartbeat_at` alone: a start is not a ping. `None` when no
/// heartbeat monitor has the token.
pub async fn record_heartbeat_start(
    conn: &mut AsyncPgConnection,
    token: &str,
    at: DateTime<Utc>,
) -> DbResult<Option<StartedMonitor>> {
    Ok(diesel::update(monitors::table)
        .filter(monitors::heartbeat_token.eq(token))
        .filter(monitors::kind.eq(uptime_contracts::MonitorKind::Heartbeat.as_str()))
        .set(monitors::heartbeat_started_at.eq(at))
        .returning((monitors::id, monitors::active))
        .get_result(conn)
        .await
        .optional()?)
}
