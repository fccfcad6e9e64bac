//! Maintenance windows (migration 000032): the api-gateway's resource
//! ([`create`], [`list_page`], [`get`], [`update`], [`delete`]), what the
//! recorder's maintenance sweep reads and writes ([`sweep`]), the spans the
//! daily uptime leaves out ([`spans_covering`]) and retention
//! ([`delete_spans_closed_before`], [`delete_windows_ended_before`]).

pub mod markers;
pub mod sweep;

use crate::schema::{maintenance_spans, maintenance_windows};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Jsonb, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A maintenance window as stored.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = maintenance_windows)]
pub struct MaintenanceWindow {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    pub monitor_ids: Vec<i64>,
    /// `uptime_labels::Selector` as a JSON object; `None`: ids only.
    pub label_selector: Option<serde_json::Value>,
    /// `silence` or `pause`.
    pub effect: String,
    pub starts_at: DateTime<Utc>,
    /// One-off windows only.
    pub ends_at: Option<DateTime<Utc>>,
    pub rrule: Option<String>,
    pub timezone: Option<String>,
    pub duration_secs: Option<i32>,
    /// When it can never be open again (`None`: an endless rule).
    pub last_ends_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A window's whole definition: what a create inserts and an update writes.
#[derive(Debug, Clone, PartialEq, Insertable, AsChangeset)]
#[diesel(table_name = maintenance_windows, treat_none_as_null = true)]
pub struct WindowDefinition {
    pub name: String,
    pub monitor_ids: Vec<i64>,
    pub label_selector: Option<serde_json::Value>,
    pub effect: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: Option<DateTime<Utc>>,
    pub rrule: Option<String>,
    pub timezone: Option<String>,
    pub duration_secs: Option<i32>,
    pub last_ends_at: Option<DateTime<Utc>>,
}

/// How many windows `org_id` has (the per-organisation bound).
pub async fn count(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<i64> {
    Ok(maintenance_windows::table
        .filter(maintenance_windows::org_id.eq(org_id))
        .count()
        .get_result(conn)
        .await?)
}

pub async fn create(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    definition: &WindowDefinition,
) -> DbResult<MaintenanceWindow> {
    Ok(diesel::insert_into(maintenance_windows::table)
        .values((maintenance_windows::org_id.eq(org_id), definition))
        .returning(MaintenanceWindow::as_returning())
        .get_result(conn)
        .await?)
}

/// A page of `org_id`'s windows with `id > after`, in id order.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    after: i64,
    limit: i64,
) -> DbResult<Vec<MaintenanceWindow>> {
    Ok(maintenance_windows::table
        .filter(maintenance_windows::org_id.eq(org_id))
        .filter(maintenance_windows::id.gt(after))
        .order(maintenance_windows::id.asc())
        .limit(limit)
        .select(MaintenanceWindow::as_select())
        .load(conn)
        .await?)
}

// `get`, `get_for_update`, and `delete`: a deleted window's open
// occurrence (window_id now NULL) is closed by the sweep's next round,
// which releases what it held.
crate::owned_rows::org_row_by_id!(maintenance_windows, MaintenanceWindow);

/// Replaces the definition of window `id`; the sweep applies it to an open
/// occurrence at its next round.
pub async fn update(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    definition: &WindowDefinition,
) -> DbResult<Option<MaintenanceWindow>> {
    Ok(diesel::update(
        maintenance_windows::table
            .filter(maintenance_windows::org_id.eq(org_id))
            .filter(maintenance_windows::id.eq(id)),
    )
    .set((
        definition,
        maintenance_windows::updated_at.eq(diesel::dsl::now),
    ))
    .returning(MaintenanceWindow::as_returning())
    .get_result(conn)
    .await
    .optional()?)
}

#[derive(QueryableByName)]
struct SpanTimes {
    #[diesel(sql_type = Timestamptz)]
    starts_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    ends_at: DateTime<Utc>,
}

/// The spans (start, end) of the occurrences that covered monitor
/// `monitor_id` (with `labels` now) and overlap `[from, to)`; an open one
/// ends at `now`. Matched by the ids each occurrence named or its label
/// selector against the monitor's current labels, from the monitor's
/// creation on.
#[allow(clippy::too_many_arguments)]
pub async fn spans_covering(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    monitor_id: i64,
    labels: &serde_json::Value,
    created_at: DateTime<Utc>,
    from: DateTime<Utc>,
    to: DateTime<Utc>,
    now: DateTime<Utc>,
) -> DbResult<Vec<(DateTime<Utc>, DateTime<Utc>)>> {
    let rows: Vec<SpanTimes> = diesel::sql_query(
        "SELECT greatest(starts_at, $4) AS starts_at,
                least(ends_at, coalesce(closed_at, $7)) AS ends_at
           FROM maintenance_spans
          WHERE org_id = $1 AND starts_at < $6 AND ends_at > $5
            AND ($2 = ANY (monitor_ids)
                 OR (label_selector IS NOT NULL AND $3 @> label_selector))",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(monitor_id)
    .bind::<Jsonb, _>(labels)
    .bind::<Timestamptz, _>(created_at)
    .bind::<Timestamptz, _>(from)
    .bind::<Timestamptz, _>(to)
    .bind::<Timestamptz, _>(now)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .filter(|r| r.starts_at < r.ends_at)
        .map(|r| (r.starts_at, r.ends_at))
        .collect())
}

crate::retention::delete_batch_fn! {
    /// Deletes up to `limit` spans closed before `before`; how many went.
    pub fn delete_spans_closed_before(before): "maintenance_spans" where "closed_at < $1"
}

crate::retention::delete_batch_fn! {
    /// Deletes up to `limit` windows that could not open again after `before`.
    pub fn delete_windows_ended_before(before): "maintenance_windows" where "last_ends_at < $1"
}

/// Every span of `org_id` (tests and tools).
pub async fn spans_of(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<Vec<sweep::SpanRow>> {
    Ok(maintenance_spans::table
        .filter(maintenance_spans::org_id.eq(org_id))
        .order(maintenance_spans::id.asc())
        .select(sweep::SpanRow::as_select())
        .load(conn)
        .await?)
}
