//! The validation and writes behind `POST`, `PUT .../by-ref/{ref}` of
//! alert contacts (and each contact of `POST /api/v1/apply`): a create
//! body read once, into a new contact or into the replacement of a stored
//! one, so every rule is written once.

use super::body::{ContactResponse, ContactType, CreateContact, MinSeverity};
use super::checks::{check_options, stored_event_kinds};
use super::values::{self, check_secret, check_value, secret_kind, takes_value, MAX_NAME_CHARS};
use crate::apply::changes::{self, FieldChange};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::settings::QuotaSettings;
use crate::validation::Problems;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use serde_json::Value;
use uptime_alerts::ProviderOptions;
use uptime_db::contacts::ContactUpdate;
use uptime_db::models::{AlertContact, NewAlertContact};
use uptime_db::refs::RefKind;

/// The fields a create body gives, as responses show them: what a
/// replacement compares.
const SPEC_FIELDS: &[&str] = &[
    "name",
    "type",
    "value",
    "region",
    "server",
    "events",
    "min_severity",
    "ref",
];

/// A create body, validated.
pub(crate) struct Validated {
    pub(crate) kind: ContactType,
    name: String,
    value: Option<String>,
    /// Trimmed, not sealed yet.
    secret: Option<String>,
    options: ProviderOptions,
    event_kinds: Option<Vec<String>>,
    min_severity: i16,
    pub(crate) r#ref: Option<String>,
}

/// Reads a create body, or 400 naming every problem. `stored`: the contact
/// a replacement goes over, whose credential (and address, when that is a
/// credential: `values::address_is_credential`) a body that does not
/// restate it keeps, so it is not required; repeating the redacted address
/// a response showed keeps it too.
pub(crate) fn validate(
    req: CreateContact,
    allow_private: bool,
    stored: Option<&AlertContact>,
) -> Result<Validated, ApiError> {
    let secret_stored = stored.is_some_and(|s| s.secret_sealed.is_some());
    let address_kept = values::address_is_credential(req.kind) && stored.is_some();
    let value = req
        .value
        .as_deref()
        .map(str::trim)
        .map(str::to_string)
        .filter(|given| {
            !(address_kept
                && stored.is_some_and(|s| *given == values::shown_value(req.kind, &s.value)))
        });
    let secret = req.secret.map(|s| s.trim().to_string());
    let server = req.server.map(|s| s.trim().to_string());
    let mut problems = Problems::new();
    problems.check_len("name", &req.name, MAX_NAME_CHARS);
    match (&value, takes_value(req.kind)) {
        (Some(value), _) => check_value(&mut problems, req.kind, value, allow_private),
        (None, true) if address_kept => {}
        (None, true) => problems.add(
            "value",
            format!("is required for {} contacts", req.kind.as_str()),
        ),
        (None, false) => {}
    }
    match (&secret, secret_kind(req.kind)) {
        (Some(secret), _) => check_secret(&mut problems, req.kind, secret),
        (None, Some((what, true))) if !secret_stored => problems.add(
            "secret",
            format!("is required for {} contacts: the {what}", req.kind.as_str()),
        ),
        (None, _) => {}
    }
    check_options(
        &mut problems,
        req.kind,
        req.region.is_some(),
        server.as_deref(),
        allow_private,
    );
    let event_kinds = stored_event_kinds(&mut problems, req.events);
    if let Some(given) = &req.ref_ {
        crate::refs::check(&mut problems, "ref", given);
    }
    problems.into_result()?;
    Ok(Validated {
        kind: req.kind,
        name: req.name.trim().to_string(),
        value,
        secret,
        options: ProviderOptions {
            region: req.region.map(Into::into),
            server,
        },
        event_kinds,
        min_severity: req.min_severity.map_or(0, MinSeverity::rank),
        r#ref: req.ref_,
    })
}

