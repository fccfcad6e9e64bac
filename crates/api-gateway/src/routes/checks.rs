//! A monitor's checks: run one now, list its results, and its daily uptime.

use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use crate::validation::PageQuery;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, NaiveDate, Utc};
use cursor::{decode_results_cursor, encode_results_cursor};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use uptime_contracts::{CheckDueV3, CheckSpecV2, Trigger};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

mod cursor;
pub use cursor::RESULTS_CURSOR_PATTERN;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/monitors/{id}/check").post(check_now))
        .service(web::resource("/monitors/{id}/results").get(results))
        .service(web::resource("/monitors/{id}/uptime/daily").get(daily_uptime));
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckQueued {
    /// Always `queued`.
    #[schema(example = "queued")]
    pub status: &'static str,
    /// The id the check's result will carry in the results endpoint.
    pub check_id: Uuid,
}

/// Run a check of the monitor now. The check goes straight to the checkers;
/// its result appears in the results endpoint with `trigger` `manual`. Paused
/// monitors can be checked this way too (the request is explicit); their
/// status does not change. Heartbeat monitors are checked by their pings and
/// answer 409.
///
/// A monitor has at most one on-demand check in flight: while one is queued
/// or running (its result not yet recorded, for at most the configured
/// in-flight window), another request queues nothing and answers the same
/// 202 with the `check_id` of the check already in flight, so repeated
/// clicks or retries are harmless and every caller can find the one result.
#[utoipa::path(post, path = "/api/v1/monitors/{id}/check", tag = "checks", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 202, body = CheckQueued,
            description = "queued; or, when a check of this monitor is already in flight, that check"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "heartbeat monitors are checked by pings")))]
pub async fn check_now(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let check_id = Uuid::new_v4();
    let window = std::time::Duration::from_secs(state.settings.manual_checks.in_flight_secs);
    // One connection for both: the monitor, then its in-flight slot.
    let (monitor, spec, holder) = {
        let mut conn = state.conn().await?;
        let monitor = uptime_db::monitors::get(&mut conn, user.user_id, id.into_inner())
            .await?
            .ok_or(ApiError::NotFound)?;
        let spec = spec_of(&monitor)?;
        let holder =
            uptime_db::manual_checks::claim(&mut conn, monitor.id, check_id, window).await?;
        (monitor, spec, holder)
    };
    if holder != check_id {
        metrics::counter!("manual_checks_coalesced_total").increment(1);
        return Ok(HttpResponse::Accepted().json(CheckQueued {
            status: "queued",
            check_id: holder,
        }));
    }
    let due = CheckDueV3 {
        check_id,
        monitor_id: monitor.id,
        definition_version: monitor.definition_version,
        interval_secs: u32::try_from(monitor.interval_secs).unwrap_or(1).max(1),
        trigger: Trigger::Manual,
        due_at: Utc::now(),
        spec,
    };
    if let Err(error) = state.publish(&due.check_id.to_string(), &due).await {
        // Not queued after all: free the slot so the next request can try.
        if let Ok(mut conn) = state.conn().await {
            let _ = uptime_db::manual_checks::release(&mut conn, monitor.id, check_id).await;
        }
        return Err(error);
    }
    metrics::counter!("manual_checks_total").increment(1);
    Ok(HttpResponse::Accepted().json(CheckQueued {
        status: "queued",
        check_id: due.check_id,
    }))
}

