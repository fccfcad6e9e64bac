//! A monitor's checks: run one now, list its results (`results`), and its
//! daily uptime.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::{ApiError, ErrorBody, FieldError};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{NaiveDate, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use uptime_contracts::{DueCheck, Trigger};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

mod cursor;
pub mod results;
pub mod rounds;
pub use cursor::RESULTS_CURSOR_PATTERN;

pub fn routes() -> Routes {
    routes![check_now: WRITE]
        .then(results::routes())
        .then(rounds::routes())
        .then(routes![daily_uptime: READ])
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckQueued {
    /// Always `queued`.
    #[schema(value_type = crate::routes::values::Queued)]
    pub status: &'static str,
    /// The id of the check's round: for a monitor checked from one region,
    /// the id its result carries in the results endpoint; from several, the
    /// `round_id` of each region's result.
    pub check_id: Uuid,
}

/// Run a check of the monitor now: a round of one check per region the
/// monitor is checked from. The checks go straight to the checkers;
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
#[utoipa::path(post, path = "/api/v1/monitors/{id}/check", operation_id = "checkMonitorNow", tag = "checks",
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 202, body = CheckQueued,
            description = "queued; or, when a check of this monitor is already in flight, that check"),
        (status = 409, body = ErrorBody, description = "heartbeat monitors are checked by pings")))]
pub async fn check_now(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    // The round's id; the in-flight slot is per round, not per region.
    let check_id = Uuid::new_v4();
    let window = std::time::Duration::from_secs(state.settings.manual_checks.in_flight_secs);
    // One connection for both: the monitor, then its in-flight slot.
    let (monitor, round) = {
        let mut conn = state.conn().await?;
        let monitor = uptime_db::monitors::get_within(&mut conn, user.reach(), id.into_inner())
            .await?
            .ok_or(ApiError::NotFound)?;
        let round = round_of(&monitor, &state.settings.regions, check_id)?;
        let holder =
            uptime_db::manual_checks::claim(&mut conn, monitor.id, check_id, window).await?;
        if holder != check_id {
            metrics::counter!("manual_checks_coalesced_total").increment(1);
            return Ok(HttpResponse::Accepted().json(CheckQueued {
                status: "queued",
                check_id: holder,
            }));
        }
        (monitor, round)
    };
    if let Err(error) = publish_round(&state, &round).await {
        // Not queued after all: free the slot so the next request can try.
        if let Ok(mut conn) = state.conn().await {
            let _ = uptime_db::manual_checks::release(&mut conn, monitor.id, check_id).await;
        }
        return Err(error);
    }
    metrics::counter!("manual_checks_total").increment(1);
    // The check is queued on NATS, which no PostgreSQL transaction spans:
    // it is audited once queued (a coalesced request, which queued
    // nothing, and a failed one leave no entry).
    let mut conn = state.conn().await?;
    let monitor_id = monitor.id;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            // The entry and its outbox row land together.
            crate::audit::record(
                c,
                &user,
                crate::audit::action::CHECK,
                crate::audit::kind::MONITOR,
                Some(monitor_id),
                serde_json::json!({"check_id": {"before": null, "after": check_id}}),
            )
            .await
        }
        .scope_boxed()
    })
    .await?;
    Ok(HttpResponse::Accepted().json(CheckQueued {
        status: "queued",
        check_id,
    }))
}

/// Publishes every region's check of `round` on its region's subject (all
/// handed to the client before any acknowledgement is awaited), then waits
/// for every acknowledgement; 503 if NATS does not give them. A retry of a
/// publish that did land is harmless: each carries its check id as
/// `Nats-Msg-Id`.
async fn publish_round(state: &AppState, round: &[DueCheck]) -> Result<(), ApiError> {
    let unavailable = |subject: &str, e: &dyn std::fmt::Display| {
        ApiError::Unavailable(format!("publishing to {subject}: {e}"))
    };
    let mut acks = Vec::with_capacity(round.len());
    for due in round {
        let headers = uptime_telemetry::nats::headers_with_msg_id(&due.check_id.to_string());
        let ack = uptime_contracts::bus::publish_on(&state.js, due.subject(), headers, due)
            .await
            .map_err(|e| unavailable(&due.subject(), &e))?;
        acks.push((due, ack));
    }
    for (due, ack) in acks {
        ack.await.map_err(|e| unavailable(&due.subject(), &e))?;
    }
    Ok(())
}

