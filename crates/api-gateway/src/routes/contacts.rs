//! `/api/v1/alert-contacts`: create, list, read, update and delete the
//! caller's alert contacts.
//!
//! - email contacts start unverified and are sent a verification link
//!   ([`crate::verification`]); changing the address makes them unverified
//!   again and sends a new link. A PATCH that does not change the address
//!   sends nothing; `POST /alert-contacts/{id}/resend-verification` replaces
//!   a lost message.
//! - verification emails are limited (`[verification_mail]`: one per contact
//!   per interval, not counting the one sent on creation, and a daily cap per
//!   user), so the API cannot be used to mail strangers. Creating a contact
//!   or changing its address while a limit holds still saves it (the change
//!   is what the user asked for; the email is a side effect they can ask for
//!   again) and answers `verification_link_sent: false`; the resend endpoint,
//!   whose only job is the email, answers `429` with `Retry-After`.
//! - slack and webhook contacts are verified at creation. Their `value` is an
//!   `https://` URL (`http://` only where private targets are allowed), and
//!   literal loopback/private/link-local/metadata hosts are refused unless
//!   private targets are allowed; names that resolve there are refused at
//!   delivery time.
//! - webhook contacts get a signing secret (`whsec_` + base64 of 32 random
//!   bytes) shown in their responses; it survives changes of the URL.
//! - `type` cannot change (a contact of another type is a new contact): a
//!   PATCH may repeat the current type but not give another.

use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::{double_option, not_null, paginate, PageQuery, Problems, UrlRules};
use actix_web::{web, HttpResponse};
use base64::Engine;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use uptime_db::contacts::ContactUpdate;
use uptime_db::models::{AlertContact, NewAlertContact};
use utoipa::ToSchema;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/alert-contacts").get(list).post(create))
        .service(
            web::resource("/alert-contacts/{id}")
                .get(get)
                .patch(update)
                .delete(delete),
        )
        .service(
            web::resource("/alert-contacts/{id}/resend-verification").post(resend_verification),
        );
}

const MAX_NAME_CHARS: usize = 200;
const MAX_EMAIL_CHARS: usize = 254;
const SIGNING_SECRET_PREFIX: &str = "whsec_";

/// The channel of a contact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ContactType {
    /// `value` is an email address; needs verification before it receives alerts.
    Email,
    /// `value` is a Slack incoming-webhook URL.
    Slack,
    /// `value` is a URL that receives signed JSON POSTs.
    Webhook,
}

impl ContactType {
    fn as_str(self) -> &'static str {
        match self {
            ContactType::Email => "email",
            ContactType::Slack => "slack",
            ContactType::Webhook => "webhook",
        }
    }

    fn from_db(s: &str) -> Result<Self, ApiError> {
        match s {
            "email" => Ok(ContactType::Email),
            "slack" => Ok(ContactType::Slack),
            "webhook" => Ok(ContactType::Webhook),
            other => Err(ApiError::Internal(format!(
                "contact type {other:?} in the database"
            ))),
        }
    }
}

/// A new alert contact.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateContact {
    /// 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ContactType,
    /// email: an address (at most 254 characters). slack, webhook: an
    /// `https://` URL (`http://` only where private targets are allowed), at
    /// most 2048 characters.
    #[schema(min_length = 1, max_length = 2048)]
    pub value: String,
}

/// A partial update: fields left out keep their value.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateContact {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 200)]
    pub name: Option<Option<String>>,
    /// May only repeat the current type.
    #[serde(default, rename = "type", deserialize_with = "double_option")]
    #[schema(value_type = ContactType, required = false)]
    pub kind: Option<Option<ContactType>>,
    /// A new email address makes the contact unverified and sends a new verification link.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 2048)]
    pub value: Option<Option<String>>,
}

/// An alert contact.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactResponse {
    pub id: i64,
    /// The organisation that owns the contact.
    pub org_id: i64,
    /// Deprecated: the owning organisation's id (`org_id`), which is its
    /// first owner's user id for accounts from before organisations.
    #[schema(deprecated)]
    pub user_id: i64,
    #[serde(rename = "type")]
    pub kind: ContactType,
    pub name: String,
    pub value: String,
    /// Only verified contacts receive alerts.
    pub verified: bool,
    /// Email contacts only: whether a verification link for the current
    /// address was sent and is not used yet. `false` on an unverified contact
    /// means no email went out because a verification-email limit held:
    /// request one with `POST /api/v1/alert-contacts/{id}/resend-verification`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verification_link_sent: Option<bool>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Webhook contacts only: the `whsec_...` secret that signs every request
    /// (Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_secret: Option<String>,
}

