//! `GET /api/v1/regions`: the deployment's regions and their live checkers.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::http::error::ApiError;
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use serde::Serialize;
use std::collections::BTreeMap;
use uptime_contracts::CheckerPresenceV1;
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![list: READ]
}

/// Whether a region has a live checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegionStatus {
    /// At least one checker announced itself within the presence TTL.
    Online,
    /// No checker announced itself within the presence TTL: its checks
    /// wait, and rounds do not count it as a failure.
    Offline,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RegionResponse {
    #[schema(example = "eu")]
    pub name: String,
    pub status: RegionStatus,
    /// Live checkers of the region.
    #[schema(minimum = 0)]
    pub checkers: u32,
    /// The latest announcement of a live checker; `null` while offline
    /// (announcements expire with the presence TTL).
    pub last_seen_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct RegionList {
    /// Every configured region and every region with a live checker, by name.
    pub regions: Vec<RegionResponse>,
}

/// The deployment's regions: each configured region (`regions.known`), and
/// any region a live checker announces that is not configured, with its live
/// checkers. A region is `offline` when no checker of it announced itself
/// within the presence TTL (`regions.presence_ttl_secs`, 30 s by default).
#[utoipa::path(get, path = "/api/v1/regions", operation_id = "listRegions", tag = "regions",
    responses((status = 200, body = RegionList)))]
pub async fn list(state: web::Data<AppState>, _user: AuthUser) -> Result<HttpResponse, ApiError> {
    let live = uptime_contracts::presence::live(&state.presence)
        .await
        .map_err(|e| ApiError::Unavailable(e.to_string()))?;
    Ok(HttpResponse::Ok().json(RegionList {
        regions: regions_of(&state.settings.regions.known, &live),
    }))
}

/// `known` and the regions of `live`, by name, with their live checkers.
fn regions_of(known: &[String], live: &[CheckerPresenceV1]) -> Vec<RegionResponse> {
    let mut by_name: BTreeMap<&str, (u32, Option<DateTime<Utc>>)> =
        known.iter().map(|k| (k.as_str(), (0, None))).collect();
    for checker in live {
        let (count, last) = by_name.entry(checker.region.as_str()).or_default();
        *count += 1;
        *last = (*last).max(Some(checker.seen_at));
    }
    by_name
        .into_iter()
        .map(|(name, (checkers, last_seen_at))| RegionResponse {
            name: name.to_string(),
            status: if checkers > 0 {
                RegionStatus::Online
            } else {
                RegionStatus::Offline
            },
            checkers,
            last_seen_at,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_and_seen_regions_by_name_with_their_checkers() {
        let at = |s: i64| DateTime::from_timestamp(1_800_000_000 + s, 0).unwrap();
        let live = [
            ("us", "c1", at(5)),
            ("eu", "c2", at(1)),
            ("eu", "c3", at(9)),
            ("zz", "c4", at(2)),
        ]
        .map(|(region, id, seen_at)| CheckerPresenceV1 {
            instance_id: id.into(),
            region: region.into(),
            seen_at,
        });
        let known = ["us", "ap", "eu"].map(String::from);
        let shown: Vec<_> = regions_of(&known, &live)
            .into_iter()
            .map(|r| (r.name, r.status, r.checkers, r.last_seen_at))
            .collect();
        assert_eq!(
            shown,
            [
                ("ap".into(), RegionStatus::Offline, 0, None),
                ("eu".into(), RegionStatus::Online, 2, Some(at(9))),
                ("us".into(), RegionStatus::Online, 1, Some(at(5))),
                ("zz".into(), RegionStatus::Online, 1, Some(at(2))),
            ]
        );
    }
}
