//! Monitors as a [`Resource`]: `GET`/`DELETE` by id and by ref,
//! `PUT .../by-ref/{ref}` and each monitor of `POST /api/v1/apply`, all
//! through `crate::resource`. A `PUT` replaces with a whole create body
//! ([`super::replace`]): every field not given returns to its default.
//! What the kind adds to the generic lifecycle: the scheduler is told of
//! each write and delete once committed, and an apply loads its managed
//! monitors in three queries whatever their number.

use super::alert_rules;
use super::announce::announce;
use super::draft::{new_monitor, Creation};
use super::replace::{changes_of, replacing};
use super::types::{CreateMonitor, MonitorResponse};
use super::writes::{self, audited, Current, Rewrite, WriteSettings};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::resource::ref_param::MonitorRef;
use crate::resource::routes::kind_routes;
use crate::resource::{resource_kind, Plan, Resource};
use crate::state::AppState;
use crate::validation::Problems;
use diesel_async::AsyncPgConnection;
use uptime_contracts::MonitorChange;
use uptime_db::alerting::AlertRules;
use uptime_db::models::Monitor;
use uptime_db::refs::RefKind;

pub struct Monitors;

/// A stored monitor: its row and its contacts (ascending).
#[derive(Clone)]
pub struct StoredMonitor {
    pub(super) row: Monitor,
    pub(super) contact_ids: Vec<i64>,
}

/// A create body checked: a monitor to insert, or to write over the one
/// with its ref.
pub enum CheckedMonitor {
    Create {
        creation: Box<Creation>,
        rules: AlertRules,
    },
    Replace(Box<Rewrite>),
}

/// Whether a write changed anything (what the scheduler is told of).
#[derive(Default)]
pub struct Changed(bool);

impl StoredMonitor {
    /// As a rewrite starts from, with `r#ref`.
    fn current(&self, r#ref: &str, state: &AppState) -> Result<Current, ApiError> {
        let (current, _) = Current::of(
            self.row.clone(),
            self.contact_ids.clone(),
            Some(r#ref.to_string()),
            &state.settings.regions,
        )?;
        Ok(current)
    }
}

/// A planned create that a multi-row insert can take: no alert rules
/// (which name other monitors and are checked one monitor at a time).
pub(crate) fn is_plain_create(plan: &Plan<Monitors>) -> bool {
    matches!(plan, Plan::Create(CheckedMonitor::Create { rules, .. }) if *rules == AlertRules::default())
}

/// A create body checked as `POST /api/v1/monitors` checks it (400 naming
/// every problem): the monitor and its alert rules.
pub(super) fn checked_create(
    settings: &WriteSettings,
    org_id: i64,
    mut body: CreateMonitor,
) -> Result<(Creation, AlertRules), ApiError> {
    let mut problems = Problems::new();
    let rules = alert_rules::created(
        std::mem::take(&mut body.alert_rules),
        settings.floors,
        &mut problems,
    );
    let keyring = settings.keyring.as_deref();
    let creation = new_monitor(
        org_id,
        body,
        settings.allow_private,
        &settings.regions,
        keyring,
    )?;
    problems.into_result()?;
    Ok((creation, rules))
}

/// The settings of a write; an apply checks the quotas once, for its end
/// state.
fn settings(state: &AppState, in_apply: bool) -> WriteSettings {
    let mut settings = WriteSettings::of(state);
    settings.end_state_quota = in_apply;
    settings
}

impl Resource for Monitors {
    resource_kind!(Monitor at "/api/v1/monitors", id row.id, ref reference.ref_);
    type Create = CreateMonitor;
    type Stored = StoredMonitor;
    type Checked = CheckedMonitor;
    type Shown = MonitorResponse;
    type Extra = Changed;

