//! `/api/v1/invitations`: invite someone by email to the key's
//! organisation with a role, list and revoke open invitations, and accept
//! one with its token.
//!
//! The token is random (as a verification token), shown once in the
//! response that creates the invitation, and stored only as its SHA-256;
//! it works once, until `invitations.expiry_days` after it was issued.
//! Accepting (`POST /invitations/accept`, no key needed: the token is the
//! credential) makes a member and hands out their first key for the
//! organisation, once:
//! - with a key in `Authorization`, its holder joins (an existing user);
//! - without one, a new user is made (named by `name`, default the invited
//!   address), owning an organisation of their own like every user, and
//!   joins.

use crate::access::auth::AuthUser;
use crate::access::keys;
use crate::access::member_roles;
use crate::access::principal::{widest_scope, KeyPrefix};
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::validation::{ListBody, PageQuery, Problems};
use crate::routes::api_keys::ApiKeyResponse;
use crate::state::AppState;
use crate::verification;
use actix_web::{web, HttpRequest, HttpResponse};
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde_json::json;
use uptime_db::organisations::Role;

pub mod mail;
mod shapes;
pub use shapes::*;

pub fn routes() -> Routes {
    // Longer paths first: `/invitations/{id}` takes no sub-paths, but
    // this keeps that from mattering.
    mail::routes().then(routes![
        list: ADMIN,
        create: ADMIN "the role is at most the inviter's; only owners invite owners",
        // Before `/invitations/{id}`, which would take `accept` for an id.
        accept: PUBLIC "the token is the credential; a key, if sent, says who joins",
        get: ADMIN,
        revoke: ADMIN,
    ])
}

/// Invite someone by email to the organisation: the invitation is made,
/// then its email sent (`mail.sent`; a relay that refuses or cannot be
/// reached still gives 201, with its error: pass the token on, or resend).
/// The token is in this response only.
#[utoipa::path(post, path = "/api/v1/invitations", operation_id = "createInvitation", tag = "members", request_body = CreateInvitation,
    responses((status = 201, body = CreatedInvitation),
        (status = 403, body = ErrorBody, description = "`forbidden` on `role`: the role is wider than the inviter may grant")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::http::validation::Json<CreateInvitation>,
) -> Result<HttpResponse, ApiError> {
    let email = body.email.trim().to_lowercase();
    let mut problems = Problems::new();
    if let Err(message) = crate::routes::contacts::check_email(&email) {
        problems.add("email", message);
    }
    problems.into_result()?;
    let role = Role::from(body.role);
    member_roles::may_grant(user.role, role)?;
    let token = verification::new_token();
    let digest = verification::digest(&token);
    let expires_at = Utc::now()
        + chrono::Duration::days(i64::from(state.settings.invitations.expiry_days.max(1)));
    let mut conn = state.conn().await?;
    // The transaction's closure takes its own copy; `user` names the
    // inviter in the email after the commit.
    let actor = user.clone();
    let created = conn
        .transaction::<_, ApiError, _>(|c| {
            let user = actor;
            async move {
                let (created, replaced) = uptime_db::invitations::create(
                    c,
                    uptime_db::invitations::NewInvitation {
                        org_id: user.org_id,
                        email: &email,
                        role,
                        token_sha256: &digest,
                        invited_by: user.user_id,
                        expires_at,
                    },
                )
                .await?;
                let mut changes = audit::changes(
                    None,
                    Some(&audit::shown(&InvitationResponse::of(
                        created.clone(),
                        None,
                    ))),
                );
                if let Some(replaced) = replaced {
                    changes["replaced_invitation_id"] =
                        json!({"before": null, "after": replaced.id});
                }
                audit::record(
                    c,
                    &user,
                    audit::action::CREATE,
                    audit::kind::INVITATION,
                    Some(created.id),
                    changes,
                )
                .await?;
                Ok(created)
            }
            .scope_boxed()
        })
        .await?;
    // After the commit: the invitation exists whether or not the relay
    // takes the email (the response says which, and carries the token).
    let mail = mail::send(&state, &created, &token, &user).await;
    Ok(crate::http::response::created(
        format!("/api/v1/invitations/{}", created.id),
        CreatedInvitation {
            invitation: InvitationResponse::of(created, Some(token)),
            mail,
        },
    ))
}

/// The organisation's open invitations (not accepted, revoked or expired)
/// by id, a page at a time (never the tokens).
#[utoipa::path(get, path = "/api/v1/invitations", operation_id = "listInvitations", tag = "members",
    params(PageQuery), responses((status = 200, body = InvitationList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.keyset()?;
    let mut conn = state.conn().await?;
    InvitationList::respond(
        page,
        |after, n| {
            uptime_db::invitations::list_open_page(&mut conn, user.org_id, Utc::now(), after, n)
        },
        |i| i.id,
        |i| InvitationResponse::of(i, None),
    )
    .await
}

/// One open invitation of the organisation (never the token).
#[utoipa::path(get, path = "/api/v1/invitations/{id}", operation_id = "getInvitation", tag = "members",
    params(("id" = i64, Path, description = "Invitation id")),
    responses((status = 200, body = InvitationResponse)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    let found = uptime_db::invitations::get_open(&mut conn, user.org_id, id, Utc::now())
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(InvitationResponse::of(found, None)))
}

