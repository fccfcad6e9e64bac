//! Email contact verification: a random token whose link goes out by email,
//! reliably (as a `verification` delivery the notifier sends with retries),
//! and works once. Only the token's SHA-256 is stored with the contact.

use crate::http::error::ApiError;
use crate::state::AppState;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use rand::RngCore;
use sha2::{Digest, Sha256};
use std::time::Duration;
use uptime_alerts::VerificationRequest;
use uptime_db::models::AlertContact;
use uptime_db::verification_limits::{Limits, Refusal};

/// Random bytes in a token; URL-safe base64 makes 43 characters of them.
const TOKEN_BYTES: usize = 32;
const TOKEN_CHARS: usize = 43;

/// A new verification token.
pub fn new_token() -> String {
    let mut bytes = [0u8; TOKEN_BYTES];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    URL_SAFE_NO_PAD.encode(bytes)
}

/// Whether `token` has the shape of one we issue (cheap refusal of junk).
pub fn well_formed(token: &str) -> bool {
    token.len() == TOKEN_CHARS
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

/// Hex SHA-256 of a token, as stored in `alert_contacts.verification_token_sha256`.
pub fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The link that verifies a contact.
pub fn verify_url(public_base_url: &str, token: &str) -> String {
    format!(
        "{}/api/v1/alert-contacts/verify/{token}",
        public_base_url.trim_end_matches('/')
    )
}

/// Issues a new verification token for an email contact and queues the email
/// carrying its link; earlier links stop working. Other contact types need
/// no verification. Not limited: the API goes through [`send_link`].
pub async fn request_email_verification(
    state: &AppState,
    contact: &AlertContact,
) -> Result<(), ApiError> {
    if contact.kind != "email" {
        return Ok(());
    }
    let mut conn = state.conn().await?;
    queue_link(&mut conn, state, contact).await
}

/// [`request_email_verification`] within the verification-mail limits
/// (`[verification_mail]`): `Ok(Err(refusal))` when one holds, and then
/// nothing is sent and the contact's token is left as it was. The limit is
/// recorded in the transaction that queues the email, so a failure to queue
/// uses up no place. `on_create`: the email a new contact is sent.
/// `resent_by`: a resend on request, audited in the same transaction (a
/// create or change that sends one is audited as that write).
pub async fn send_link(
    state: &AppState,
    contact: &AlertContact,
    on_create: bool,
    resent_by: Option<&crate::access::principal::AuthUser>,
) -> Result<Result<(), Refusal>, ApiError> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;

    if contact.kind != "email" {
        return Ok(Ok(()));
    }
    let settings = &state.settings.verification_mail;
    let limits = Limits {
        per_contact_interval: Duration::from_secs(settings.per_contact_interval_secs),
        daily_cap_per_user: settings.daily_cap_per_user,
    };
    let mut conn = state.conn().await?;
    let outcome = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let allowed = uptime_db::verification_limits::try_record(
                    c,
                    contact.org_id,
                    contact.id,
                    on_create,
                    limits,
                )
                .await?;
                if allowed.is_ok() {
                    queue_link(c, state, contact).await?;
                    if let Some(user) = resent_by {
                        crate::audit::record(
                            c,
                            user,
                            crate::audit::action::RESEND_VERIFICATION,
                            crate::audit::kind::ALERT_CONTACT,
                            Some(contact.id),
                            serde_json::json!({}),
                        )
                        .await?;
                    }
                }
                Ok(allowed)
            }
            .scope_boxed()
        })
        .await?;
    if let Err(refusal) = &outcome {
        metrics::counter!("verification_emails_limited_total").increment(1);
        tracing::info!(
            contact_id = contact.id,
            ?refusal,
            "verification email not sent: limit"
        );
    }
    Ok(outcome)
}

/// The `429` a request that must send a verification email answers while
/// `refusal` holds: `Retry-After` in whole seconds (at least 1), and the
/// limit named in `details`.
pub fn limited(state: &AppState, refusal: Refusal) -> ApiError {
    let settings = &state.settings.verification_mail;
    let message = match refusal {
        Refusal::ContactInterval { .. } => format!(
            "at most one verification email per contact every {} seconds",
            settings.per_contact_interval_secs
        ),
        Refusal::DailyCap { .. } => format!(
            "at most {} verification emails per organisation in 24 hours",
            settings.daily_cap_per_user
        ),
    };
    ApiError::MailLimited {
        retry_after_secs: refusal.retry_after().as_secs_f64().ceil().max(1.0) as u64,
        message,
    }
}

/// A new token, its digest stored with the contact, and the email queued.
async fn queue_link(
    conn: &mut diesel_async::AsyncPgConnection,
    state: &AppState,
    contact: &AlertContact,
) -> Result<(), ApiError> {
    let token = new_token();
    let request = VerificationRequest {
        contact_name: contact.name.clone(),
        verify_url: verify_url(&state.settings.http.public_base_url, &token),
    };
    let payload = serde_json::to_value(&request)
        .map_err(|e| ApiError::Internal(format!("verification payload: {e}")))?;
    let delivery_id =
        uptime_db::deliveries::request_verification(conn, contact.id, &digest(&token), &payload)
            .await?;
    tracing::info!(contact_id = contact.id, %delivery_id, "verification email queued");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_url_safe_and_unique() {
        let a = new_token();
        let b = new_token();
        assert_ne!(a, b);
        assert!(well_formed(&a), "{a}");
        assert!(!well_formed("short"));
        assert!(!well_formed(&format!("{}!", &a[..42])));
        assert_eq!(digest(&a).len(), 64);
        assert_eq!(
            verify_url("https://up.example.com/", &a),
            format!("https://up.example.com/api/v1/alert-contacts/verify/{a}")
        );
    }
}