/// The round's checks, from the monitor's current definition: the one
/// row-to-round function the scheduler uses too. A heartbeat monitor is 409;
/// any other refusal is a row the API would never have written, so a bug (500).
fn round_of(
    monitor: &uptime_db::models::Monitor,
    regions: &uptime_config::RegionsSettings,
    round_id: Uuid,
) -> Result<Vec<DueCheck>, ApiError> {
    let round = uptime_db::monitors::RoundOf {
        round_id,
        trigger: Trigger::Manual,
        due_at: Utc::now(),
        definition_version: monitor.definition_version,
        interval_secs: u32::try_from(monitor.interval_secs).unwrap_or(1).max(1),
    };
    uptime_db::monitors::sealed_round_checks(monitor, regions, round).map_err(|error| match error {
        uptime_db::monitors::SpecError::Heartbeat => {
            ApiError::Conflict("heartbeat monitors are checked by pings")
        }
        // Only until this replica's start-up job has sealed it (moments).
        e @ uptime_db::monitors::SpecError::PasswordNotSealed { .. } => {
            ApiError::Unavailable(e.to_string())
        }
        other => ApiError::Internal(other.to_string()),
    })
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
    /// rounded; 100 for a day without checks. Checks inside a maintenance
    /// window are left out (a `pause` window runs none).
    pub percentage: f64,
    pub total_checks: i64,
    /// Seconds of the day the monitor spent in maintenance windows
    /// (overlapping windows counted once; today: so far).
    pub maintenance_secs: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct DailyUptimeResponse {
    pub monitor_id: i64,
    pub days: i64,
    /// One entry per UTC day, oldest first, ending today.
    pub daily: Vec<DailyUptimeEntry>,
}

/// A monitor's uptime per UTC day, from the daily rollup the recorder keeps.
#[utoipa::path(get, path = "/api/v1/monitors/{id}/uptime/daily", operation_id = "getDailyUptime", tag = "checks",
    params(("id" = i64, Path, description = "Monitor id"), UptimeQuery),
    responses((status = 200, body = DailyUptimeResponse)))]
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
    let monitor = uptime_db::monitors::get_within(&mut conn, user.reach(), id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let today = Utc::now().date_naive();
    let from = today - chrono::Days::new(u64::try_from(days - 1).unwrap_or(0));
    let rows = uptime_db::results::daily(&mut conn, monitor.id, from, today).await?;
    let now = Utc::now();
    let start = from.and_time(chrono::NaiveTime::MIN).and_utc();
    let spans = uptime_db::maintenance::spans_covering(
        &mut conn,
        monitor.org_id,
        monitor.id,
        &monitor.labels,
        monitor.created_at,
        start,
        now,
        now,
    )
    .await?;
    let spans: Vec<uptime_maintenance::Span> = spans
        .into_iter()
        .map(|(start, end)| uptime_maintenance::Span { start, end })
        .collect();
    Ok(HttpResponse::Ok().json(DailyUptimeResponse {
        monitor_id: monitor.id,
        days,
        daily: fill_days(from, today, &rows, &spans),
    }))
}

/// One entry per day `from..=to`, with the rollup rows where there are any.
fn fill_days(
    from: NaiveDate,
    to: NaiveDate,
    rows: &[uptime_db::models::DailyUptime],
    maintenance: &[uptime_maintenance::Span],
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
                maintenance_secs: {
                    let start = date.and_time(chrono::NaiveTime::MIN).and_utc();
                    uptime_maintenance::seconds_within(
                        maintenance,
                        start,
                        start + chrono::Duration::days(1),
                    )
                },
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
        // A window from 23:00 on 28 Feb to 01:00 on 1 Mar, and one inside it.
        let at = |d: u32, m: u32, h: u32| {
            use chrono::TimeZone;
            Utc.with_ymd_and_hms(2026, m, d, h, 0, 0).unwrap()
        };
        let spans = [
            uptime_maintenance::Span {
                start: at(28, 2, 23),
                end: at(1, 3, 1),
            },
            uptime_maintenance::Span {
                start: at(28, 2, 23),
                end: at(1, 3, 0),
            },
        ];
        let days = fill_days(from, to, &rows, &spans);
        let maintenance: Vec<i64> = days.iter().map(|d| d.maintenance_secs).collect();
        assert_eq!(
            maintenance,
            [0, 3600, 3600, 0],
            "per UTC day, overlaps once"
        );
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
