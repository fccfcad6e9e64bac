//! `/api/v1/monitors/{id}/escalation-policy`: the policy a monitor alerts
//! through, or none. Its own resource (the monitor's row and body stay as
//! they are); the monitor's row is locked while it changes, as a change of
//! its `alert_contact_ids` locks it, so "a policy or contacts, never both"
//! holds under concurrent requests.

use super::body::MonitorPolicyBody;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::escalation_policies as db;

/// 400 naming `alert_contact_ids` when monitor `monitor_id` alerts through
/// a policy (for a change that gives it contacts; call with its row locked).
pub(crate) async fn ensure_no_policy(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
) -> Result<(), ApiError> {
    match db::of_monitor(conn, monitor_id).await? {
        None => Ok(()),
        Some(policy) => Err(ApiError::invalid_field(
            "alert_contact_ids",
            format!(
                "the monitor alerts through escalation policy {policy}; a monitor points at a \
                 policy or at contacts, not both (PUT /api/v1/monitors/{monitor_id}/escalation-policy \
                 with null first)"
            ),
        )),
    }
}

pub fn routes() -> Routes {
    routes![get_monitor_policy: READ, set_monitor_policy: WRITE]
}

/// The escalation policy a monitor alerts through (`null`: none).
#[utoipa::path(get, path = "/api/v1/monitors/{id}/escalation-policy", operation_id = "getMonitorEscalationPolicy", tag = "escalation-policies",
    params(("id" = i64, Path, description = "Monitor id", minimum = 1)),
    responses((status = 200, body = MonitorPolicyBody)))]
pub async fn get_monitor_policy(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    uptime_db::monitors::get_within(&mut conn, user.reach(), id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let policy = db::of_monitor(&mut conn, id).await?;
    Ok(HttpResponse::Ok().json(MonitorPolicyBody {
        escalation_policy_id: policy,
    }))
}

/// Point a monitor at an escalation policy (`null`: at none). The monitor
/// must have no `alert_contact_ids` (400 naming `escalation_policy_id`):
/// its policy's first step is who its alerts reach.
#[utoipa::path(put, path = "/api/v1/monitors/{id}/escalation-policy", operation_id = "setMonitorEscalationPolicy", tag = "escalation-policies", request_body = MonitorPolicyBody,
    params(("id" = i64, Path, description = "Monitor id", minimum = 1)),
    responses((status = 200, body = MonitorPolicyBody), (status = 400, body = ErrorBody, description = "no such policy, or the monitor has alert_contact_ids (field `escalation_policy_id`)"), (status = 403, body = ErrorBody)))]
pub async fn set_monitor_policy(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<MonitorPolicyBody>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let wanted = body.into_inner().escalation_policy_id;
    let mut conn = state.conn().await?;
    let policy = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                uptime_db::monitors::get_for_update_within(c, user.reach(), id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let before = db::of_monitor(c, id).await?;
                if let Some(policy_id) = wanted {
                    // Locked: it cannot be deleted before this commits.
                    if db::get(c, user.org_id, policy_id, true).await?.is_none() {
                        return Err(ApiError::invalid_field(
                            "escalation_policy_id",
                            format!("no such escalation policy: {policy_id}"),
                        ));
                    }
                    let contacts = uptime_db::monitors::contact_ids_of(c, &[id])
                        .await?
                        .remove(&id)
                        .unwrap_or_default();
                    if !contacts.is_empty() {
                        return Err(ApiError::invalid_field(
                            "escalation_policy_id",
                            "the monitor alerts its alert_contact_ids directly; a monitor points \
                             at a policy or at contacts, not both (set alert_contact_ids to [] first)",
                        ));
                    }
                }
                if before != wanted {
                    db::set_for_monitor(c, id, wanted).await?;
                    audit::record(
                        c,
                        &user,
                        audit::action::UPDATE,
                        audit::kind::MONITOR,
                        Some(id),
                        serde_json::json!({
                            "escalation_policy_id": {"before": before, "after": wanted}
                        }),
                    )
                    .await?;
                }
                Ok(wanted)
            }
            .scope_boxed()
        })
        .await?;
    Ok(HttpResponse::Ok().json(MonitorPolicyBody {
        escalation_policy_id: policy,
    }))
}