/// What a checker needs, from the monitor's current definition: the one
/// row-to-spec function the scheduler uses too. A heartbeat monitor is 409;
/// any other refusal is a row the API would never have written, so a bug (500).
fn spec_of(monitor: &uptime_db::models::Monitor) -> Result<CheckSpecV2, ApiError> {
    uptime_db::monitors::check_spec(monitor).map_err(|error| match error {
        uptime_db::monitors::SpecError::Heartbeat => {
            ApiError::Conflict("heartbeat monitors are checked by pings")
        }
        other => ApiError::Internal(other.to_string()),
    })
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResultsQuery {
    /// Results per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the newest results.
    pub before: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResultResponse {
    pub id: i64,
    /// The check this result is for (the `check_id` of a manual check's 202).
    pub check_id: Uuid,
    pub checked_at: DateTime<Utc>,
    /// `up`, `degraded` (passed, but slower than `latency_warn_ms`) or `down`.
    #[schema(example = "up")]
    pub status: String,
    pub latency_ms: Option<i32>,
    pub http_status: Option<i32>,
    /// Why the check failed, in words.
    pub error: Option<String>,
    /// `scheduled`, `manual` or `heartbeat`.
    #[schema(example = "scheduled")]
    pub trigger: String,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// The monitor's `definition_version` this check was made for; a result
    /// of an older version is history and did not move the monitor's status.
    /// `null` for results recorded from version-1 messages.
    pub definition_version: Option<i64>,
}

impl From<uptime_db::models::CheckResult> for CheckResultResponse {
    fn from(r: uptime_db::models::CheckResult) -> Self {
        Self {
            id: r.id,
            check_id: r.check_id,
            checked_at: r.checked_at,
            status: r.status,
            latency_ms: r.latency_ms,
            http_status: r.http_status,
            error: r.error,
            trigger: r.trigger,
            ssl_expires_at: r.ssl_expires_at,
            definition_version: r.definition_version,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResultsPage {
    pub monitor_id: i64,
    /// Newest first: by the time the check was due (a ping's: when it
    /// arrived), then by `id`.
    pub results: Vec<CheckResultResponse>,
    /// Pass as `before` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// A monitor's check results, newest first, a page at a time. Results are
/// ordered by the time their check was due (a ping's: when it arrived), then
/// by `id`. They are kept `retention.results_days` (90 by default; a whole
/// day expires at once); the daily uptime outlives them. A `before` cursor
/// handed out before results were partitioned (one beginning `aWQ6`) is 400:
/// start again from the first page.
#[utoipa::path(get, path = "/api/v1/monitors/{id}/results", tag = "checks", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id"), ResultsQuery),
    responses((status = 200, body = CheckResultsPage), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn results(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    query: web::Query<ResultsQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    // The same limits as every other list; the cursor is the results' own
    // (a position in time and id, not an id).
    let limit = PageQuery {
        limit: query.limit,
        cursor: None,
    }
    .validate();
    let before = query
        .before
        .as_deref()
        .map(decode_results_cursor)
        .transpose();
    let (limit, before) = match (limit, before) {
        (Ok(page), Ok(before)) => (page.limit, before),
        (limit, before) => {
            let mut problems = match limit {
                Err(ApiError::InvalidQuery(problems)) => problems,
                Err(other) => return Err(other),
                Ok(_) => Vec::new(),
            };
            problems.extend(before.err());
            return Err(ApiError::InvalidQuery(problems));
        }
    };
    let mut conn = state.conn().await?;
    let monitor = uptime_db::monitors::get(&mut conn, user.user_id, id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let mut rows =
        uptime_db::results::page(&mut conn, monitor.id, before, limit + 1, Utc::now()).await?;
    // The extra row only tells that another page exists.
    let limit = usize::try_from(limit).unwrap_or(0);
    let next_cursor = if rows.len() > limit {
        rows.truncate(limit);
        rows.last()
            .map(|(_, cursor)| encode_results_cursor(*cursor))
    } else {
        None
    };
    Ok(HttpResponse::Ok().json(CheckResultsPage {
        monitor_id: monitor.id,
        results: rows.into_iter().map(|(r, _)| r.into()).collect(),
        next_cursor,
    }))
}

pub const DEFAULT_UPTIME_DAYS: i64 = 30;
pub const MAX_UPTIME_DAYS: i64 = 365;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct UptimeQuery {
    /// Days to report, 1 to 365 (default 30), ending today (UTC).
    #[param(minimum = 1, maximum = 365)]
    pub days: Option<i64>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DailyUptimeEntry {
    /// The UTC day, `YYYY-MM-DD`.
    pub date: NaiveDate,
    /// Share of the day's checks that were `up` or `degraded`, 0 to 100, not
    /// rounded; 100 for a day without checks.
    pub percentage: f64,
    pub total_checks: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DailyUptimeResponse {
    pub monitor_id: i64,
    pub days: i64,
    /// One entry per UTC day, oldest first, ending today.
    pub daily: Vec<DailyUptimeEntry>,
}

/// A monitor's uptime per UTC day, from the daily rollup the recorder keeps.
#[utoipa::path(get, path = "/api/v1/monitors/{id}/uptime/daily", tag = "checks", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id"), UptimeQuery),
    responses((status = 200, body = DailyUptimeResponse), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn daily_uptime(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    query: web::Query<UptimeQuery>,
) -> Result<HttpResponse, ApiError> {
    let days = query.days.unwrap_or(DEFAULT_UPTIME_DAYS);
    if !(1..=MAX_UPTIME_DAYS).contains(&days) {
        return Err(ApiError::InvalidQuery(vec![FieldError::new(
            "days",
            format!("must be between 1 and {MAX_UPTIME_DAYS}"),
        )]));
    }
    let mut conn = state.conn().await?;
    let monitor = uptime_db::monitors::get(&mut conn, user.user_id, id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let today = Utc::now().date_naive();
    let from = today - chrono::Days::new(u64::try_from(days - 1).unwrap_or(0));
    let rows = uptime_db::results::daily(&mut conn, monitor.id, from, today).await?;
    Ok(HttpResponse::Ok().json(DailyUptimeResponse {
        monitor_id: monitor.id,
        days,
        daily: fill_days(from, today, &rows),
    }))
}

/// One entry per day `from..=to`, with the rollup rows where there are any.
fn fill_days(
    from: NaiveDate,
    to: NaiveDate,
    rows: &[uptime_db::models::DailyUptime],
) -> Vec<DailyUptimeEntry> {
    let by_day: HashMap<NaiveDate, &uptime_db::models::DailyUptime> =
        rows.iter().map(|r| (r.day, r)).collect();
    from.iter_days()
        .take_while(|d| *d <= to)
        .map(|date| {
            let (total, up) = by_day
                .get(&date)
                .map(|r| (i64::from(r.total_checks), i64::from(r.up_checks)))
                .unwrap_or((0, 0));
            DailyUptimeEntry {
                date,
                percentage: if total == 0 {
                    100.0
                } else {
                    up as f64 * 100.0 / total as f64
                },
                total_checks: total,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_db::models::DailyUptime;

    #[test]
    fn every_day_is_present_and_empty_days_count_as_fully_up() {
        let from = NaiveDate::from_ymd_opt(2026, 2, 27).unwrap();
        let to = NaiveDate::from_ymd_opt(2026, 3, 2).unwrap();
        let rows = [DailyUptime {
            monitor_id: 1,
            day: NaiveDate::from_ymd_opt(2026, 3, 1).unwrap(),
            total_checks: 3,
            up_checks: 2,
        }];
        let days = fill_days(from, to, &rows);
        let dates: Vec<String> = days.iter().map(|d| d.date.to_string()).collect();
        assert_eq!(
            dates,
            ["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"]
        );
        assert_eq!(days[0].percentage, 100.0);
        assert_eq!(days[0].total_checks, 0);
        assert!((days[2].percentage - 200.0 / 3.0).abs() < 1e-9);
        assert_eq!(days[2].total_checks, 3);
    }
}
