//! `GET /api/v1/usage`: what the caller uses of each of their quotas, and
//! the limits (their operator's overrides, else the deployment's defaults).

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::ApiError;
use crate::quotas::{checks_per_minute_limit, limit};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use serde::Serialize;
use uptime_db::quotas::Owned;
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![get: READ]
}

/// How many the caller has of something, and how many they may have.
#[derive(Debug, Serialize, ToSchema)]
pub struct Counted {
    #[schema(minimum = 0)]
    pub used: i64,
    #[schema(minimum = 0)]
    pub limit: i64,
}

/// The checks per minute the caller's active monitors make, and their budget.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChecksPerMinute {
    /// The sum over active monitors of regions × 60 / interval_secs
    /// (heartbeats and paused monitors count nothing), each monitor rounded
    /// up to a thousandth.
    #[schema(minimum = 0, example = 12.5)]
    pub used: f64,
    #[schema(minimum = 0)]
    pub limit: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct Usage {
    pub monitors: Counted,
    pub checks_per_minute: ChecksPerMinute,
    pub alert_contacts: Counted,
    /// Unrevoked keys.
    pub api_keys: Counted,
}

/// The caller's use of each quota beside its limit.
///
/// `monitors`, `alert_contacts` and `api_keys` (unrevoked) count what the
/// caller has; `checks_per_minute` is the load of their active monitors:
/// each costs its regions × 60 / interval_secs (a monitor naming no regions
/// costs the deployment's default regions as they were when it was last
/// written), heartbeats and paused monitors nothing. A create or change past
/// a limit is `403 quota exceeded`, naming the quota in `details`; a change
/// that lowers or keeps the load is always allowed, so `used` may exceed a
/// `limit` an operator lowered. Limits are the deployment's defaults unless
/// an operator set the caller's own.
#[utoipa::path(get, path = "/api/v1/usage", operation_id = "getUsage", tag = "usage",
    responses((status = 200, body = Usage)))]
pub async fn get(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    // One statement: the kept monitor count and load, the contacts and keys
    // counted, the overrides.
    let usage = uptime_db::quotas::usage(&mut conn, user.org_id)
        .await?
        // The key's user was deleted since the key was checked.
        .ok_or(ApiError::Unauthorized)?;
    drop(conn);
    let defaults = &state.settings.quotas;
    let counted = |used: i64, what: Owned| Counted {
        used,
        limit: limit(defaults, &usage.overrides, what),
    };
    Ok(HttpResponse::Ok().json(Usage {
        monitors: counted(usage.monitors, Owned::Monitors),
        checks_per_minute: ChecksPerMinute {
            used: usage.check_load_millis as f64 / 1000.0,
            limit: checks_per_minute_limit(defaults, &usage.overrides),
        },
        alert_contacts: counted(usage.alert_contacts, Owned::AlertContacts),
        api_keys: counted(usage.api_keys, Owned::ApiKeys),
    }))
}
