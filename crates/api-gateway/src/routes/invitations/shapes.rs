//! What the invitation routes take and answer (`super` and `super::mail`
//! both show an invitation; the shapes sit below them).

use crate::http::validation::list_body;
use crate::routes::api_keys::ApiKeyResponse;
use crate::routes::members::MemberRole;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_db::invitations::Invitation;
use uptime_db::organisations::Role;
use utoipa::ToSchema;

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateInvitation {
    /// Where the invitation goes (stored lowercased). Inviting an address
    /// again replaces its open invitation.
    #[schema(min_length = 3, max_length = 254)]
    pub email: String,
    /// The role the invitee gets: at most the inviter's (only owners invite
    /// owners).
    pub role: MemberRole,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct InvitationResponse {
    pub id: i64,
    pub org_id: i64,
    pub email: String,
    pub role: MemberRole,
    /// The member who invited.
    pub invited_by: i64,
    pub created_at: DateTime<Utc>,
    /// The token stops working then.
    pub expires_at: DateTime<Utc>,
    /// The token that accepts the invitation: only in the response that
    /// created it (give it to the invitee; `POST /api/v1/invitations/accept`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

impl InvitationResponse {
    pub(crate) fn of(invitation: Invitation, token: Option<String>) -> Self {
        Self {
            id: invitation.id,
            org_id: invitation.org_id,
            role: invitation.role().unwrap_or(Role::Viewer).into(),
            email: invitation.email,
            invited_by: invitation.invited_by,
            created_at: invitation.created_at,
            expires_at: invitation.expires_at,
            token,
        }
    }
}

/// The new invitation with its token, and whether its email went out.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedInvitation {
    #[serde(flatten)]
    pub invitation: InvitationResponse,
    /// Whether the invitation email went out. Not `email`, which is the
    /// invitation's address: a flattened key must not repeat one of the
    /// invitation's (until 2026-12-02 it did, and every answer had `email`
    /// twice).
    pub mail: EmailOutcome,
}

list_body!(InvitationList, invitations: InvitationResponse);

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AcceptInvitation {
    /// The invitation's token.
    #[schema(pattern = "^[A-Za-z0-9_-]{43}$")]
    pub token: String,
    /// A new user's name (1 to 200 characters; default: the invited
    /// address). Ignored when a key in `Authorization` says who accepts.
    #[schema(min_length = 1, max_length = 200)]
    #[serde(default)]
    pub name: Option<String>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct AcceptedInvitation {
    pub org_id: i64,
    pub user_id: i64,
    pub role: MemberRole,
    /// The member's first key for the organisation, with the widest scope
    /// their role allows; the raw key is in this response only.
    pub api_key: ApiKeyResponse,
}

/// Whether the invitation email went out.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct EmailOutcome {
    pub sent: bool,
    /// Why it was not sent (the relay's answer, or that it was unreachable).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The invitation with its new token (in this response only) and whether
/// the email went out.
#[derive(Debug, Serialize, ToSchema)]
pub struct ResentInvitation {
    #[serde(flatten)]
    pub invitation: InvitationResponse,
    /// Whether the email went out (not `email`: the invitation's address).
    pub mail: EmailOutcome,
}
