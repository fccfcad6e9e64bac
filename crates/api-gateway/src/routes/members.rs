//! `/api/v1/members`: the members of the key's organisation, their roles
//! changed, removed, and leaving (removing oneself). Who may do what to
//! whom is `crate::access::member_roles`; every change is audited in its
//! transaction, and the member's keys are forgotten by every gateway after
//! it commits (a removal deletes them; a role change narrows or widens
//! them, and cached principals hold the role).

use crate::access::auth::AuthUser;
use crate::access::member_roles;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::validation::{list_body, ListBody, PageQuery};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use serde_json::json;
use uptime_db::members::Member;
use uptime_db::organisations::{Role, Scope};
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![list: READ,
        get: READ,
        update: ADMIN "an admin grants at most admin and changes editors and viewers only",
        remove: WRITE "your own id leaves; another member needs admin, and an owner or admin needs an owner",]
}

/// A member's role: `owner` (members, owners, deleting the organisation),
/// `admin` (everything but what is the owners'), `editor` (resources and
/// their own keys), `viewer` (reads only).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum MemberRole {
    Owner,
    Admin,
    Editor,
    Viewer,
}

impl From<MemberRole> for Role {
    fn from(role: MemberRole) -> Self {
        match role {
            MemberRole::Owner => Role::Owner,
            MemberRole::Admin => Role::Admin,
            MemberRole::Editor => Role::Editor,
            MemberRole::Viewer => Role::Viewer,
        }
    }
}

impl From<Role> for MemberRole {
    fn from(role: Role) -> Self {
        match role {
            Role::Owner => MemberRole::Owner,
            Role::Admin => MemberRole::Admin,
            Role::Editor => MemberRole::Editor,
            Role::Viewer => MemberRole::Viewer,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct MemberResponse {
    pub user_id: i64,
    pub name: String,
    pub role: MemberRole,
    /// When they joined the organisation.
    pub joined_at: DateTime<Utc>,
}

impl MemberResponse {
    /// `None` for a role this build does not know (never stored: checked).
    pub(crate) fn of(member: Member) -> Option<Self> {
        Some(Self {
            user_id: member.user_id,
            name: member.name,
            role: member.role?.into(),
            joined_at: member.joined_at,
        })
    }
}

list_body!(MemberList, members: MemberResponse);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMember {
    /// The member's new role. An admin gives at most `admin` and changes
    /// only editors and viewers; owners change anyone. The last owner
    /// cannot be demoted (409).
    pub role: MemberRole,
}

/// The organisation's members by user id, a page at a time.
#[utoipa::path(get, path = "/api/v1/members", operation_id = "listMembers", tag = "members",
    params(PageQuery), responses((status = 200, body = MemberList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.keyset()?;
    let mut conn = state.conn().await?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| uptime_db::members::list_page(&mut conn, user.org_id, after, n),
            |m| m.user_id,
        )
        .await?;
    let members = rows.into_iter().filter_map(MemberResponse::of).collect();
    Ok(HttpResponse::Ok().json(MemberList::of(members, next_cursor)))
}

/// One member of the organisation, by user id.
#[utoipa::path(get, path = "/api/v1/members/{id}", operation_id = "getMember", tag = "members",
    params(("id" = i64, Path, description = "The member's user id")),
    responses((status = 200, body = MemberResponse)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let member = uptime_db::members::get(&mut conn, user.org_id, id.into_inner())
        .await?
        .and_then(MemberResponse::of)
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(member))
}

/// Change a member's role. Their keys act with the new role from the next
/// request on (a key never acts beyond its holder's role).
#[utoipa::path(patch, path = "/api/v1/members/{id}", operation_id = "updateMember", tag = "members", request_body = UpdateMember,
    params(("id" = i64, Path, description = "The member's user id")),
    responses((status = 200, body = MemberResponse),
        (status = 403, body = ErrorBody, description = "`forbidden` on `role`: the caller's role may not grant this role or manage this member"),
        (status = 409, body = ErrorBody, description = "`conflict` on `role`: the member is the organisation's last owner")))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::http::validation::Json<UpdateMember>,
) -> Result<HttpResponse, ApiError> {
    let (target_id, role) = (id.into_inner(), Role::from(body.role));
    let mut conn = state.conn().await?;
    let (member, keys) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let (before, current) = locked_member(c, user.org_id, target_id).await?;
                member_roles::may_manage(user.role, current)?;
                member_roles::may_grant(user.role, role)?;
                let owners = uptime_db::members::owner_count(c, user.org_id).await?;
                member_roles::keeps_an_owner(current, role != Role::Owner, owners)?;
                let after = Member {
                    role: Some(role),
                    ..before.clone()
                };
                let before_shown = audit::shown(&MemberResponse::of(before));
                let after_shown = audit::shown(&MemberResponse::of(after.clone()));
                let changed = audit::update(
                    c,
                    &user,
                    audit::kind::MEMBER,
                    Some(target_id),
                    &before_shown,
                    move |c| {
                        async move {
                            uptime_db::members::set_role(c, user.org_id, target_id, role).await?;
                            Ok(((), after_shown))
                        }
                        .scope_boxed()
                    },
                )
                .await?
                .is_some();
                // The same role: nothing written, no key to forget.
                let keys = if changed {
                    uptime_db::members::keys_of(c, user.org_id, target_id).await?
                } else {
                    Vec::new()
                };
                Ok((after, keys))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    crate::access::key_revocations::forget_everywhere(&state, &keys).await;
    let member = MemberResponse::of(member).ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(member))
}

