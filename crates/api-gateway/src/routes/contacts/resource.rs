//! Alert contacts as a [`Resource`]: `PUT`, `GET` and `DELETE` by ref,
//! `GET`/`DELETE` by id (`If-Match` honoured), and each contact of an
//! apply, all through `crate::resource`. The list is the module's own (it
//! narrows by type and name).

use super::body::{ContactResponse, ContactType, CreateContact};
use super::writes::{self, changes_of};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::resource::ref_param::ContactRef;
use crate::resource::routes::kind_routes;
use crate::resource::{resource_kind, Resource};
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use uptime_db::contacts::ContactUpdate;
use uptime_db::models::{AlertContact, NewAlertContact};
use uptime_db::refs::RefKind;

pub struct Contacts;

/// A create body checked against the contact it is for.
pub enum CheckedContact {
    New(Box<NewAlertContact>),
    /// The replacement, and whether it asks for a verification link (a
    /// new email address).
    Update(Box<ContactUpdate>, bool),
}

impl Resource for Contacts {
    resource_kind!(AlertContact at "/api/v1/alert-contacts");
    type Create = CreateContact;
    type Stored = AlertContact;
    type Checked = CheckedContact;
    type Shown = ContactResponse;
    /// Whether a verification link is due.
    type Extra = bool;

    fn shown(
        _: &AppState,
        stored: &AlertContact,
        r#ref: Option<&str>,
    ) -> Result<ContactResponse, ApiError> {
        Ok(ContactResponse::from_row(stored.clone())?.with_ref(r#ref.map(str::to_string)))
    }

    async fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> Result<AlertContact, ApiError> {
        let row = if lock {
            uptime_db::contacts::get_for_update(c, user.org_id, id).await?
        } else {
            uptime_db::contacts::get(c, user.org_id, id).await?
        };
        row.ok_or(ApiError::NotFound)
    }

    /// Reads nothing; the type cannot change (a `400` naming `type`), the
    /// credential is kept when not restated.
    async fn check(
        _: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        r#ref: &str,
        mut body: CreateContact,
        stored: Option<&AlertContact>,
        _: bool,
    ) -> Result<CheckedContact, ApiError> {
        body.ref_ = Some(r#ref.to_string());
        let allow_private = state.settings.safety.allow_private_targets;
        let keyring = state.keyring.as_deref();
        let validated = writes::validate(body, allow_private, stored)?;
        Ok(match stored {
            None => CheckedContact::New(Box::new(validated.into_new(user.org_id, keyring)?.0)),
            Some(stored) => {
                let (update, send) = validated.into_update(stored, keyring)?;
                CheckedContact::Update(Box::new(update), send)
            }
        })
    }

    fn compare(
        state: &AppState,
        stored: &AlertContact,
        checked: &CheckedContact,
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError> {
        let CheckedContact::Update(update, _) = checked else {
            return Err(ApiError::Internal("a new contact compared".into()));
        };
        let shown = audit::shown(&Self::shown(state, stored, Some(r#ref))?);
        let changes = changes_of(stored, &shown, update, Some(r#ref))?;
        Ok((!changes.is_empty()).then_some(changes))
    }

    async fn insert(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        checked: &CheckedContact,
        r#ref: &str,
        in_apply: bool,
    ) -> Result<(AlertContact, bool), ApiError> {
        let CheckedContact::New(new) = checked else {
            return Err(ApiError::Internal("a replacement inserted".into()));
        };
        let quotas = &state.settings.quotas;
        let row = writes::insert(c, user, new, Some(r#ref), quotas, in_apply).await?;
        Ok((row, false))
    }

    async fn rewrite(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &AlertContact,
        checked: &CheckedContact,
        r#ref: &str,
        _: bool,
    ) -> Result<(AlertContact, bool), ApiError> {
        let CheckedContact::Update(update, send) = checked else {
            return Err(ApiError::Internal("a new contact written over one".into()));
        };
        Ok(
            match writes::rewrite(c, user, stored, update, Some(r#ref), Some(r#ref)).await? {
                Some(row) => (row, *send),
                None => (stored.clone(), false),
            },
        )
    }

    /// Monitors stop notifying it.
    async fn remove(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &AlertContact,
        r#ref: Option<&str>,
    ) -> Result<(), ApiError> {
        let before = writes::audited(stored, r#ref)?;
        if !uptime_db::contacts::delete(c, user.org_id, stored.id).await? {
            return Err(ApiError::NotFound);
        }
        audit::record(
            c,
            user,
            audit::action::DELETE,
            audit::kind::ALERT_CONTACT,
            Some(stored.id),
            audit::changes(Some(&before), None),
        )
        .await
    }

    /// A new email address (or a new email contact) is sent its link.
    async fn answered(
        state: &AppState,
        mut row: AlertContact,
        r#ref: &str,
        send_verification: bool,
        created: bool,
    ) -> Result<ContactResponse, ApiError> {
        let is_email = row.kind == ContactType::Email.as_str();
        if is_email && (created || send_verification) {
            row = super::request_verification(state, row, created).await;
        }
        Ok(ContactResponse::from_row(row)?.with_ref(Some(r#ref.to_string())))
    }

    /// One query for them all.
    async fn managed(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
    ) -> Result<Vec<(String, AlertContact)>, ApiError> {
        let mut refs: std::collections::HashMap<i64, String> =
            uptime_db::refs::all(c, RefKind::AlertContact, user.org_id)
                .await?
                .into_iter()
                .collect();
        let ids: Vec<i64> = refs.keys().copied().collect();
        let rows = uptime_db::refs::contacts_locked(c, user.org_id, &ids).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| Some((refs.remove(&row.id)?, row)))
            .collect())
    }
}

kind_routes! {
    Contacts at "/api/v1/alert-contacts", tag "alert-contacts", ContactRef,
    shows ContactResponse, creates CreateContact;
    id "Alert contact id";
    no_ref "no contact of the organisation has this ref (`ref`)";

    /// Read one of the caller's alert contacts.
    get "getContact" => get;

    /// Delete one of the caller's alert contacts; monitors stop notifying it.
    delete "deleteContact" => delete;

    /// Read the caller's alert contact with this ref: what
    /// `GET /api/v1/alert-contacts/{id}` answers for its id.
    get_by_ref "getContactByRef" => get_contact_by_ref;

    /// Delete the caller's alert contact with this ref, as
    /// `DELETE /api/v1/alert-contacts/{id}` does (`If-Match` honoured, one
    /// audit entry); monitors stop notifying it.
    delete_by_ref "deleteContactByRef" => delete_contact_by_ref;

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
    put_by_ref "putContactByRef" => put_contact_by_ref,
        bad "`invalid request body` naming each field refused; `type` when it differs from the stored contact's; `ref` when the path's is malformed or the body names another",
        forbidden "quota exceeded: a create past the contact quota",
        conflict "another request created a contact with this ref meanwhile (`ref`)";
}