impl ContactResponse {
    fn from_row(c: AlertContact) -> Result<Self, ApiError> {
        let kind = ContactType::from_db(&c.kind)?;
        Ok(Self {
            id: c.id,
            org_id: c.org_id,
            user_id: c.org_id,
            kind,
            name: c.name,
            value: c.value,
            verified: c.verified,
            verification_link_sent: (kind == ContactType::Email)
                .then_some(c.verification_token_sha256.is_some()),
            created_at: c.created_at,
            updated_at: c.updated_at,
            signing_secret: c.signing_secret.filter(|_| kind == ContactType::Webhook),
        })
    }
}

/// One page of alert contacts.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactList {
    pub alert_contacts: Vec<ContactResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// Adds a problem unless `value` suits a contact of type `kind`.
fn check_value(problems: &mut Problems, kind: ContactType, value: &str, allow_private: bool) {
    match kind {
        ContactType::Email => {
            if let Err(message) = check_email(value) {
                problems.add("value", message);
            }
        }
        ContactType::Slack | ContactType::Webhook => problems.check_url(
            "value",
            value,
            UrlRules {
                allow_http: allow_private,
                allow_private_hosts: allow_private,
            },
        ),
    }
}

/// A plausible address: one `@`, a non-empty local part, a domain with a dot
/// (not at either end, never doubled), no whitespace or control characters,
/// at most 254 characters. Whether it exists is what verification finds out.
pub(crate) fn check_email(value: &str) -> Result<(), String> {
    const PLAUSIBLE: &str = "must be an email address like name@example.com";
    if value.chars().count() > MAX_EMAIL_CHARS {
        return Err(format!("must be at most {MAX_EMAIL_CHARS} characters"));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(PLAUSIBLE.into());
    }
    let Some((local, domain)) = value.split_once('@') else {
        return Err(PLAUSIBLE.into());
    };
    let domain_ok = domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && !domain.contains('@');
    if local.is_empty() || !domain_ok {
        return Err(PLAUSIBLE.into());
    }
    Ok(())
}

/// `whsec_` + standard base64 of 32 bytes from the OS's CSPRNG.
fn new_signing_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "{SIGNING_SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// Sends the verification link (within the limits) and answers the contact
/// as stored afterwards (issuing a link updates the row). The contact is
/// committed by then, so a limit or a failure is not an error answer (a
/// retried create would make a duplicate): the contact shows
/// `verification_link_sent: false`, and the resend endpoint sends it later.
async fn request_verification(
    state: &AppState,
    contact: AlertContact,
    on_create: bool,
) -> AlertContact {
    match crate::verification::send_link(state, &contact, on_create, None).await {
        Ok(Ok(())) => {}
        // Logged by `send_link`; the row is unchanged.
        Ok(Err(_)) => return contact,
        Err(error) => {
            tracing::warn!(
                contact_id = contact.id,
                ?error,
                "email verification not requested"
            );
            return contact;
        }
    }
    let reread = match state.conn().await {
        Ok(mut conn) => uptime_db::contacts::get(&mut conn, contact.org_id, contact.id)
            .await
            .map_err(ApiError::from),
        Err(e) => Err(e),
    };
    match reread {
        Ok(Some(stored)) => stored,
        // Deleted in the meantime: answer what was written.
        Ok(None) => contact,
        Err(error) => {
            tracing::warn!(
                contact_id = contact.id,
                ?error,
                "contact not re-read after verification request"
            );
            contact
        }
    }
}

