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
//! - provider contacts (pagerduty, opsgenie, teams, discord, telegram, ntfy,
//!   pushover) are verified at creation too: a test alert
//!   (`POST /alert-contacts/{id}/test`) shows the configuration works. Their
//!   credential (`secret`) is write-only: sealed with the secrets key before
//!   it is stored, answered only as `set`/`unset`, never logged
//!   ([`values`] says what each type takes).
//! - webhook contacts get a signing secret (`whsec_` + base64 of 32 random
//!   bytes) shown in their responses; it survives changes of the URL.
//! - `type` cannot change (a contact of another type is a new contact): a
//!   PATCH may repeat the current type but not give another.

mod body;
mod checks;
mod contact_type;
mod filters;
mod resource;
mod values;
mod writes;
pub use resource::*;
pub(crate) use values::check_email;

pub use body::{
    ContactList, ContactResponse, ContactType, CreateContact, EventKind, MinSeverity, Region,
    SecretState, UpdateContact,
};

use crate::api::table::{routes, Routes};
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::{not_null, PageQuery, Problems};
use actix_web::{web, HttpResponse};
use checks::{check_options, stored_event_kinds};
use uptime_alerts::ProviderOptions;
use uptime_db::contacts::ContactUpdate;
use uptime_db::models::AlertContact;
use uptime_db::refs::RefKind;
use values::{check_secret, check_value, secret_kind, MAX_NAME_CHARS};

/// `/alert-contacts/by-ref/{ref}`, registered before every
/// `/alert-contacts/{id}/...` route (`alerts`' included), which would
/// otherwise take `by-ref` for an id when the ref is `test`.
pub fn by_ref_routes() -> Routes {
    routes![
        get_contact_by_ref: READ,
        put_contact_by_ref: WRITE,
        delete_contact_by_ref: WRITE,
    ]
}

pub fn routes() -> Routes {
    routes![
        list: READ,
        create: WRITE,
        get: READ,
        update: WRITE,
        delete: WRITE,
        resend_verification: WRITE,
    ]
}

