//! `/api/v1/monitors/{id}/badge-token`: the unguessable token that names a
//! monitor in its public badge URLs (`/badge/{token}/status.svg` on the
//! status-pages service). Never the monitor's id: ids are sequential, and a
//! badge shows a monitor's name and state to anyone with the URL. Only the
//! token's SHA-256 is stored; a new one replaces the old at once.

use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

/// The prefix of a badge token (then 43 base64url characters).
pub const BADGE_TOKEN_PREFIX: &str = "bdg_";

pub fn routes() -> Routes {
    routes![issue: WRITE, remove: WRITE]
}

/// A monitor's badge token and the URLs it opens.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedBadgeToken {
    pub monitor_id: i64,
    /// Shown this once (a new one can be issued at any time).
    pub token: String,
    /// Each badge's URL: `status`, `uptime-24h`, `uptime-7d`, `uptime-30d`,
    /// `uptime-90d`, `response-time-24h`, `response-time-7d` (SVG) and
    /// `shields` (shields.io endpoint JSON).
    pub urls: std::collections::BTreeMap<String, String>,
}

/// Issue a badge token for a monitor, replacing its earlier one (whose URLs
/// stop working at the status-pages service's next refresh).
#[utoipa::path(post, path = "/api/v1/monitors/{id}/badge-token", operation_id = "issueBadgeToken", tag = "status-pages",
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 200, body = IssuedBadgeToken)))]
pub async fn issue(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let monitor_id = id.into_inner();
    let token = format!("{BADGE_TOKEN_PREFIX}{}", crate::verification::new_token());
    let digest = crate::verification::digest(&token);
    write_token(&state, &user, monitor_id, Some(&digest)).await?;
    let base = state
        .settings
        .status_pages
        .public_base_url
        .trim_end_matches('/')
        .to_string();
    let urls = [
        "status.svg",
        "uptime-24h.svg",
        "uptime-7d.svg",
        "uptime-30d.svg",
        "uptime-90d.svg",
        "response-time-24h.svg",
        "response-time-7d.svg",
        "shields.json",
    ]
    .into_iter()
    .map(|file| {
        let name = file
            .trim_end_matches(".svg")
            .trim_end_matches(".json")
            .to_string();
        (name, format!("{base}/badge/{token}/{file}"))
    })
    .collect();
    Ok(HttpResponse::Ok().json(IssuedBadgeToken {
        monitor_id,
        token,
        urls,
    }))
}

/// Remove a monitor's badge token: its badge URLs stop working.
#[utoipa::path(delete, path = "/api/v1/monitors/{id}/badge-token", operation_id = "removeBadgeToken", tag = "status-pages",
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 204), (status = 404, body = ErrorBody, description = "`not found`: no such monitor, or it has no badge token")))]
pub async fn remove(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    write_token(&state, &user, id.into_inner(), None).await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Sets the monitor's badge token to the one of `digest`, or with `None`
/// removes it, with its audit entry, in one transaction. 404 for a monitor
/// the key does not reach (its label selector narrows which it may badge)
/// or, removing, one without a token.
async fn write_token(
    state: &AppState,
    user: &AuthUser,
    monitor_id: i64,
    digest: Option<&str>,
) -> Result<(), ApiError> {
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            uptime_db::monitors::get_within(c, user.reach(), monitor_id)
                .await?
                .ok_or(ApiError::NotFound)?;
            let (written, action, token) = match digest {
                Some(digest) => (
                    uptime_db::status_pages::set_badge_token(c, user.org_id, monitor_id, digest)
                        .await?,
                    audit::action::ROTATE,
                    json!({"before": null, "after": "[set]"}),
                ),
                None => (
                    uptime_db::status_pages::delete_badge_token(c, user.org_id, monitor_id).await?,
                    audit::action::DELETE,
                    json!({"before": "[removed]", "after": null}),
                ),
            };
            if !written {
                return Err(ApiError::NotFound);
            }
            let changes = json!({ "token": token });
            let kind = audit::kind::MONITOR_BADGE;
            audit::record(c, user, action, kind, Some(monitor_id), changes).await
        }
        .scope_boxed()
    })
    .await
}