impl Validated {
    /// The new contact (its credential sealed with `keyring`).
    pub(crate) fn into_new(
        self,
        org_id: i64,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<(NewAlertContact, Option<String>), ApiError> {
        let (value, secret_sealed) = if values::address_is_credential(self.kind) {
            values::stored_address(keyring, self.value.unwrap_or_default())?
        } else {
            let sealed = self
                .secret
                .map(|s| values::seal_secret(keyring, s))
                .transpose()?;
            (self.value.unwrap_or_default(), sealed)
        };
        let new = NewAlertContact {
            org_id,
            kind: self.kind.as_str().to_string(),
            name: self.name,
            value,
            verified: self.kind != ContactType::Email,
            verification_token_sha256: None,
            signing_secret: (self.kind == ContactType::Webhook).then(values::new_signing_secret),
            secret_sealed,
            options: self.options.to_json(),
            event_kinds: self.event_kinds,
            min_severity: self.min_severity,
        };
        Ok((new, self.r#ref))
    }

    /// The replacement of `stored` (of the same type, else 400 naming
    /// `type`): every field as a create sets it, except the credential,
    /// kept when not restated (and its seal kept when restated unchanged),
    /// and verification, kept unless an email address changes. The bool
    /// says whether the new address needs a verification link.
    pub(crate) fn into_update(
        self,
        stored: &AlertContact,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<(ContactUpdate, bool), ApiError> {
        if self.kind.as_str() != stored.kind {
            return Err(ApiError::invalid_field(
                "type",
                "cannot be changed; create a new contact instead",
            ));
        }
        let (value, secret_sealed) = if values::address_is_credential(self.kind) {
            address_columns(self.value, stored, keyring)?
        } else {
            let sealed = match self.secret {
                None => stored.secret_sealed.clone(),
                Some(given) => Some(values::restated_or_sealed(
                    keyring,
                    stored.secret_sealed.as_deref(),
                    given,
                )?),
            };
            (self.value.unwrap_or_default(), sealed)
        };
        let send_verification = self.kind == ContactType::Email && value != stored.value;
        let (verified, verification_token_sha256) = verification_after(stored, send_verification);
        let update = ContactUpdate {
            name: self.name,
            value,
            verified,
            verification_token_sha256,
            secret_sealed,
            options: self.options.to_json(),
            event_kinds: self.event_kinds,
            min_severity: self.min_severity,
        };
        Ok((update, send_verification))
    }
}

/// A rewritten contact's `verified` and `verification_token_sha256`: kept,
/// unless a new email address `needs_link`: then it is unverified, and a
/// link sent for the old address must not verify the new one.
pub(super) fn verification_after(
    stored: &AlertContact,
    needs_link: bool,
) -> (bool, Option<String>) {
    if needs_link {
        (false, None)
    } else {
        (stored.verified, stored.verification_token_sha256.clone())
    }
}

/// The contact as the audit log compares it: its representation (with
/// `r#ref`) and its write-only secrets (`audit::audited`), each named by
/// its request field.
pub(crate) fn audited(row: &AlertContact, r#ref: Option<&str>) -> Result<Value, ApiError> {
    let response = ContactResponse::from_row(row.clone())?.with_ref(r#ref.map(str::to_string));
    // A webhook URL that is a credential is sealed in the credential's
    // column: what changes with it is the `value`.
    let field = if values::address_is_credential(ContactType::from_db(&row.kind)?) {
        "value"
    } else {
        "secret"
    };
    Ok(audit::audited(
        &response,
        &[(field, row.secret_sealed.as_deref())],
    ))
}

/// The `value` and `secret_sealed` columns after a write giving `given` as
/// the address of `stored`, a contact whose address is a credential: kept
/// when not restated or restated as it is (the seal too, so nothing
/// changes), sealed anew otherwise.
pub(super) fn address_columns(
    given: Option<String>,
    stored: &AlertContact,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<(String, Option<String>), ApiError> {
    let kept = || (stored.value.clone(), stored.secret_sealed.clone());
    match given {
        None => Ok(kept()),
        Some(given)
            if match &stored.secret_sealed {
                Some(sealed) => values::opens_to(keyring, sealed, &given),
                None => given == stored.value,
            } =>
        {
            Ok(kept())
        }
        Some(given) => values::stored_address(keyring, given),
    }
}

/// What writing `update` over `stored` (shown as `stored_shown`) changes,
/// in the form responses show, then the credential as `"(secret)"`.
pub(crate) fn changes_of(
    stored: &AlertContact,
    stored_shown: &Value,
    update: &ContactUpdate,
    r#ref: Option<&str>,
) -> Result<Vec<FieldChange>, ApiError> {
    let mut after = stored.clone();
    after.name = update.name.clone();
    after.value = update.value.clone();
    after.verified = update.verified;
    after.verification_token_sha256 = update.verification_token_sha256.clone();
    after.secret_sealed = update.secret_sealed.clone();
    after.options = update.options.clone();
    after.event_kinds = update.event_kinds.clone();
    after.min_severity = update.min_severity;
    let shown = ContactResponse::from_row(after)?.with_ref(r#ref.map(str::to_string));
    let mut found = changes::diff(stored_shown, &audit::shown(&shown), SPEC_FIELDS);
    if update.secret_sealed != stored.secret_sealed {
        // A webhook URL that is a credential is sealed in the credential's
        // column: what changed is the `value`.
        let kind = ContactType::from_db(&stored.kind)?;
        let field = if values::address_is_credential(kind) {
            "value"
        } else {
            "secret"
        };
        if !found.iter().any(|change| change.field == field) {
            found.push(changes::secret(
                field,
                stored.secret_sealed.is_some(),
                update.secret_sealed.is_some(),
            ));
        }
    }
    Ok(found)
}

/// Inserts a new contact with its ref and one audit entry, in the caller's
/// transaction; the quota for one more unless `end_state_quota` (the caller
/// checks the end state of many writes).
pub(crate) async fn insert(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    new: &NewAlertContact,
    r#ref: Option<&str>,
    quotas: &QuotaSettings,
    end_state_quota: bool,
) -> Result<AlertContact, ApiError> {
    if !end_state_quota {
        crate::quotas::ensure_room(
            c,
            quotas,
            user.org_id,
            uptime_db::quotas::Owned::AlertContacts,
        )
        .await?;
    }
    let row = uptime_db::contacts::create(c, new).await?;
    crate::refs::set_on_create(c, RefKind::AlertContact, user, row.id, r#ref).await?;
    let shown = audited(&row, r#ref)?;
    audit::record(
        c,
        user,
        audit::action::CREATE,
        audit::kind::ALERT_CONTACT,
        Some(row.id),
        audit::changes(None, Some(&shown)),
    )
    .await?;
    Ok(row)
}

/// Writes `update` over `stored` (with the ref it has or takes now:
/// `stored_ref` → `r#ref`) with one audit entry, or nothing (`None`) when
/// that changes nothing (`audit::update`).
pub(crate) async fn rewrite(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: &AlertContact,
    update: &ContactUpdate,
    stored_ref: Option<&str>,
    r#ref: Option<&str>,
) -> Result<Option<AlertContact>, ApiError> {
    let id = stored.id;
    let before = audited(stored, stored_ref)?;
    audit::update(
        c,
        user,
        audit::kind::ALERT_CONTACT,
        Some(id),
        &before,
        move |c| {
            async move {
                let row = uptime_db::contacts::update(c, user.org_id, id, update)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                crate::refs::set_if_new(c, RefKind::AlertContact, user, id, stored_ref, r#ref)
                    .await?;
                let after = audited(&row, r#ref)?;
                Ok((row, after))
            }
            .scope_boxed()
        },
    )
    .await
}
