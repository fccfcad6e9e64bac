//! Replacing a monitor with a whole create body (`PUT .../by-ref/{ref}`,
//! and each update of `POST /api/v1/apply`): every field not given returns
//! to its default, as with a fresh create, except the basic-auth password,
//! which is write-only and so kept when not restated. And what such a
//! replacement changes, field by field, in the form the API shows it: when
//! nothing, nothing is written (the same PUT twice keeps the version).

use super::draft::Draft;
use super::kinds::http::origin_changed;
use super::monitor_type::MonitorType;
use super::types::{CreateMonitor, MonitorResponse, CREATE_NAMES};
use super::writes::{Current, WriteSettings};
use crate::apply::changes::{self, FieldChange};
use crate::audit;
use crate::error::ApiError;
use crate::validation::Problems;
use uptime_db::alerting::AlertRules;
use uptime_db::models::Monitor;
use uptime_db::monitors::MonitorDefinition;

/// The draft of a create body replacing `stored`. A basic-auth password
/// not restated keeps the stored one (unless the target moves to another
/// origin: then it must be restated, as for a PATCH); one restated equal to
/// the stored one keeps the stored seal, so a repeated replacement changes
/// nothing.
pub(super) fn replacing(
    stored: &Monitor,
    req: CreateMonitor,
    keyring: Option<&uptime_secrets::Keyring>,
    problems: &mut Problems,
) -> Draft {
    let mut draft = Draft::from_create(req);
    let moved = origin_changed(stored.target.as_deref(), draft.target.as_deref());
    if let (Some(auth), Some(sealed)) = (
        draft.kinds.http.basic_auth.as_mut(),
        stored.http_password_sealed.as_ref(),
    ) {
        if auth.password.is_none() {
            auth.kept = Some(sealed.clone());
            if moved {
                problems.add(
                    "basic_auth.password",
                    "the target's origin changed: restate the password or remove basic_auth",
                );
            }
        }
    }
    draft.keep_restated_password(stored, keyring);
    draft
}

/// `stored` as it would read with `def`, `labels` and `rules` written.
fn overlaid(
    stored: &Monitor,
    def: MonitorDefinition,
    labels: serde_json::Value,
    rules: &AlertRules,
) -> Monitor {
    let mut m = stored.clone();
    m.name = def.name;
    m.kind = def.kind;
    m.target = def.target;
    m.interval_secs = def.interval_secs;
    m.timeout_secs = def.timeout_secs;
    m.keyword = def.keyword;
    m.keyword_type = def.keyword_type;
    m.expected_status = def.expected_status;
    m.confirmation_count = def.confirmation_count;
    m.ssl_warn_days = def.ssl_warn_days;
    m.latency_warn_ms = def.latency_warn_ms;
    m.heartbeat_token = def.heartbeat_token;
    m.active = def.active;
    m.check_options = def.check_options;
    m.http_password_sealed = def.http_password_sealed;
    m.heartbeat_schedule = def.heartbeat_schedule;
    m.heartbeat_timezone = def.heartbeat_timezone;
    m.regions = def.regions;
    m.quorum = def.quorum;
    m.labels = labels;
    m.rules = rules.clone();
    m
}

/// What writing a validated `draft` (with `rules`, linking `contact_ids`,
/// sorted, and keeping `r#ref`) over `current` would change: the fields a
/// create body gives whose shown value differs, then the password (shown
/// as `"(secret)"`) when a new one would be stored.
pub(super) fn changes_of(
    current: &Current,
    draft: &Draft,
    rules: &AlertRules,
    contact_ids: &[i64],
    r#ref: Option<&str>,
    settings: &WriteSettings,
) -> Result<Vec<FieldChange>, ApiError> {
    let stored = &current.row;
    let mut draft = draft.clone();
    let labels = std::mem::take(&mut draft.labels).to_json();
    let token = match draft.kind {
        MonitorType::Heartbeat => stored.heartbeat_token.clone(),
        _ => None,
    };
    // Sealing (when a new password is given) happens again in the write:
    // a projection must not depend on which seal it got.
    let def = draft.into_definition(token, &settings.regions, settings.keyring.as_deref())?;
    let password_changed = def.http_password_sealed != stored.http_password_sealed;
    let (had, has) = (
        stored.http_password_sealed.is_some(),
        def.http_password_sealed.is_some(),
    );
    let after = overlaid(stored, def, labels, rules);
    let shown = MonitorResponse::from_row(after, contact_ids.to_vec(), &settings.regions)?
        .with_ref(r#ref.map(str::to_string));
    let mut found = changes::diff(&current.shown, &audit::shown(&shown), &CREATE_NAMES);
    if password_changed {
        found.push(changes::secret("basic_auth.password", had, has));
    }
    Ok(found)
}