    fn shown(
        state: &AppState,
        stored: &StoredMonitor,
        r#ref: Option<&str>,
    ) -> Result<MonitorResponse, ApiError> {
        Ok(MonitorResponse::from_row(
            stored.row.clone(),
            stored.contact_ids.clone(),
            &state.settings.regions,
        )?
        .with_ref(r#ref.map(str::to_string)))
    }

    /// Within the key's reach (a label-limited key's `404` beyond it).
    async fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> Result<StoredMonitor, ApiError> {
        let row = if lock {
            uptime_db::monitors::get_for_update_within(c, user.reach(), id).await?
        } else {
            uptime_db::monitors::get_within(c, user.reach(), id).await?
        };
        let row = row.ok_or(ApiError::NotFound)?;
        let contact_ids = uptime_db::monitors::contact_ids_of(c, &[id])
            .await?
            .remove(&id)
            .unwrap_or_default();
        Ok(StoredMonitor { row, contact_ids })
    }

    /// Reads nothing: the contacts, dependencies and quotas are checked
    /// when the monitor is written.
    async fn check(
        _: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        r#ref: &str,
        mut body: CreateMonitor,
        stored: Option<&StoredMonitor>,
        _: bool,
    ) -> Result<CheckedMonitor, ApiError> {
        let settings = WriteSettings::of(state);
        let Some(stored) = stored else {
            body.reference.ref_ = Some(r#ref.to_string());
            let (creation, rules) = checked_create(&settings, user.org_id, body)?;
            return Ok(CheckedMonitor::Create {
                creation: Box::new(creation),
                rules,
            });
        };
        let mut problems = Problems::new();
        let rules = alert_rules::created(
            std::mem::take(&mut body.alert_rules),
            settings.floors,
            &mut problems,
        );
        body.reference.ref_ = None;
        let mut contact_ids = body.rest.alert_contact_ids.take().unwrap_or_default();
        contact_ids.sort_unstable();
        contact_ids.dedup();
        let keyring = settings.keyring.as_deref();
        let draft = replacing(&stored.row, body, keyring, &mut problems);
        draft.validate(&mut problems, settings.allow_private, &settings.regions);
        problems.into_result()?;
        Ok(CheckedMonitor::Replace(Box::new(Rewrite {
            draft,
            rules,
            contact_ids: Some(contact_ids),
            r#ref: Some(r#ref.to_string()),
        })))
    }

    fn compare(
        state: &AppState,
        stored: &StoredMonitor,
        checked: &CheckedMonitor,
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError> {
        let CheckedMonitor::Replace(change) = checked else {
            return Err(ApiError::Internal(
                "a create compared with a monitor".into(),
            ));
        };
        let current = stored.current(r#ref, state)?;
        let contact_ids = change.contact_ids.as_deref().unwrap_or_default();
        let settings = WriteSettings::of(state);
        let changes = changes_of(
            &current,
            &change.draft,
            &change.rules,
            contact_ids,
            Some(r#ref),
            &settings,
        )?;
        Ok((!changes.is_empty()).then_some(changes))
    }

    async fn insert(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        checked: &CheckedMonitor,
        _: &str,
        in_apply: bool,
    ) -> Result<(StoredMonitor, Changed), ApiError> {
        let CheckedMonitor::Create { creation, rules } = checked else {
            return Err(ApiError::Internal("a replacement inserted".into()));
        };
        let settings = settings(state, in_apply);
        let written =
            writes::insert(c, user, (**creation).clone(), rules.clone(), &settings).await?;
        let stored = StoredMonitor {
            row: written.row,
            contact_ids: written.contact_ids,
        };
        Ok((stored, Changed(true)))
    }

    async fn rewrite(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        stored: &StoredMonitor,
        checked: &CheckedMonitor,
        r#ref: &str,
        in_apply: bool,
    ) -> Result<(StoredMonitor, Changed), ApiError> {
        let CheckedMonitor::Replace(change) = checked else {
            return Err(ApiError::Internal("a create written over a monitor".into()));
        };
        let current = stored.current(r#ref, state)?;
        let settings = settings(state, in_apply);
        let written = writes::rewrite(c, user, current, (**change).clone(), &settings).await?;
        let changed = Changed(written.changed);
        let stored = StoredMonitor {
            row: written.row,
            contact_ids: written.contact_ids,
        };
        Ok((stored, changed))
    }

    /// One statement: the links and rollups go with it (ON DELETE
    /// CASCADE); its results stay, unseen, until their day's partition
    /// expires.
    async fn remove(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        stored: &StoredMonitor,
        r#ref: Option<&str>,
    ) -> Result<(), ApiError> {
        let before = audited(&Self::shown(state, stored, r#ref)?, &stored.row);
        let id = stored.row.id;
        if !uptime_db::monitors::delete(c, user.org_id, id).await? {
            return Err(ApiError::NotFound);
        }
        audit::record(
            c,
            user,
            audit::action::DELETE,
            audit::kind::MONITOR,
            Some(id),
            audit::changes(Some(&before), None),
        )
        .await
    }

    async fn removed(state: &AppState, id: i64) {
        announce(state, id, MonitorChange::Deleted).await;
    }

    async fn answered(
        state: &AppState,
        row: StoredMonitor,
        r#ref: &str,
        changed: Changed,
        _: bool,
    ) -> Result<MonitorResponse, ApiError> {
        if changed.0 {
            announce(state, row.row.id, MonitorChange::Upserted).await;
        }
        Self::shown(state, &row, Some(r#ref))
    }

    /// Three queries whatever their number (the rows locked by the
    /// organisation, as an apply manages every monitor with a ref).
    async fn managed(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
    ) -> Result<Vec<(String, StoredMonitor)>, ApiError> {
        let mut refs: std::collections::HashMap<i64, String> =
            uptime_db::refs::all(c, RefKind::Monitor, user.org_id)
                .await?
                .into_iter()
                .collect();
        let ids: Vec<i64> = refs.keys().copied().collect();
        let rows = uptime_db::refs::monitors_locked(c, user.org_id, &ids).await?;
        let mut contacts = uptime_db::monitors::contact_ids_of(c, &ids).await?;
        Ok(rows
            .into_iter()
            .filter_map(|row| {
                let r#ref = refs.remove(&row.id)?;
                let contact_ids = contacts.remove(&row.id).unwrap_or_default();
                Some((r#ref, StoredMonitor { row, contact_ids }))
            })
            .collect())
    }
}

kind_routes! {
    Monitors at "/api/v1/monitors", tag "monitors", MonitorRef,
    shows MonitorResponse, creates CreateMonitor;
    id "Monitor id";
    no_ref "no monitor of the organisation has this ref, or it is out of the key's reach (`ref`)";

    /// Read one of the caller's monitors.
    get "getMonitor" => get;

    /// Delete one of the caller's monitors. Its results disappear from the API at
    /// once and from disk with their day partitions (docs/operations.md, retention).
    delete "deleteMonitor" => delete;

    /// Read the caller's monitor with this ref: what `GET /api/v1/monitors/{id}`
    /// answers for its id.
    get_by_ref "getMonitorByRef" => get_monitor_by_ref;

    /// Delete the caller's monitor with this ref, as
    /// `DELETE /api/v1/monitors/{id}` does (`If-Match` honoured, one audit
    /// entry).
    delete_by_ref "deleteMonitorByRef" => delete_monitor_by_ref;

    /// Create or replace the caller's monitor with this ref.
    ///
    /// The body is a create body (`POST /api/v1/monitors`), without `ref` or
    /// with the path's. No monitor has the ref: it is created with it (`201`).
    /// One has: it is replaced (`200`): every field not given returns to its
    /// default, as with a fresh create, except a basic-auth password not
    /// restated, which is kept; its id, results and incidents stay. When that
    /// changes nothing, nothing is written (the same version, `ETag`, as
    /// before). The same validation, quotas, audit entry and rate-limit charge
    /// as the create or update it amounts to; `If-Match` is honoured (and fails
    /// when there is no monitor to match).
    put_by_ref "putMonitorByRef" => put_by_ref,
        forbidden "quota exceeded, as for a create or an update",
        conflict "the ref is not free (`ref`): another request created a monitor with it meanwhile, or, for a key with a label selector, a monitor out of its reach has it (the message does not say which)";
}