/// Sends the verification link (within the limits) and answers the contact
/// as stored afterwards (issuing a link updates the row). The contact is
/// committed by then, so a limit or a failure is not an error answer (a
/// retried create would make a duplicate): the contact shows
/// `verification_link_sent: false`, and the resend endpoint sends it later.
pub(super) async fn request_verification(
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
    responses((status = 201, body = ContactResponse, description = "created; email contacts: `verification_link_sent` says whether the link went out"), (status = 403, body = ErrorBody, description = "quota exceeded: the user owns as many as their quota allows")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateContact>,
) -> Result<HttpResponse, ApiError> {
    let allow_private = state.settings.safety.allow_private_targets;
    let validated = writes::validate(body.into_inner(), allow_private, None)?;
    let kind = validated.kind;
    let (new, r#ref) = validated.into_new(user.org_id, state.keyring.as_deref())?;
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let given_ref = r#ref.clone();
    let mut row = {
        use diesel_async::scoped_futures::ScopedFutureExt;
        use diesel_async::AsyncConnection;
        conn.transaction::<_, ApiError, _>(|c| {
            async move {
                writes::insert(c, &user, &new, given_ref.as_deref(), &quotas, false).await
            }
            .scope_boxed()
        })
        .await?
    };
    drop(conn);
    if kind == ContactType::Email {
        row = request_verification(&state, row, true).await;
    }
    Ok(crate::http::response::created(
        format!("/api/v1/alert-contacts/{}", row.id),
        ContactResponse::from_row(row)?.with_ref(r#ref),
    ))
}

/// List the caller's alert contacts in id order, a page at a time; `type`
/// and `search` (in the name, without case) narrow it.
#[utoipa::path(get, path = "/api/v1/alert-contacts", operation_id = "listContacts", tag = "alert-contacts",
    params(PageQuery, filters::ContactFilterQuery), responses((status = 200, body = ContactList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
    narrowing: web::Query<filters::ContactFilterQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.keyset()?;
    let filter = narrowing.parse()?;
    let mut conn = state.conn().await?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| {
                let (kind, name) = (filter.kind, filter.name_contains);
                uptime_db::contacts::list_page_filtered(
                    &mut conn,
                    user.org_id,
                    kind,
                    name,
                    after,
                    n,
                )
            },
            |c| c.id,
        )
        .await?;
    let ids: Vec<i64> = rows.iter().map(|c| c.id).collect();
    let mut refs = uptime_db::refs::of(&mut conn, RefKind::AlertContact, &ids).await?;
    Ok(HttpResponse::Ok().json(ContactList {
        alert_contacts: rows
            .into_iter()
            .map(|row| {
                let r#ref = refs.remove(&row.id);
                ContactResponse::from_row(row).map(|shown| shown.with_ref(r#ref))
            })
            .collect::<Result<_, _>>()?,
        next_cursor,
    }))
}

/// The contact as answered, with its ref.
async fn shown_with_ref(
    conn: &mut diesel_async::AsyncPgConnection,
    row: AlertContact,
) -> Result<ContactResponse, ApiError> {
    let r#ref = uptime_db::refs::of_one(conn, RefKind::AlertContact, row.id).await?;
    Ok(ContactResponse::from_row(row)?.with_ref(r#ref))
}

/// Change the name or value of one of the caller's alert contacts. A new
/// email address makes the contact unverified and sends a link to it; the
/// same address again sends nothing. While a verification-email limit holds
/// the change is saved all the same and no email goes out: the answer shows
/// `verification_link_sent: false` (a `PATCH` is about the contact; the email
/// can be asked for again with `POST .../resend-verification`, which answers
/// `429` with `Retry-After` until the limit lifts).
#[utoipa::path(patch, path = "/api/v1/alert-contacts/{id}", operation_id = "updateContact", tag = "alert-contacts", request_body = UpdateContact,
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 200, body = ContactResponse, description = "saved; email contacts: `verification_link_sent` says whether a link for the current address is out")))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<UpdateContact>,
) -> Result<HttpResponse, ApiError> {
    use diesel_async::scoped_futures::ScopedFutureExt;
    use diesel_async::AsyncConnection;

    let id = id.into_inner();
    let patch = body.into_inner();
    let allow_private = state.settings.safety.allow_private_targets;
    let keyring = state.keyring.clone();
    let mut conn = state.conn().await?;
    let (mut row, send_verification, r#ref) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = uptime_db::contacts::get_for_update(c, user.org_id, id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let stored_ref = uptime_db::refs::of_one(c, RefKind::AlertContact, id).await?;
                let shown = ContactResponse::from_row(stored.clone())?.with_ref(stored_ref.clone());
                if_match.check(&crate::etag::of_json(&shown))?;
                let unchanged = stored.clone();
                let kind = ContactType::from_db(&stored.kind)?;
                let mut problems = Problems::new();
                let r#ref = crate::refs::patched(stored_ref.as_deref(), patch.ref_, &mut problems);
                if let Some(other) = not_null(&mut problems, "type", patch.kind) {
                    if other != kind {
                        problems.add("type", "cannot be changed; create a new contact instead");
                    }
                }
                let name = not_null(&mut problems, "name", patch.name);
                // The redacted address a response showed, repeated, keeps
                // the stored one.
                let value = not_null(&mut problems, "value", patch.value)
                    .map(|v| v.trim().to_string())
                    .filter(|v| {
                        !(values::address_is_credential(kind)
                            && *v == values::shown_value(kind, &stored.value))
                    });
                if let Some(name) = &name {
                    problems.check_len("name", name, MAX_NAME_CHARS);
                }
                if let Some(value) = &value {
                    check_value(&mut problems, kind, value, allow_private);
                }
                let secret = patch.secret.map(|s| s.map(|s| s.trim().to_string()));
                match (&secret, secret_kind(kind)) {
                    (Some(Some(secret)), _) => check_secret(&mut problems, kind, secret),
                    (Some(None), Some((what, true))) => problems.add(
                        "secret",
                        format!(
                            "cannot be removed: {} contacts need their {what}",
                            kind.as_str()
                        ),
                    ),
                    _ => {}
                }
                let server = patch.server.map(|s| s.map(|s| s.trim().to_string()));
                check_options(
                    &mut problems,
                    kind,
                    matches!(patch.region, Some(Some(_))),
                    server.as_ref().and_then(|s| s.as_deref()),
                    allow_private,
                );
                let event_kinds = match patch.events {
                    Some(events) => stored_event_kinds(&mut problems, events),
                    None => stored.event_kinds.clone(),
                };
                problems.into_result()?;
                let stored_options = ProviderOptions::from_json(&stored.options)
                    .map_err(|e| ApiError::Internal(e.message))?;
                let options = ProviderOptions {
                    region: match patch.region {
                        Some(region) => region.map(Into::into),
                        None => stored_options.region,
                    },
                    server: server.unwrap_or(stored_options.server),
                };
                // Only a new address sends a link: repeating the current one
                // must not be a way to mail it again (that is the resend
                // endpoint's job, within the limits).
                let address_changed = value.as_ref().is_some_and(|v| *v != stored.value);
                let send_verification = kind == ContactType::Email && address_changed;
                let (value, secret_sealed) = if values::address_is_credential(kind) {
                    writes::address_columns(value, &stored, keyring.as_deref())?
                } else {
                    let sealed = match secret {
                        Some(Some(plain)) => Some(values::restated_or_sealed(
                            keyring.as_deref(),
                            stored.secret_sealed.as_deref(),
                            plain,
                        )?),
                        Some(None) => None,
                        None => stored.secret_sealed.clone(),
                    };
                    (value.unwrap_or_else(|| stored.value.clone()), sealed)
                };
                let (verified, verification_token_sha256) =
                    writes::verification_after(&stored, send_verification);
                let changes = ContactUpdate {
                    name: name.map_or(stored.name, |n| n.trim().to_string()),
                    value,
                    verified,
                    verification_token_sha256,
                    secret_sealed,
                    options: options.to_json(),
                    event_kinds,
                    min_severity: match patch.min_severity {
                        Some(min) => min.map_or(0, MinSeverity::rank),
                        None => stored.min_severity,
                    },
                };
                let row = writes::rewrite(
                    c,
                    &user,
                    &unchanged,
                    &changes,
                    stored_ref.as_deref(),
                    r#ref.as_deref(),
                )
                .await?;
                // Nothing changed: nothing written, and no link is due (the
                // address is the same).
                Ok(match row {
                    Some(row) => (row, send_verification, r#ref),
                    None => (unchanged, false, r#ref),
                })
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    if send_verification {
        row = request_verification(&state, row, false).await;
    }
    Ok(HttpResponse::Ok().json(ContactResponse::from_row(row)?.with_ref(r#ref)))
}

/// Send a new verification link to an unverified email contact; the
/// previous link stops working. Verification emails are limited: at most one
/// per contact per `verification_mail.per_contact_interval_secs` (600 s by
/// default; the email sent on creation does not count) and at most
/// `verification_mail.daily_cap_per_user` (20) per user in any 24 hours.
/// While a limit holds this answers `429` with `Retry-After` and sends nothing.
#[utoipa::path(post, path = "/api/v1/alert-contacts/{id}/resend-verification", operation_id = "resendContactVerification", tag = "alert-contacts",
    params(("id" = i64, Path, description = "Alert contact id")),
    responses((status = 202, body = ContactResponse, description = "the email is queued; the contact as stored"),
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
    Ok(HttpResponse::Accepted().json(shown_with_ref(&mut conn, row).await?))
}
