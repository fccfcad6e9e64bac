//! A monitor's check results, newest first, a page at a time.

use super::cursor::decode_results_cursor;
use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::{ApiError, FieldError};
use crate::http::validation::{split, Keyset, DEFAULT_PAGE_SIZE};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ResultsQuery {
    /// Results per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the newest results.
    pub cursor: Option<String>,
    /// The former name of `cursor`, still accepted; ignored when `cursor`
    /// is given. Deprecated (set so in `openapi::add_patterns`).
    pub before: Option<String>,
    /// Only the results of this region (`default`: also those recorded
    /// before regions existed). Any region name, known or not.
    #[param(pattern = "^[a-z0-9][a-z0-9-]{0,31}$")]
    pub region: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResultResponse {
    pub id: i64,
    /// The check this result is for (the `check_id` of a manual check's 202).
    pub check_id: Uuid,
    pub checked_at: DateTime<Utc>,
    /// `up`, `degraded` (passed, but slower than `latency_warn_ms`) or `down`.
    #[schema(value_type = crate::routes::values::ResultStatus)]
    pub status: String,
    pub latency_ms: Option<i32>,
    pub http_status: Option<i32>,
    /// Why the check failed, in words.
    pub error: Option<String>,
    /// `scheduled`, `manual` or `heartbeat`.
    #[schema(value_type = crate::routes::values::ResultTrigger)]
    pub trigger: String,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// The monitor's `definition_version` this check was made for; a result
    /// of an older version is history and did not move the monitor's status.
    /// `null` for results recorded from version-1 messages.
    pub definition_version: Option<i64>,
    /// Where the check ran (`default` for single-region installs, heartbeat
    /// pings and results recorded before regions existed).
    #[schema(example = "default")]
    pub region: String,
    /// The round the check was part of (for a monitor checked from one
    /// region, the check itself); `null` for heartbeat pings and results
    /// recorded before rounds existed.
    pub round_id: Option<Uuid>,
    /// Checked inside a maintenance window: left out of the daily uptime,
    /// and a change it caused alerted nobody then.
    pub in_maintenance: bool,
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
            region: r
                .region
                .unwrap_or_else(|| uptime_contracts::regions::DEFAULT_REGION.to_string()),
            round_id: r.round_id,
            in_maintenance: r.in_maintenance,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct CheckResultsPage {
    pub monitor_id: i64,
    /// Newest first: by the time the check was due (a ping's: when it
    /// arrived), then by `id`.
    pub results: Vec<CheckResultResponse>,
    /// Pass as `?cursor=` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<String>,
}

pub fn routes() -> Routes {
    routes![results: READ]
}

/// A monitor's check results, newest first, a page at a time. Results are
/// ordered by the time their check was due (a ping's: when it arrived), then
/// by `id`. They are kept `retention.results_days` (90 by default; a whole
/// day expires at once); the daily uptime outlives them. A cursor
/// handed out before results were partitioned (one beginning `aWQ6`) is 400:
/// start again from the first page. `before` is the former name of
/// `cursor`. Each result names the region it was
/// checked from and its round; `region` keeps one region's results (give
/// the same `region` with each page's cursor).
#[utoipa::path(get, path = "/api/v1/monitors/{id}/results", operation_id = "listResults", tag = "checks",
    params(("id" = i64, Path, description = "Monitor id"), ResultsQuery),
    responses((status = 200, body = CheckResultsPage)))]
pub async fn results(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    query: web::Query<ResultsQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    // The same limits as every other list; the cursor is the results' own
    // (a position in time and id, not an id).
    let limit = Keyset::<i64>::parse(query.limit, None, DEFAULT_PAGE_SIZE);
    // `cursor` wins over `before`, its former name, when both are given.
    let before = match (query.cursor.as_deref(), query.before.as_deref()) {
        (Some(cursor), _) => decode_results_cursor(cursor)
            .map(Some)
            .map_err(|problem| FieldError::new("cursor", problem.message)),
        (None, before) => before.map(decode_results_cursor).transpose(),
    };
    let region = match query.region.as_deref() {
        Some(r) if !uptime_contracts::regions::is_valid_region(r) => Err(FieldError::new(
            "region",
            format!(
                "must be a region name: 1 to {} of a-z, 0-9 and -, not starting with -",
                uptime_contracts::regions::MAX_REGION_CHARS
            ),
        )),
        region => Ok(region),
    };
    let (limit, before, region) = match (limit, before, region) {
        (Ok(page), Ok(before), Ok(region)) => (page.limit, before, region),
        (limit, before, region) => {
            let mut problems = match limit {
                Err(ApiError::InvalidQuery(problems)) => problems,
                Err(other) => return Err(other),
                Ok(_) => Vec::new(),
            };
            problems.extend(before.err());
            problems.extend(region.err());
            return Err(ApiError::InvalidQuery(problems));
        }
    };
    let mut conn = state.conn().await?;
    let monitor = uptime_db::monitors::get_within(&mut conn, user.reach(), id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let rows =
        uptime_db::results::page(&mut conn, monitor.id, before, region, limit + 1, Utc::now())
            .await?;
    let (rows, next_cursor) = split(rows, limit, |(_, cursor)| *cursor);
    Ok(HttpResponse::Ok().json(CheckResultsPage {
        monitor_id: monitor.id,
        results: rows.into_iter().map(|(r, _)| r.into()).collect(),
        next_cursor,
    }))
}
