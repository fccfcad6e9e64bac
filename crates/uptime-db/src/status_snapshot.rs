//! What the status-pages service shows, read in a fixed set of statements
//! per refresh (never per page view, never per monitor):
//! - [`load_pages`], [`load_badges`], [`load_shown_monitors`] and
//!   [`load_open_incidents`]: the fast part, every few seconds;
//! - [`load_daily_uptime`] and [`load_hourly_stats`]: the aggregates (90
//!   days of uptime, a week of hourly response times), refreshed less often.
//!
//! Only names and states are read for display: never targets or options.

use crate::status_pages::StatusPage;
use crate::DbResult;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::sql_types::{Array, BigInt, Date, Double, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Every status page.
pub async fn load_pages(conn: &mut AsyncPgConnection) -> DbResult<Vec<StatusPage>> {
    Ok(diesel::sql_query(
        "SELECT id, org_id, slug, title, description, logo_url, custom_domain, groups, \
           access_token_sha256, created_at, updated_at FROM status_pages ORDER BY id",
    )
    .load(conn)
    .await?)
}

/// A badge token's digest and its monitor.
#[derive(Debug, Clone, QueryableByName)]
pub struct Badge {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    #[diesel(sql_type = Text)]
    pub token_sha256: String,
}

/// Every badge token.
pub async fn load_badges(conn: &mut AsyncPgConnection) -> DbResult<Vec<Badge>> {
    Ok(
        diesel::sql_query("SELECT monitor_id, token_sha256 FROM monitor_badges")
            .load(conn)
            .await?,
    )
}

/// What a page or badge shows of a monitor.
#[derive(Debug, Clone, QueryableByName)]
pub struct ShownMonitor {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub org_id: i64,
    #[diesel(sql_type = Text)]
    pub name: String,
    /// `up`, `down`, `degraded`, `pending`, `paused`.
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub status_since: Option<DateTime<Utc>>,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    pub active: bool,
    #[diesel(sql_type = Jsonb)]
    pub labels: serde_json::Value,
    #[diesel(sql_type = Nullable<Integer>)]
    pub last_latency_ms: Option<i32>,
}

/// The monitors some page or badge may show: those with a badge, those a
/// page names, and those of an organisation with a page that picks
/// monitors by label (the caller matches the selectors). One statement.
pub async fn load_shown_monitors(conn: &mut AsyncPgConnection) -> DbResult<Vec<ShownMonitor>> {
    Ok(diesel::sql_query(
        "WITH groups AS ( \
           SELECT p.org_id, g FROM status_pages p, jsonb_array_elements(p.groups) g), \
         named AS ( \
           SELECT (jsonb_array_elements_text(g->'monitor_ids'))::bigint AS id FROM groups \
           WHERE jsonb_typeof(g->'monitor_ids') = 'array'), \
         selecting AS ( \
           SELECT DISTINCT org_id FROM groups WHERE jsonb_typeof(g->'selector') = 'object') \
         SELECT id, org_id, name, status, status_since, active, labels, last_latency_ms \
         FROM monitors m \
         WHERE m.id IN (SELECT monitor_id FROM monitor_badges) \
            OR m.id IN (SELECT id FROM named) \
            OR m.org_id IN (SELECT org_id FROM selecting)",
    )
    .load(conn)
    .await?)
}

/// An open incident of a shown monitor.
#[derive(Debug, Clone, QueryableByName)]
pub struct OpenIncident {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    #[diesel(sql_type = Timestamptz)]
    pub started_at: DateTime<Utc>,
}

/// The open incidents of `monitor_ids`.
pub async fn load_open_incidents(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
) -> DbResult<Vec<OpenIncident>> {
    Ok(diesel::sql_query(
        "SELECT monitor_id, started_at FROM incidents \
         WHERE resolved_at IS NULL AND monitor_id = ANY($1)",
    )
    .bind::<Array<BigInt>, _>(monitor_ids)
    .load(conn)
    .await?)
}

/// One day of a monitor's uptime rollup.
#[derive(Debug, Clone, QueryableByName)]
pub struct DayCounts {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    #[diesel(sql_type = Date)]
    pub day: NaiveDate,
    #[diesel(sql_type = Integer)]
    pub total_checks: i32,
    #[diesel(sql_type = Integer)]
    pub up_checks: i32,
}

/// The daily rollups of `monitor_ids` from `since` on.
pub async fn load_daily_uptime(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
    since: NaiveDate,
) -> DbResult<Vec<DayCounts>> {
    Ok(diesel::sql_query(
        "SELECT monitor_id, day, total_checks, up_checks FROM daily_uptime \
         WHERE monitor_id = ANY($1) AND day >= $2",
    )
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<Date, _>(since)
    .load(conn)
    .await?)
}

/// One hour of a monitor's results: counts and mean response time.
#[derive(Debug, Clone, QueryableByName)]
pub struct HourStats {
    #[diesel(sql_type = BigInt)]
    pub monitor_id: i64,
    /// The hour's start.
    #[diesel(sql_type = Timestamptz)]
    pub hour: DateTime<Utc>,
    #[diesel(sql_type = BigInt)]
    pub total: i64,
    /// Results that were not `down` (as the daily rollup counts them).
    #[diesel(sql_type = BigInt)]
    pub up: i64,
    #[diesel(sql_type = Nullable<Double>)]
    pub mean_latency_ms: Option<f64>,
}

/// Hourly counts and mean latency of `monitor_ids`' results since `since`.
/// The bound on `slot_at` (the partition key, a result's due time) keeps the
/// plan to the partitions of those days.
pub async fn load_hourly_stats(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
    since: DateTime<Utc>,
) -> DbResult<Vec<HourStats>> {
    Ok(diesel::sql_query(
        "SELECT monitor_id, date_trunc('hour', checked_at) AS hour, count(*) AS total, \
           count(*) FILTER (WHERE status <> 'down') AS up, \
           avg(latency_ms)::float8 AS mean_latency_ms \
         FROM check_results \
         WHERE monitor_id = ANY($1) AND slot_at >= $2 - interval '1 hour' AND checked_at >= $2 \
         GROUP BY 1, 2",
    )
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<Timestamptz, _>(since)
    .load(conn)
    .await?)
}
