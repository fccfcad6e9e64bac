//! `GET /api/v1/monitors/{id}/rounds`: the rounds of a monitor checked from
//! several regions, open and decided, with what each region saw.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::ApiError;
use crate::http::validation::{Keyset, DEFAULT_PAGE_SIZE};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_contracts::round::{RegionSeen, Round};
use uptime_contracts::CheckResult;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct RoundsQuery {
    /// Rounds per page, 1 to 100 (default 50), newest first.
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the newest rounds.
    pub cursor: Option<String>,
}

/// What a region saw in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RoundRegionSeen {
    Passed,
    Failed,
    /// No result by the round's deadline while the region had live checkers.
    NoAnswer,
    /// No result and no live checker in the region: not counted.
    Offline,
    /// The round is open and the region has not answered yet.
    Pending,
}

impl From<RegionSeen> for RoundRegionSeen {
    fn from(seen: RegionSeen) -> Self {
        match seen {
            RegionSeen::Passed => Self::Passed,
            RegionSeen::Failed => Self::Failed,
            RegionSeen::NoAnswer => Self::NoAnswer,
            RegionSeen::Offline => Self::Offline,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoundRegion {
    #[schema(example = "eu")]
    pub region: String,
    pub seen: RoundRegionSeen,
    /// The region's check (its result in the results endpoint).
    pub check_id: Option<Uuid>,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    /// Why the region's check failed, in words.
    pub error: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoundResponse {
    pub round_id: Uuid,
    /// `scheduled` or `manual`.
    #[schema(value_type = crate::routes::values::RoundTrigger)]
    pub trigger: String,
    pub due_at: DateTime<Utc>,
    /// When the round is decided even if some region has not answered.
    pub deadline_at: DateTime<Utc>,
    /// `null` while the round is open.
    pub decided_at: Option<DateTime<Utc>>,
    /// `up`, `degraded` or `down`; `null` while open, or when no region
    /// answered (then the monitor's status did not change).
    #[schema(value_type = Option<crate::routes::values::ResultStatus>)]
    pub verdict: Option<String>,
    /// How many regions had to see a failure for the round to fail.
    #[schema(minimum = 1)]
    pub quorum: i32,
    /// Each region of the round, in the round's order.
    pub regions: Vec<RoundRegion>,
    /// Why the round was decided as it was, when that needs saying (regions
    /// offline or silent, a regional problem, too few regions for the
    /// quorum).
    pub note: Option<String>,
    pub definition_version: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RoundList {
    pub monitor_id: i64,
    /// Newest first, by when the round was due. Monitors checked from one
    /// region have none (each result is its own round).
    pub rounds: Vec<RoundResponse>,
    /// Pass as `?cursor=` for the next (older) page; `null` on the last page.
    pub next_cursor: Option<String>,
}

pub fn routes() -> Routes {
    routes![rounds: READ]
}

/// A monitor's newest rounds, open and decided, newest first. Only monitors
/// checked from several regions have rounds; a decided round shows what each
/// region saw and why it was decided so, an open one the regions that
/// answered so far (`pending` for the others). Rounds are kept as long as
/// results.
#[utoipa::path(get, path = "/api/v1/monitors/{id}/rounds", operation_id = "listRounds", tag = "checks",
    params(("id" = i64, Path, description = "Monitor id"), RoundsQuery),
    responses((status = 200, body = RoundList)))]
pub async fn rounds(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    query: web::Query<RoundsQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = Keyset::parse(query.limit, query.cursor.as_deref(), DEFAULT_PAGE_SIZE)?;
    let mut conn = state.conn().await?;
    let monitor = uptime_db::monitors::get_within(&mut conn, user.reach(), id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| uptime_db::rounds_read::page(&mut conn, monitor.id, after, n),
            |r| (r.round.due_at, r.round.round_id),
        )
        .await?;
    Ok(HttpResponse::Ok().json(RoundList {
        monitor_id: monitor.id,
        rounds: rows.into_iter().map(RoundResponse::from).collect(),
        next_cursor,
    }))
}

impl From<uptime_db::rounds_read::RoundRow> for RoundResponse {
    fn from(row: uptime_db::rounds_read::RoundRow) -> Self {
        // A decision the recorder wrote is a Round; one this version
        // cannot read shows the answers instead, as for an open round.
        let decision = row
            .decision
            .and_then(|d| serde_json::from_value::<Round>(d).ok());
        let (regions, note) = match decision {
            Some(round) => (
                round
                    .regions
                    .into_iter()
                    .map(|r| RoundRegion {
                        region: r.region,
                        seen: r.seen.into(),
                        check_id: r.check_id,
                        latency_ms: r.latency_ms,
                        http_status: r.http_status,
                        error: r.error,
                    })
                    .collect(),
                round.note,
            ),
            None => (
                answered_so_far(&row.round.regions, &row.round.answers),
                None,
            ),
        };
        Self {
            round_id: row.round.round_id,
            trigger: row.round.trigger,
            due_at: row.round.due_at,
            deadline_at: row.round.deadline_at,
            decided_at: row.decided_at,
            verdict: row.verdict,
            quorum: row.round.quorum,
            regions,
            note,
            definition_version: row.round.definition_version,
        }
    }
}

/// Each region of an open round: what its answer says, or `pending`.
fn answered_so_far(regions: &[String], answers: &serde_json::Value) -> Vec<RoundRegion> {
    regions
        .iter()
        .map(|region| {
            let answer = answers
                .get(region)
                .cloned()
                .and_then(|a| serde_json::from_value::<CheckResult>(a).ok());
            match answer {
                Some(a) => RoundRegion {
                    region: region.clone(),
                    seen: if a.outcome == uptime_contracts::CheckOutcome::Fail {
                        RoundRegionSeen::Failed
                    } else {
                        RoundRegionSeen::Passed
                    },
                    check_id: Some(a.check_id),
                    latency_ms: a.latency_ms,
                    http_status: a.http_status,
                    error: a.error,
                },
                None => RoundRegion {
                    region: region.clone(),
                    seen: RoundRegionSeen::Pending,
                    check_id: None,
                    latency_ms: None,
                    http_status: None,
                    error: None,
                },
            }
        })
        .collect()
}
