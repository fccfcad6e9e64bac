//! The invitation email, sent synchronously through `uptime_alerts`'s
//! email channel (the very sender test alerts use, with the gateway's
//! `[smtp]` settings), after the invitation's transaction has committed.
//!
//! Why not the notifier's delivery queue, which verification emails use
//! (durable, retried)? Its deliveries belong to an alert contact
//! (`alert_deliveries.contact_id` is NOT NULL and the notifier loads the
//! contact to know where to send); an invitation goes to an address that
//! is no contact. Carrying one would change the table, the notifier and
//! the delivery log's API. Sending here is small and loses nothing that
//! matters: the invitation is committed before the send, the response says
//! whether the email went out (`mail.sent`, with the relay's error) and
//! carries the token so the inviter can pass it on, and
//! `POST /invitations/{id}/resend` sends it again (with a new token).

use super::shapes::{EmailOutcome, InvitationResponse, ResentInvitation};
use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::verification;
use actix_web::{web, HttpResponse};
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde_json::json;
use std::time::Duration;
use uptime_alerts::{Channel, Destination, InvitationRequest, Outgoing, Sender};
use uptime_db::invitation_resends::{self, ResendRefusal};
use uptime_db::invitations::Invitation;

/// Bounds the (unused) HTTP client of the sender; SMTP has its own timeout.
const HTTP_TIMEOUT: Duration = Duration::from_secs(10);

pub fn routes() -> Routes {
    routes![resend: ADMIN "a new token; limited like verification resends"]
}

/// Sends the email of `invitation` carrying `token`, on behalf of
/// `inviter`. Never fails the request: a failure is the outcome's `error`.
pub async fn send(
    state: &AppState,
    invitation: &Invitation,
    token: &str,
    inviter: &AuthUser,
) -> EmailOutcome {
    let outcome = match try_send(state, invitation, token, inviter).await {
        Ok(()) => EmailOutcome {
            sent: true,
            error: None,
        },
        Err(error) => {
            // The error is the relay's answer or ours, never the token.
            tracing::warn!(invitation_id = invitation.id, %error, "invitation email not sent");
            EmailOutcome {
                sent: false,
                error: Some(error),
            }
        }
    };
    metrics::counter!("invitation_emails_total",
        "outcome" => if outcome.sent { "sent" } else { "failed" })
    .increment(1);
    outcome
}

async fn try_send(
    state: &AppState,
    invitation: &Invitation,
    token: &str,
    inviter: &AuthUser,
) -> Result<(), String> {
    let (organisation_name, inviter_name) = {
        let mut conn = state.conn().await.map_err(|e| e.to_string())?;
        let organisation = uptime_db::organisations::get(&mut conn, invitation.org_id)
            .await
            .map_err(|e| e.to_string())?
            .map(|o| o.name)
            .unwrap_or_default();
        let inviter = uptime_db::users::find(&mut conn, &inviter.user_id.to_string())
            .await
            .map_err(|e| e.to_string())?
            .map(|u| u.name)
            .unwrap_or_else(|_| format!("user {}", inviter.user_id));
        (organisation, inviter)
    };
    let request = InvitationRequest {
        organisation_name,
        inviter_name,
        role: invitation.role.clone(),
        expires_at: invitation.expires_at,
        accept_url: format!(
            "{}/api/v1/invitations/accept",
            state.settings.http.public_base_url.trim_end_matches('/')
        ),
        token: token.to_string(),
    };
    let sender = Sender::new(&state.settings.smtp, &state.settings.safety, HTTP_TIMEOUT)
        .map_err(|e| e.to_string())?;
    sender
        .send(
            Destination {
                channel: Channel::Email,
                value: &invitation.email,
                signing_secret: None,
                secret: None,
                options: &uptime_alerts::ProviderOptions::default(),
            },
            Outgoing::Invitation(&request),
        )
        .await
        .map(|_| ())
        .map_err(|e| e.message)
}

/// Send an open invitation's email again, with a new token (the previous
/// one stops working). At most one resend per invitation every
/// `verification_mail.per_contact_interval_secs`, and
/// `verification_mail.daily_cap_per_user` per organisation in 24 hours.
#[utoipa::path(post, path = "/api/v1/invitations/{id}/resend", operation_id = "resendInvitation", tag = "members",
    params(("id" = i64, Path, description = "Invitation id")),
    responses((status = 200, body = ResentInvitation),
        (status = 404, body = ErrorBody, description = "No open invitation with this id"),
        (status = 429, body = ErrorBody, description = "`too many requests`: a resend limit holds; `Retry-After` says when it frees")))]
pub async fn resend(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let token = verification::new_token();
    let digest = verification::digest(&token);
    let settings = &state.settings.verification_mail;
    let interval = Duration::from_secs(settings.per_contact_interval_secs);
    let cap = settings.daily_cap_per_user;
    let mut conn = state.conn().await?;
    let user_ref = &user;
    let reissued = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                // 404 before 429: an unknown id says nothing about limits.
                uptime_db::invitations::get_open(c, user_ref.org_id, id, Utc::now())
                    .await?
                    .ok_or(ApiError::NotFound)?;
                if let Err(refusal) =
                    invitation_resends::check_limits(c, user_ref.org_id, id, interval, cap).await?
                {
                    return Ok(Err(refusal));
                }
                let invitation =
                    invitation_resends::reissue_token(c, user_ref.org_id, id, &digest, Utc::now())
                        .await?
                        .ok_or(ApiError::NotFound)?;
                audit::record(
                    c,
                    user_ref,
                    audit::action::RESEND,
                    audit::kind::INVITATION,
                    Some(id),
                    json!({}),
                )
                .await?;
                Ok(Ok(invitation))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let invitation = reissued.map_err(|refusal| limited(&state, refusal))?;
    let mail = send(&state, &invitation, &token, &user).await;
    Ok(HttpResponse::Ok().json(ResentInvitation {
        invitation: InvitationResponse::of(invitation, Some(token)),
        mail,
    }))
}

fn limited(state: &AppState, refusal: ResendRefusal) -> ApiError {
    let settings = &state.settings.verification_mail;
    let message = match refusal {
        ResendRefusal::Interval { .. } => format!(
            "at most one resend per invitation every {} seconds",
            settings.per_contact_interval_secs
        ),
        ResendRefusal::DailyCap { .. } => format!(
            "at most {} invitation resends per organisation in 24 hours",
            settings.daily_cap_per_user
        ),
    };
    ApiError::MailLimited {
        retry_after_secs: refusal.retry_after().as_secs_f64().ceil().max(1.0) as u64,
        message,
    }
}
