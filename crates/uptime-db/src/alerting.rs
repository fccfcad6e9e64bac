//! The rows behind reminders, dependencies and flapping (migration
//! 2026-11-27-000033). The recorder reads parents and held incidents only
//! for batches with transitions that need them, writes flapping state only
//! for monitors with a threshold, and its alert sweeper finds due reminders
//! and releasable holds through partial indexes over open incidents and
//! flapping monitors: a deployment that uses none of it runs none of it
//! per check.

use crate::incidents::{Incident, IncidentAlert};
use crate::models::Monitor;
use crate::schema::{incidents, monitors};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// Most monitors one monitor may depend on.
pub const MAX_DEPENDS_ON: usize = 10;

pub use crate::models::AlertRules;

/// Writes monitor `id`'s rules and returns the row. Turning the flapping
/// threshold off keeps a flapping monitor flapping until the sweeper finds
/// it stable (its held alert is released then, not dropped).
pub async fn set_rules(
    conn: &mut AsyncPgConnection,
    id: i64,
    rules: AlertRules,
) -> DbResult<Monitor> {
    Ok(diesel::update(monitors::table.find(id))
        .set(rules)
        .returning(Monitor::as_returning())
        .get_result(conn)
        .await?)
}

/// Every monitor of `org_id` that depends on others, with its parents: the
/// graph a new edge is checked against for cycles.
pub async fn dependency_edges(
    conn: &mut AsyncPgConnection,
    org_id: i64,
) -> DbResult<Vec<(i64, Vec<i64>)>> {
    Ok(monitors::table
        .filter(monitors::org_id.eq(org_id))
        .filter(monitors::depends_on.ne(Vec::<i64>::new()))
        .select((monitors::id, monitors::depends_on))
        .load(conn)
        .await?)
}

/// Of `ids`, the monitors that hold their dependents' alerts now: active
/// and down, or failing on their way to down (a failure not confirmed yet:
/// the parent's confirmation may be a check behind its children's).
pub async fn blocking_parents(conn: &mut AsyncPgConnection, ids: &[i64]) -> DbResult<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .filter(monitors::active.eq(true))
        .filter(
            monitors::status
                .eq("down")
                .or(monitors::consecutive_failures.gt(0)),
        )
        .select(monitors::id)
        .load(conn)
        .await?)
}

/// The open incidents of `monitor_ids` whose down alert is held: monitor
/// id and why.
pub async fn held_incidents(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
) -> DbResult<Vec<(i64, String)>> {
    if monitor_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<(i64, Option<String>)> = incidents::table
        .filter(incidents::monitor_id.eq_any(monitor_ids))
        .filter(incidents::resolved_at.is_null())
        .filter(incidents::alert_held.is_not_null())
        .select((incidents::monitor_id, incidents::alert_held))
        .load(conn)
        .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(id, held)| held.map(|h| (id, h)))
        .collect())
}

#[derive(QueryableByName)]
struct HeldCount {
    #[diesel(sql_type = BigInt)]
    parent: i64,
    #[diesel(sql_type = BigInt)]
    held: i64,
}

/// For each of `parent_ids`: how many open incidents are held behind it.
pub async fn held_children(
    conn: &mut AsyncPgConnection,
    parent_ids: &[i64],
) -> DbResult<Vec<(i64, i64)>> {
    if parent_ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows: Vec<HeldCount> = diesel::sql_query(
        "SELECT p.parent, count(*)::bigint AS held FROM incidents i \
             CROSS JOIN LATERAL unnest(i.blocked_by) AS p(parent) \
         WHERE i.resolved_at IS NULL AND i.alert_held = 'blocked_by_parent' \
             AND i.blocked_by && $1 AND p.parent = ANY($1) \
         GROUP BY p.parent",
    )
    .bind::<Array<BigInt>, _>(parent_ids)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.parent, r.held)).collect())
}

/// A monitor's flapping state after a batch.
#[derive(Debug, Clone, PartialEq)]
pub struct FlapStateUpdate {
    pub id: i64,
    /// `None` clears it.
    pub changes: Option<Vec<DateTime<Utc>>>,
    pub since: Option<DateTime<Utc>>,
}