/// Revoke an open invitation: its token stops working.
#[utoipa::path(delete, path = "/api/v1/invitations/{id}", operation_id = "revokeInvitation", tag = "members",
    params(("id" = i64, Path, description = "Invitation id")), responses((status = 204)))]
pub async fn revoke(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            let revoked = uptime_db::invitations::revoke(c, user.org_id, id)
                .await?
                .ok_or(ApiError::NotFound)?;
            audit::record(
                c,
                &user,
                audit::action::REVOKE,
                audit::kind::INVITATION,
                Some(id),
                json!({"revoked_at": {"before": null, "after": revoked.revoked_at}}),
            )
            .await?;
            Ok(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}

/// Accept an invitation: join the organisation and get a first key for it
/// (in this response only). With a key in `Authorization`, its holder
/// joins; without, a new user is made. No key is needed: the token is the
/// credential, and works once.
#[utoipa::path(post, path = "/api/v1/invitations/accept", operation_id = "acceptInvitation", tag = "members", request_body = AcceptInvitation,
    responses((status = 201, body = AcceptedInvitation, headers(("Location" = String, description = "The new member: `/api/v1/members/{user_id}`"))),
        (status = 401, body = ErrorBody, description = "`unauthorized`: an `Authorization` header with an unknown or revoked key"),
        (status = 403, body = ErrorBody, description = "`quota exceeded`: the organisation has as many keys as its quota allows"),
        (status = 404, body = ErrorBody, description = "`not found`: no open invitation has this token (unknown, used, revoked or expired)"),
        (status = 409, body = ErrorBody, description = "`conflict` on `token`: the key's holder is a member already")))]
pub async fn accept(
    state: web::Data<AppState>,
    req: HttpRequest,
    body: crate::http::validation::Json<AcceptInvitation>,
) -> Result<HttpResponse, ApiError> {
    let mut problems = Problems::new();
    if !verification::well_formed(&body.token) {
        problems.add("token", "is not an invitation token");
    }
    if let Some(name) = &body.name {
        problems.check_len("name", name, 200);
    }
    problems.into_result()?;
    // Who accepts: the holder of the key sent along, if any (a bad key is a
    // 401, not a new user).
    let existing = match req
        .headers()
        .contains_key(actix_web::http::header::AUTHORIZATION)
    {
        true => Some(crate::access::auth::authenticate_request(&req).await?),
        false => None,
    };
    let address = req.peer_addr().map(|a| a.ip());
    let digest = verification::digest(&body.token);
    let name = body.name.as_ref().map(|n| n.trim().to_string());
    let raw = keys::generate();
    let key_digest = keys::digest(&raw);
    let prefix = raw[..keys::SHOWN_PREFIX_LEN].to_string();
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let (role, key) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let now = Utc::now();
                let open = uptime_db::invitations::find_open(c, &digest, now)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let user_id = match existing {
                    Some(holder) => {
                        let member =
                            uptime_db::organisations::role_of(c, open.org_id, holder.user_id)
                                .await?;
                        if member.is_some() {
                            return Err(ApiError::ConflictOn {
                                field: "token",
                                message:
                                    "the key's holder is a member of this organisation already"
                                        .into(),
                            });
                        }
                        holder.user_id
                    }
                    None => {
                        let name = name.unwrap_or_else(|| open.email.clone());
                        uptime_db::users::create(c, &name).await?.id
                    }
                };
                // Settles it in one statement: a second acceptance finds
                // nothing, even one racing this.
                let invitation = uptime_db::invitations::accept(c, &digest, user_id, now)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let role = invitation.role().ok_or(ApiError::NotFound)?;
                uptime_db::organisations::add_member(c, invitation.org_id, user_id, role).await?;
                crate::quotas::ensure_room(
                    c,
                    &quotas,
                    invitation.org_id,
                    uptime_db::quotas::Owned::ApiKeys,
                )
                .await?;
                let scope = widest_scope(role);
                let key = uptime_db::api_keys::create(
                    c,
                    invitation.org_id,
                    user_id,
                    scope,
                    "invitation",
                    &prefix,
                    &key_digest,
                )
                .await?;
                // The new member is the actor, through the key just made.
                let member = AuthUser {
                    user_id,
                    org_id: invitation.org_id,
                    role,
                    scope,
                    key_id: key.id,
                    key_prefix: KeyPrefix::of(&prefix),
                    address,
                    // A key made by accepting reaches every monitor.
                    label_selector: None,
                };
                audit::record(
                    c,
                    &member,
                    audit::action::ACCEPT,
                    audit::kind::INVITATION,
                    Some(invitation.id),
                    json!({
                        "member": {"before": null, "after": {"user_id": user_id, "role": role}},
                        "api_key_id": {"before": null, "after": key.id},
                    }),
                )
                .await?;
                Ok((role, key))
            }
            .scope_boxed()
        })
        .await?;
    Ok(crate::http::response::created(
        format!("/api/v1/members/{}", key.user_id),
        AcceptedInvitation {
            org_id: key.org_id,
            user_id: key.user_id,
            role: role.into(),
            api_key: ApiKeyResponse::from_row(key, Some(raw)),
        },
    ))
}