/// Create an alert contact. Email contacts are sent a verification link,
/// unless the user's daily verification-email cap holds: the contact is
/// created all the same, with `verification_link_sent: false` (ask for the
/// link later with `POST /api/v1/alert-contacts/{id}/resend-verification`).
#[utoipa::path(post, path = "/api/v1/alert-contacts", operation_id = "createContact", tag = "alert-contacts", request_body = CreateContact,
    security(("bearer" = [])),
    responses((status = 201, body = ContactResponse, description = "created; email contacts: `verification_link_sent` says whether the link went out"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "quota exceeded: the user owns as many as their quota allows"),
        (status = 413, body = ErrorBody)))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateContact>,
) -> Result<HttpResponse, ApiError> {
    let req = body.into_inner();
    let value = req.value.trim().to_string();
    let mut problems = Problems::new();
    problems.check_len("name", &req.name, MAX_NAME_CHARS);
    check_value(
        &mut problems,
        req.kind,
        &value,
        state.settings.safety.allow_private_targets,
    );
    problems.into_result()?;

    let new = NewAlertContact {
        org_id: user.org_id,
        kind: req.kind.as_str().to_string(),
        name: req.name.trim().to_string(),
        value,
        verified: req.kind != ContactType::Email,
        verification_token_sha256: None,
        signing_secret: (req.kind == ContactType::Webhook).then(new_signing_secret),
    };
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let mut row = {
        use diesel_async::scoped_futures::ScopedFutureExt;
        use diesel_async::AsyncConnection;
        conn.transaction::<_, ApiError, _>(|c| {
            async move {
                crate::quotas::ensure_room(
                    c,
                    &quotas,
                    user.org_id,
                    uptime_db::quotas::Owned::AlertContacts,
                )
                .await?;
                let row = uptime_db::contacts::create(c, &new).await?;
                let shown = audit::shown(&ContactResponse::from_row(row.clone())?);
                audit::record(
                    c,
                    &user,
                    audit::action::CREATE,
                    audit::kind::ALERT_CONTACT,
                    Some(row.id),
                    audit::changes(None, Some(&shown)),
                )
                .await?;
                Ok(row)
            }
            .scope_boxed()
        })
        .await?
    };
    drop(conn);
    if req.kind == ContactType::Email {
        row = request_verification(&state, row, true).await;
    }
    Ok(HttpResponse::Created()
        .insert_header((
            actix_web::http::header::LOCATION,
            format!("/api/v1/alert-contacts/{}", row.id),
        ))
        .json(ContactResponse::from_row(row)?))
}

/// List the caller's alert contacts in id order, a page at a time.
#[utoipa::path(get, path = "/api/v1/alert-contacts", operation_id = "listContacts", tag = "alert-contacts", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, body = ContactList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.validate()?;
    let mut conn = state.conn().await?;
    let rows =
        uptime_db::contacts::list_page(&mut conn, user.org_id, page.after_id, page.limit + 1)
            .await?;
    let (rows, next_cursor) = paginate(rows, page.limit, |c| c.id);
    Ok(HttpResponse::Ok().json(ContactList {
        alert_contacts: rows
            .into_iter()
            .map(ContactResponse::from_row)
            .collect::<Result<_, _>>()?,
        next_cursor,
    }))
}

/// Read one of the caller's alert contacts.
#[utoipa::path(get, path = "/api/v1/alert-contacts/{id}", operation_id = "getContact", tag = "alert-contacts", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 200, body = ContactResponse), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let row = uptime_db::contacts::get(&mut conn, user.org_id, id.into_inner())
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Ok().json(ContactResponse::from_row(row)?))
}

/// Change the name or value of one of the caller's alert contacts. A new
/// email address makes the contact unverified and sends a link to it; the
/// same address again sends nothing. While a verification-email limit holds
/// the change is saved all the same and no email goes out: the answer shows
/// `verification_link_sent: false` (a `PATCH` is about the contact; the email
/// can be asked for again with `POST .../resend-verification`, which answers
/// `429` with `Retry-After` until the limit lifts).
#[utoipa::path(patch, path = "/api/v1/alert-contacts/{id}", operation_id = "updateContact", tag = "alert-contacts", request_body = UpdateContact,
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 200, body = ContactResponse, description = "saved; email contacts: `verification_link_sent` says whether a link for the current address is out"), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<UpdateContact>,
) -> Result<HttpResponse, ApiError> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;

    let id = id.into_inner();
    let patch = body.into_inner();
    let allow_private = state.settings.safety.allow_private_targets;
    let mut conn = state.conn().await?;
    let (mut row, send_verification) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = uptime_db::contacts::get_for_update(c, user.org_id, id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let before = audit::shown(&ContactResponse::from_row(stored.clone())?);
                let kind = ContactType::from_db(&stored.kind)?;
                let mut problems = Problems::new();
                if let Some(other) = not_null(&mut problems, "type", patch.kind) {
                    if other != kind {
                        problems.add("type", "cannot be changed; create a new contact instead");
                    }
                }
                let name = not_null(&mut problems, "name", patch.name);
                let value =
                    not_null(&mut problems, "value", patch.value).map(|v| v.trim().to_string());
                if let Some(name) = &name {
                    problems.check_len("name", name, MAX_NAME_CHARS);
                }
                if let Some(value) = &value {
                    check_value(&mut problems, kind, value, allow_private);
                }
                problems.into_result()?;

                // Only a new address sends a link: repeating the current one
                // must not be a way to mail it again (that is the resend
                // endpoint's job, within the limits).
                let address_changed = value.as_ref().is_some_and(|v| *v != stored.value);
                let send_verification = kind == ContactType::Email && address_changed;
                let changes = ContactUpdate {
                    name: name.map_or(stored.name, |n| n.trim().to_string()),
                    value: value.unwrap_or(stored.value),
                    verified: if send_verification {
                        false
                    } else {
                        stored.verified
                    },
                    // A link sent for the old address must not verify the new one.
                    verification_token_sha256: if send_verification {
                        None
                    } else {
                        stored.verification_token_sha256
                    },
                };
                let row = uptime_db::contacts::update(c, user.org_id, id, &changes)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let after = audit::shown(&ContactResponse::from_row(row.clone())?);
                audit::record(
                    c,
                    &user,
                    audit::action::UPDATE,
                    audit::kind::ALERT_CONTACT,
                    Some(id),
                    audit::changes(Some(&before), Some(&after)),
                )
                .await?;
                Ok((row, send_verification))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    if send_verification {
        row = request_verification(&state, row, false).await;
    }
    Ok(HttpResponse::Ok().json(ContactResponse::from_row(row)?))
}