/// Writes flapping states (one statement; none without updates).
pub async fn save_flap_states(
    conn: &mut AsyncPgConnection,
    updates: &[FlapStateUpdate],
) -> DbResult<()> {
    if updates.is_empty() {
        return Ok(());
    }
    let ids: Vec<i64> = updates.iter().map(|u| u.id).collect();
    // An array of arrays cannot be bound ragged: each as its JSON text.
    let changes: Vec<Option<serde_json::Value>> = updates
        .iter()
        .map(|u| u.changes.as_ref().map(|c| serde_json::json!(c)))
        .collect();
    let since: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.since).collect();
    diesel::sql_query(
        "UPDATE monitors m SET \
             flap_changes = (SELECT array_agg(value::timestamptz) \
                             FROM jsonb_array_elements_text(u.changes)), \
             flapping_since = u.since \
         FROM UNNEST($1::bigint[], $2::jsonb[], $3::timestamptz[]) AS u(id, changes, since) \
         WHERE m.id = u.id",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .bind::<Array<Nullable<Jsonb>>, _>(&changes)
    .bind::<Array<Nullable<Timestamptz>>, _>(&since)
    .execute(conn)
    .await?;
    Ok(())
}

#[derive(QueryableByName)]
struct IdRow {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    id: Uuid,
}

#[derive(QueryableByName)]
struct MonitorIdRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

async fn incidents_by_ids(conn: &mut AsyncPgConnection, ids: Vec<Uuid>) -> DbResult<Vec<Incident>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(incidents::table
        .filter(incidents::id.eq_any(ids))
        .order(incidents::id.asc())
        .select(Incident::as_select())
        .load(conn)
        .await?)
}

