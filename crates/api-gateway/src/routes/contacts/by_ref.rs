//! `PUT /api/v1/alert-contacts/by-ref/{ref}`: create or replace the
//! contact with this ref, from a create body. The same planning
//! ([`plan_contact`]) and writes ([`execute_contact`]) serve each contact of
//! `POST /api/v1/apply`.

use super::body::{ContactResponse, ContactType, CreateContact};
use super::writes::{self, changes_of};
use crate::apply::changes::FieldChange;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::settings::QuotaSettings;
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde_json::Value;
use uptime_db::contacts::ContactUpdate;
use uptime_db::models::{AlertContact, NewAlertContact};
use uptime_db::refs::RefKind;

/// A stored contact as a replacement starts from.
#[derive(Clone)]
pub(crate) struct StoredContact {
    pub(crate) row: AlertContact,
    /// Its representation (with its ref).
    pub(crate) shown: Value,
    /// The same with its secrets, for the audit log (`writes::audited`).
    pub(crate) audited: Value,
    /// The representation's tag, which `If-Match` names.
    pub(crate) tag: String,
}

impl StoredContact {
    pub(crate) fn of(row: AlertContact, r#ref: Option<String>) -> Result<Self, ApiError> {
        let audited = writes::audited(&row, r#ref.as_deref())?;
        let response = ContactResponse::from_row(row.clone())?.with_ref(r#ref);
        Ok(Self {
            row,
            shown: crate::audit::shown(&response),
            audited,
            tag: crate::etag::of_json(&response),
        })
    }
}

/// What a create body would do to the contact with its ref.
pub(crate) enum PlannedContact {
    Create {
        new: Box<NewAlertContact>,
    },
    Update {
        stored: Box<StoredContact>,
        update: Box<ContactUpdate>,
        send_verification: bool,
        changes: Vec<FieldChange>,
    },
    Unchanged {
        stored: Box<StoredContact>,
    },
}

/// What was done, and whether a verification link is due.
pub(crate) enum ContactOutcome {
    Created(AlertContact),
    Replaced(AlertContact, bool),
    Unchanged(AlertContact),
}

/// Plans `body` for the contact with `r#ref`, stored as `stored` (`None`:
/// there is none), validated exactly as a create body. Reads nothing.
pub(crate) fn plan_contact(
    org_id: i64,
    r#ref: &str,
    stored: Option<StoredContact>,
    mut body: CreateContact,
    allow_private: bool,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<PlannedContact, ApiError> {
    body.ref_ = Some(r#ref.to_string());
    let validated = writes::validate(body, allow_private, stored.as_ref().map(|s| &s.row))?;
    let Some(stored) = stored else {
        let (new, _) = validated.into_new(org_id, keyring)?;
        return Ok(PlannedContact::Create { new: Box::new(new) });
    };
    let (update, send_verification) = validated.into_update(&stored.row, keyring)?;
    let changes = changes_of(&stored.row, &stored.shown, &update, Some(r#ref))?;
    if changes.is_empty() {
        return Ok(PlannedContact::Unchanged {
            stored: Box::new(stored),
        });
    }
    Ok(PlannedContact::Update {
        stored: Box::new(stored),
        update: Box::new(update),
        send_verification,
        changes,
    })
}

/// Carries out a plan in the caller's transaction.
pub(crate) async fn execute_contact(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    planned: PlannedContact,
    quotas: &QuotaSettings,
    end_state_quota: bool,
) -> Result<ContactOutcome, ApiError> {
    Ok(match planned {
        PlannedContact::Create { new } => ContactOutcome::Created(
            writes::insert(c, user, &new, Some(r#ref), quotas, end_state_quota).await?,
        ),
        PlannedContact::Update {
            stored,
            update,
            send_verification,
            ..
        } => {
            match writes::rewrite(c, user, &stored.row, &update, Some(r#ref), Some(r#ref)).await? {
                Some(row) => ContactOutcome::Replaced(row, send_verification),
                None => ContactOutcome::Unchanged(stored.row),
            }
        }
        PlannedContact::Unchanged { stored } => ContactOutcome::Unchanged(stored.row),
    })
}

/// Create or replace the caller's alert contact with this ref.
///
/// The body is a create body (`POST /api/v1/alert-contacts`), without `ref`
/// or with the path's. No contact has the ref: it is created with it
/// (`201`). One has: it is replaced (`200`), every field not given back at
/// its default, except the credential (`secret`), kept when not restated;
/// its type cannot change. A new email address makes it unverified and
/// sends a link, as a PATCH does. When that changes nothing, nothing is
/// written (the same `ETag` as before). `If-Match` is honoured (and fails
/// when there is no contact to match).
#[utoipa::path(put, path = "/api/v1/alert-contacts/by-ref/{ref}", operation_id = "putContactByRef", tag = "alert-contacts", request_body = CreateContact,
    security(("bearer" = [])),
    params(("ref" = String, Path, description = "The contact's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = ContactResponse, description = "replaced, or unchanged"),
        (status = 201, body = ContactResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused; `type` when it differs from the stored contact's; `ref` when the path's is malformed or the body names another"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "quota exceeded: a create past the contact quota"),
        (status = 409, body = ErrorBody, description = "another request created a contact with this ref meanwhile (`ref`)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no contact has this ref"),
        (status = 413, body = ErrorBody)))]
pub async fn put_contact_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<CreateContact>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let mut body = body.into_inner();
    crate::refs::check_path(&r#ref, body.ref_.take())?;
    let allow_private = state.settings.safety.allow_private_targets;
    let keyring = state.keyring.clone();
    let quotas = state.settings.quotas.clone();
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let outcome = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let kind = RefKind::AlertContact;
                let stored = match uptime_db::refs::find(c, kind, user.org_id, &given_ref).await? {
                    None => None,
                    Some(id) => {
                        let row = uptime_db::contacts::get_for_update(c, user.org_id, id)
                            .await?
                            .ok_or(ApiError::NotFound)?;
                        Some(StoredContact::of(row, Some(given_ref.clone()))?)
                    }
                };
                let tag = stored.as_ref().map(|s| s.tag.clone());
                // The body first (400), then the condition (412).
                let planned = plan_contact(
                    user.org_id,
                    &given_ref,
                    stored,
                    body,
                    allow_private,
                    keyring.as_deref(),
                )?;
                match tag {
                    None => if_match.check_absent()?,
                    Some(tag) => if_match.check(&tag)?,
                }
                execute_contact(c, &user, &given_ref, planned, &quotas, false).await
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let (mut row, created, send_verification) = match outcome {
        ContactOutcome::Created(row) => (row, true, false),
        ContactOutcome::Replaced(row, send) => (row, false, send),
        ContactOutcome::Unchanged(row) => (row, false, false),
    };
    let is_email = row.kind == ContactType::Email.as_str();
    if is_email && (created || send_verification) {
        row = super::request_verification(&state, row, created).await;
    }
    let shown = ContactResponse::from_row(row)?.with_ref(Some(r#ref));
    Ok(if created {
        HttpResponse::Created()
            .insert_header((
                actix_web::http::header::LOCATION,
                format!("/api/v1/alert-contacts/{}", shown.id),
            ))
            .json(shown)
    } else {
        HttpResponse::Ok().json(shown)
    })
}
