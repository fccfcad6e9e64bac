//! `/api/v1/organisation`: the key's organisation, read, renamed (admins)
//! and deleted (owners; with its name as confirmation, so a stray request
//! cannot do it). Deleting removes everything of the organisation in one
//! statement (`uptime_db::organisations::delete` says how far it reaches)
//! and makes every gateway forget its keys.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::validation::Problems;
use crate::routes::members::MemberRole;
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![get: READ, rename: ADMIN, delete: OWNER]
}

/// What the organisation holds.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrganisationCounts {
    pub members: i64,
    pub monitors: i64,
    pub alert_contacts: i64,
    /// Unrevoked keys of every member.
    pub api_keys: i64,
    /// Invitations neither accepted, revoked nor expired.
    pub open_invitations: i64,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct OrganisationResponse {
    pub id: i64,
    pub name: String,
    pub created_at: DateTime<Utc>,
    /// The caller's role in it.
    pub role: MemberRole,
    pub counts: OrganisationCounts,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameOrganisation {
    /// 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteOrganisation {
    /// The organisation's current name, exactly: the confirmation.
    #[schema(min_length = 1, max_length = 200)]
    pub confirm_name: String,
}

/// Only the fields a rename changes, for the audit log.
#[derive(Serialize)]
struct Shown<'a> {
    id: i64,
    name: &'a str,
}

/// The key's organisation: its name, the caller's role and what it holds.
#[utoipa::path(get, path = "/api/v1/organisation", operation_id = "getOrganisation", tag = "organisation",
    responses((status = 200, body = OrganisationResponse)))]
pub async fn get(state: web::Data<AppState>, user: AuthUser) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let organisation = uptime_db::organisations::get(&mut conn, user.org_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let counts = uptime_db::organisations::counts(&mut conn, user.org_id).await?;
    let open_invitations =
        uptime_db::invitations::count_open(&mut conn, user.org_id, Utc::now()).await?;
    Ok(HttpResponse::Ok().json(OrganisationResponse {
        id: organisation.id,
        name: organisation.name,
        created_at: organisation.created_at,
        role: user.role.into(),
        counts: OrganisationCounts {
            members: counts.members,
            monitors: counts.monitors,
            alert_contacts: counts.alert_contacts,
            api_keys: counts.api_keys,
            open_invitations,
        },
    }))
}

/// Rename the organisation.
#[utoipa::path(patch, path = "/api/v1/organisation", operation_id = "renameOrganisation", tag = "organisation", request_body = RenameOrganisation,
    responses((status = 204)))]
pub async fn rename(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::http::validation::Json<RenameOrganisation>,
) -> Result<HttpResponse, ApiError> {
    let mut problems = Problems::new();
    problems.check_len("name", &body.name, 200);
    problems.into_result()?;
    let name = body.name.trim().to_string();
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            let before = uptime_db::organisations::get(c, user.org_id)
                .await?
                .ok_or(ApiError::NotFound)?;
            let shown = |o: &uptime_db::organisations::Organisation| {
                audit::shown(&Shown {
                    id: o.id,
                    name: &o.name,
                })
            };
            let (before, name) = (shown(&before), &name);
            // The same name again writes nothing (`audit::update`).
            audit::update(
                c,
                &user,
                audit::kind::ORGANISATION,
                Some(user.org_id),
                &before,
                move |c| {
                    async move {
                        let after = uptime_db::organisations::rename(c, user.org_id, name)
                            .await?
                            .ok_or(ApiError::NotFound)?;
                        Ok(((), shown(&after)))
                    }
                    .scope_boxed()
                },
            )
            .await?;
            Ok(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Delete the organisation and everything of it: monitors (their results
/// become unreachable and expire with their day), alert contacts and their
/// deliveries, members' keys, invitations, quotas and the audit log (the
/// deletion's own entry is published on NATS). Members stay users.
#[utoipa::path(delete, path = "/api/v1/organisation", operation_id = "deleteOrganisation", tag = "organisation", request_body = DeleteOrganisation,
    responses((status = 204), (status = 400, body = ErrorBody, description = "`invalid request body`: no body, or `confirm_name` is not the organisation's name")))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::http::validation::Json<DeleteOrganisation>,
) -> Result<HttpResponse, ApiError> {
    let confirm_name = body.confirm_name.clone();
    let mut conn = state.conn().await?;
    let keys = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                uptime_db::members::lock(c, user.org_id).await?;
                let organisation = uptime_db::organisations::get(c, user.org_id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                if organisation.name != confirm_name {
                    return Err(ApiError::invalid_field(
                        "confirm_name",
                        "must be the organisation's name, exactly",
                    ));
                }
                let shown = audit::shown(&Shown {
                    id: organisation.id,
                    name: &organisation.name,
                });
                // Recorded first: the entry itself goes with the
                // organisation, its outbox row (the published event) stays.
                audit::record(
                    c,
                    &user,
                    audit::action::DELETE,
                    audit::kind::ORGANISATION,
                    Some(user.org_id),
                    audit::changes(Some(&shown), None),
                )
                .await?;
                uptime_db::organisations::delete(c, user.org_id)
                    .await?
                    .ok_or(ApiError::NotFound)
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    crate::access::key_revocations::forget_everywhere(&state, &keys).await;
    Ok(HttpResponse::NoContent().finish())
}