/// The organisation's member `user_id` with their role, after locking the
/// organisation (`uptime_db::members::lock`: decisions about its members,
/// such as how many owners are left, are made one at a time); 404 when
/// there is none.
async fn locked_member(
    c: &mut diesel_async::AsyncPgConnection,
    org_id: i64,
    user_id: i64,
) -> Result<(Member, Role), ApiError> {
    uptime_db::members::lock(c, org_id).await?;
    let member = uptime_db::members::get(c, org_id, user_id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let role = member.role.ok_or(ApiError::NotFound)?;
    Ok((member, role))
}

/// Remove a member, or leave (your own user id). Their keys of this
/// organisation are deleted with the membership. Removing another member
/// needs the `admin` scope (and an owner's key for owners and admins);
/// the last owner can neither leave nor be removed (409).
#[utoipa::path(delete, path = "/api/v1/members/{id}", operation_id = "removeMember", tag = "members",
    params(("id" = i64, Path, description = "The member's user id (yours: leave)")),
    responses((status = 204),
        (status = 403, body = ErrorBody, description = "`forbidden`: removing another member needs the `admin` scope (`scope`), and owners and admins an owner (`role`)"),
        (status = 409, body = ErrorBody, description = "`conflict` on `role`: the member is the organisation's last owner")))]
pub async fn remove(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let target_id = id.into_inner();
    let leaving = target_id == user.user_id;
    let mut conn = state.conn().await?;
    let keys = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let (before, current) = locked_member(c, user.org_id, target_id).await?;
                // After the lookup, like revoking a key: a member that does
                // not exist is 404 to every key.
                if !leaving && user.scope < Scope::Admin {
                    return Err(crate::api::scopes::forbidden(
                        "removing another member needs the admin scope",
                    ));
                }
                if !leaving {
                    member_roles::may_manage(user.role, current)?;
                }
                let owners = uptime_db::members::owner_count(c, user.org_id).await?;
                member_roles::keeps_an_owner(current, true, owners)?;
                let keys = uptime_db::members::remove(c, user.org_id, target_id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let mut changes =
                    audit::changes(Some(&audit::shown(&MemberResponse::of(before))), None);
                changes["api_key_ids"] = json!({
                    "before": keys.iter().map(|k| k.id).collect::<Vec<_>>(),
                    "after": null,
                });
                audit::record(
                    c,
                    &user,
                    if leaving {
                        audit::action::LEAVE
                    } else {
                        audit::action::DELETE
                    },
                    audit::kind::MEMBER,
                    Some(target_id),
                    changes,
                )
                .await?;
                Ok(keys)
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    crate::access::key_revocations::forget_everywhere(&state, &keys).await;
    Ok(HttpResponse::NoContent().finish())
}