/// Up to `limit` open incidents whose next reminder is due at `now`, locked
/// (skipping those another transaction holds: a replica's sweeper, or a
/// batch resolving them).
pub async fn lock_due_reminders(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    limit: i64,
) -> DbResult<Vec<Incident>> {
    let ids: Vec<IdRow> = diesel::sql_query(
        "SELECT id FROM incidents \
         WHERE resolved_at IS NULL AND next_reminder_at IS NOT NULL AND next_reminder_at <= $1 \
         ORDER BY next_reminder_at LIMIT $2 FOR UPDATE SKIP LOCKED",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    incidents_by_ids(conn, ids.into_iter().map(|r| r.id).collect()).await
}

/// Up to `limit` open incidents held behind parents none of which holds
/// them any more (each active parent is up, or paused), locked.
pub async fn lock_unblocked(conn: &mut AsyncPgConnection, limit: i64) -> DbResult<Vec<Incident>> {
    let ids: Vec<IdRow> = diesel::sql_query(
        "SELECT i.id FROM incidents i JOIN monitors m ON m.id = i.monitor_id \
         WHERE i.resolved_at IS NULL AND i.alert_held = 'blocked_by_parent' \
             AND NOT EXISTS (SELECT 1 FROM monitors p WHERE p.id = ANY(m.depends_on) \
                 AND p.active AND (p.status = 'down' OR p.consecutive_failures > 0)) \
         LIMIT $1 FOR UPDATE OF i SKIP LOCKED",
    )
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    incidents_by_ids(conn, ids.into_iter().map(|r| r.id).collect()).await
}

/// Up to `limit` flapping monitors without a change for their stable time
/// (`default_stable_secs` when they set none) at `now`, locked; their
/// flapping is ended in the same statement.
pub async fn end_stable_flapping(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    default_stable_secs: i32,
    limit: i64,
) -> DbResult<Vec<i64>> {
    let ids: Vec<MonitorIdRow> = diesel::sql_query(
        "UPDATE monitors SET flapping_since = NULL, flap_changes = NULL \
         WHERE id IN (SELECT id FROM monitors \
             WHERE flapping_since IS NOT NULL \
                 AND COALESCE(status_since, flapping_since) \
                     + make_interval(secs => COALESCE(flap_stable_secs, $2)) <= $1 \
             LIMIT $3 FOR UPDATE SKIP LOCKED) \
         RETURNING id",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<Integer, _>(default_stable_secs)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    Ok(ids.into_iter().map(|r| r.id).collect())
}

/// The open incidents of `monitor_ids` held by `reason`, locked.
pub async fn lock_held_of(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
    reason: &str,
) -> DbResult<Vec<Incident>> {
    if monitor_ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(incidents::table
        .filter(incidents::monitor_id.eq_any(monitor_ids))
        .filter(incidents::resolved_at.is_null())
        .filter(incidents::alert_held.eq(reason))
        .for_update()
        .select(Incident::as_select())
        .load(conn)
        .await?)
}

/// What the sweeper did to one locked incident.
#[derive(Debug, Clone, PartialEq)]
pub struct IncidentAlerted {
    pub id: Uuid,
    /// Clears the hold of the down alert (a release).
    pub release: bool,
    pub reminders_sent: i32,
    pub next_reminder_at: Option<DateTime<Utc>>,
    /// Added to its alerts (none: only the schedule changes).
    pub alert: Option<IncidentAlert>,
}

/// Writes what the sweeper did (one statement).
pub async fn record_alerted(
    conn: &mut AsyncPgConnection,
    done: &[IncidentAlerted],
) -> DbResult<()> {
    if done.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = done.iter().map(|d| d.id).collect();
    let release: Vec<bool> = done.iter().map(|d| d.release).collect();
    let sent: Vec<i32> = done.iter().map(|d| d.reminders_sent).collect();
    let next: Vec<Option<DateTime<Utc>>> = done.iter().map(|d| d.next_reminder_at).collect();
    // Plain data always serialises.
    let alerts: Vec<serde_json::Value> = done
        .iter()
        .map(|d| serde_json::to_value(d.alert.iter().collect::<Vec<_>>()).expect("alerts"))
        .collect();
    diesel::sql_query(
        "UPDATE incidents i SET \
             alert_held = CASE WHEN d.release THEN NULL ELSE i.alert_held END, \
             reminders_sent = d.sent, next_reminder_at = d.next, alerts = i.alerts || d.alerts \
         FROM UNNEST($1::uuid[], $2::bool[], $3::int[], $4::timestamptz[], $5::jsonb[]) \
             AS d(id, release, sent, next, alerts) \
         WHERE i.id = d.id AND i.resolved_at IS NULL",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(&ids)
    .bind::<Array<diesel::sql_types::Bool>, _>(&release)
    .bind::<Array<Integer>, _>(&sent)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next)
    .bind::<Array<Jsonb>, _>(&alerts)
    .execute(conn)
    .await?;
    Ok(())
}

/// The alerting columns of an incident the recorder opens.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OpenAlerting {
    pub id: Uuid,
    /// Why its down alert is held.
    pub alert_held: Option<String>,
    pub blocked_by: Vec<i64>,
    pub held_children: i32,
    pub next_reminder_at: Option<DateTime<Utc>>,
}

/// Writes `alerting` onto incidents just opened (one statement; none when
/// no opened incident uses any of it).
pub async fn set_opened(conn: &mut AsyncPgConnection, alerting: &[OpenAlerting]) -> DbResult<()> {
    if alerting.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = alerting.iter().map(|a| a.id).collect();
    let held: Vec<Option<String>> = alerting.iter().map(|a| a.alert_held.clone()).collect();
    // Ragged arrays cannot be bound as one: each as JSON.
    let blocked: Vec<serde_json::Value> = alerting
        .iter()
        .map(|a| serde_json::json!(a.blocked_by))
        .collect();
    let children: Vec<i32> = alerting.iter().map(|a| a.held_children).collect();
    let next: Vec<Option<DateTime<Utc>>> = alerting.iter().map(|a| a.next_reminder_at).collect();
    diesel::sql_query(
        "UPDATE incidents i SET alert_held = a.held, \
             blocked_by = ARRAY(SELECT jsonb_array_elements_text(a.blocked)::bigint), \
             held_children = a.children, next_reminder_at = a.next \
         FROM UNNEST($1::uuid[], $2::text[], $3::jsonb[], $4::int[], $5::timestamptz[]) \
             AS a(id, held, blocked, children, next) \
         WHERE i.id = a.id",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(&ids)
    .bind::<Array<Nullable<Text>>, _>(&held)
    .bind::<Array<Jsonb>, _>(&blocked)
    .bind::<Array<Integer>, _>(&children)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next)
    .execute(conn)
    .await?;
    Ok(())
}