/// Send a new verification link to an unverified email contact; the
/// previous link stops working. Verification emails are limited: at most one
/// per contact per `verification_mail.per_contact_interval_secs` (600 s by
/// default; the email sent on creation does not count) and at most
/// `verification_mail.daily_cap_per_user` (20) per user in any 24 hours.
/// While a limit holds this answers `429` with `Retry-After` and sends nothing.
#[utoipa::path(post, path = "/api/v1/alert-contacts/{id}/resend-verification", operation_id = "resendContactVerification", tag = "alert-contacts",
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 202, body = ContactResponse, description = "the email is queued; the contact as stored"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "`contact already verified` (slack and webhook contacts always are)"),
        (status = 429, body = ErrorBody, description = "a verification-email limit holds (named in `details`); `Retry-After` says in how many seconds it lifts")))]
pub async fn resend_verification(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let contact = {
        let mut conn = state.conn().await?;
        uptime_db::contacts::get(&mut conn, user.org_id, id)
            .await?
            .ok_or(ApiError::NotFound)?
    };
    if contact.verified {
        return Err(ApiError::Conflict("contact already verified"));
    }
    if let Err(refusal) =
        crate::verification::send_link(&state, &contact, false, Some(&user)).await?
    {
        return Err(crate::verification::limited(&state, refusal));
    }
    let mut conn = state.conn().await?;
    let row = uptime_db::contacts::get(&mut conn, user.org_id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    Ok(HttpResponse::Accepted().json(ContactResponse::from_row(row)?))
}

/// Delete one of the caller's alert contacts; monitors stop notifying it.
#[utoipa::path(delete, path = "/api/v1/alert-contacts/{id}", operation_id = "deleteContact", tag = "alert-contacts", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;

    let id = id.into_inner();
    let mut conn = state.conn().await?;
    let deleted = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let Some(stored) = uptime_db::contacts::get_for_update(c, user.org_id, id).await?
                else {
                    return Ok(false);
                };
                let before = audit::shown(&ContactResponse::from_row(stored)?);
                if !uptime_db::contacts::delete(c, user.org_id, id).await? {
                    return Ok(false);
                }
                audit::record(
                    c,
                    &user,
                    audit::action::DELETE,
                    audit::kind::ALERT_CONTACT,
                    Some(id),
                    audit::changes(Some(&before), None),
                )
                .await?;
                Ok(true)
            }
            .scope_boxed()
        })
        .await?;
    if deleted {
        Ok(HttpResponse::NoContent().finish())
    } else {
        Err(ApiError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausible_email_addresses() {
        for ok in ["a@b.co", "first.last+tag@mail.example.org"] {
            assert!(check_email(ok).is_ok(), "{ok}");
        }
        let long = format!("{}@example.com", "a".repeat(243));
        assert_eq!(long.len(), 255);
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@",
            "a@localhost",
            "a@b@c.com",
            "a b@c.com",
            "a@.com",
            "a@com.",
            "a@b..com",
            long.as_str(),
        ] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
        assert!(check_email(&long[1..]).is_ok(), "254 characters are fine");
    }

    #[test]
    fn signing_secrets_are_whsec_base64_of_32_bytes() {
        let secret = new_signing_secret();
        let raw = secret.strip_prefix("whsec_").expect("prefix");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(raw)
            .expect("standard base64");
        assert_eq!(bytes.len(), 32);
        assert_ne!(secret, new_signing_secret());
    }
}
