//! The writes behind `POST`, `PATCH` and `PUT .../by-ref/{ref}` of
//! monitors (and `POST /api/v1/apply`): one insert and one rewrite, each in
//! the caller's transaction, so every rule of a write (quota, contacts,
//! dependencies, the ref, the audit entry) is written once.

use super::alert_rules;
use super::contact_ids::checked_contact_ids;
use super::draft::{new_heartbeat_token, Creation, Draft};
use super::labels::check_selector;
use super::monitor_type::MonitorType;
use super::types::MonitorResponse;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::settings::QuotaSettings;
use chrono::Utc;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
use serde_json::Value;
use uptime_db::alerting::AlertRules;
use uptime_db::models::Monitor;
use uptime_db::refs::RefKind;

/// What the writes need of the deployment's settings.
#[derive(Clone)]
pub(super) struct WriteSettings {
    pub(super) quotas: QuotaSettings,
    pub(super) regions: uptime_config::RegionsSettings,
    pub(super) keyring: Option<std::sync::Arc<uptime_secrets::Keyring>>,
    pub(super) allow_private: bool,
    pub(super) floors: alert_rules::Floors,
    /// The caller checks the quotas once for the end state of many writes
    /// (an apply), in the same transaction: the writes check none.
    pub(super) end_state_quota: bool,
}

impl WriteSettings {
    pub(super) fn of(state: &crate::state::AppState) -> Self {
        Self {
            quotas: state.settings.quotas.clone(),
            regions: state.settings.regions.clone(),
            keyring: state.keyring.clone(),
            allow_private: state.settings.safety.allow_private_targets,
            floors: state.settings.alert_rules.into(),
            end_state_quota: false,
        }
    }
}

/// A monitor as written: its row, its contacts (ascending) and its ref.
pub(super) struct Written {
    pub(super) row: Monitor,
    pub(super) contact_ids: Vec<i64>,
    pub(super) r#ref: Option<String>,
    /// Whether anything was written: `false` for an update that changed
    /// nothing (`audit::update`), which is not announced either.
    pub(super) changed: bool,
}

/// The monitor as the audit log compares it: its representation and its
/// write-only secrets (`audit::audited`), each named by its request field.
pub(super) fn audited(response: &MonitorResponse, row: &Monitor) -> Value {
    audit::audited(
        response,
        &[(
            "basic_auth.password",
            row.http_password_sealed.as_ref().map(|s| s.as_str()),
        )],
    )
}

impl Written {
    pub(super) fn shown(
        self,
        regions: &uptime_config::RegionsSettings,
    ) -> Result<MonitorResponse, ApiError> {
        Ok(MonitorResponse::from_row(self.row, self.contact_ids, regions)?.with_ref(self.r#ref))
    }
}

/// Inserts a validated create: quota for one more, its contacts and
/// dependencies checked, the row, its rules, links and ref, one audit entry.
pub(super) async fn insert(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    creation: Creation,
    rules: AlertRules,
    settings: &WriteSettings,
) -> Result<Written, ApiError> {
    let Creation {
        new,
        labels,
        contact_ids,
        r#ref,
    } = creation;
    check_selector(user, &labels)?;
    if !settings.end_state_quota {
        let load = crate::quotas::load_of(&new.definition);
        crate::quotas::ensure_room_for_monitors(c, &settings.quotas, user.org_id, 1, load).await?;
    }
    let contact_ids = checked_contact_ids(c, user.org_id, contact_ids).await?;
    alert_rules::check_dependencies(c, user, None, &rules.depends_on).await?;
    let labels = (!labels.is_empty()).then(|| labels.to_json());
    let mut row = uptime_db::monitors::create_labelled(c, new, labels).await?;
    // Only a monitor that sets any rule writes them.
    if rules != AlertRules::default() {
        row = uptime_db::alerting::set_rules(c, row.id, rules).await?;
    }
    uptime_db::monitors::replace_contacts(c, row.id, &contact_ids).await?;
    crate::refs::set_on_create(c, RefKind::Monitor, user, row.id, r#ref.as_deref()).await?;
    let written = Written {
        row,
        contact_ids,
        r#ref,
        changed: true,
    };
    let id = written.row.id;
    let shown = audited(
        &MonitorResponse::from_row(
            written.row.clone(),
            written.contact_ids.clone(),
            &settings.regions,
        )?
        .with_ref(written.r#ref.clone()),
        &written.row,
    );
    audit::record(
        c,
        user,
        audit::action::CREATE,
        audit::kind::MONITOR,
        Some(id),
        audit::changes(None, Some(&shown)),
    )
    .await?;
    Ok(written)
}

/// A stored monitor as a rewrite starts from: locked, with its contacts,
/// ref and representation (whose tag `If-Match` names).
#[derive(Clone)]
pub(super) struct Current {
    pub(super) row: Monitor,
    pub(super) contact_ids: Vec<i64>,
    pub(super) r#ref: Option<String>,
    pub(super) shown: Value,
    /// The representation with its secrets, for the audit log ([`audited`]).
    pub(super) audited: Value,
}

impl Current {
    /// The stored parts, with their representation and its tag.
    pub(super) fn of(
        row: Monitor,
        contact_ids: Vec<i64>,
        r#ref: Option<String>,
        regions: &uptime_config::RegionsSettings,
    ) -> Result<(Self, String), ApiError> {
        let response = MonitorResponse::from_row(row.clone(), contact_ids.clone(), regions)?
            .with_ref(r#ref.clone());
        let tag = crate::etag::of_json(&response);
        let audited = audited(&response, &row);
        Ok((
            Self {
                row,
                contact_ids,
                r#ref,
                shown: audit::shown(&response),
                audited,
            },
            tag,
        ))
    }

    /// The monitor `id` the caller reaches, locked until the transaction
    /// ends; `None` when there is none.
    pub(super) async fn load(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        regions: &uptime_config::RegionsSettings,
    ) -> Result<Option<(Self, String)>, ApiError> {
        let Some(row) = uptime_db::monitors::get_for_update_within(c, user.reach(), id).await?
        else {
            return Ok(None);
        };
        let contact_ids = uptime_db::monitors::contact_ids_of(c, &[id])
            .await?
            .remove(&id)
            .unwrap_or_default();
        let r#ref = uptime_db::refs::of_one(c, RefKind::Monitor, id).await?;
        Self::of(row, contact_ids, r#ref, regions).map(Some)
    }
}

/// What a rewrite sets besides the definition.
#[derive(Clone)]
pub struct Rewrite {
    pub(super) draft: Draft,
    pub(super) rules: AlertRules,
    /// `None` keeps the linked contacts.
    pub(super) contact_ids: Option<Vec<i64>>,
    /// The ref after the write (a new one only where none was set).
    pub(super) r#ref: Option<String>,
}

/// Rewrites a stored monitor with a validated draft: selector, quota for the
/// change, dependencies, the definition (runtime reset when what is watched
/// changed), rules, contacts, ref, one audit entry; or nothing at all when
/// that changes nothing (`audit::update`: no new `updated_at`, so a
/// heartbeat's period is not restarted, and no new version).
pub(super) async fn rewrite(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    current: Current,
    change: Rewrite,
    settings: &WriteSettings,
) -> Result<Written, ApiError> {
    let Rewrite {
        mut draft,
        rules,
        contact_ids: new_contacts,
        r#ref,
    } = change;
    let stored = &current.row;
    let id = stored.id;
    check_selector(user, &draft.labels)?;
    // A password restated as stored keeps its seal: a new seal of the same
    // password would read as a change.
    draft.keep_restated_password(stored, settings.keyring.as_deref());
    let labels = std::mem::take(&mut draft.labels).to_json();
    let watched_changed = uptime_contracts::MonitorKind::from(draft.kind) != stored.kind
        || (draft.kind != MonitorType::Heartbeat && draft.target != stored.target);
    let token = match (draft.kind, stored.heartbeat_token.clone()) {
        (MonitorType::Heartbeat, Some(kept)) => Some(kept),
        (MonitorType::Heartbeat, None) => Some(new_heartbeat_token()),
        _ => None,
    };
    let def = draft.into_definition(token, &settings.regions, settings.keyring.as_deref())?;
    if !settings.end_state_quota {
        let load = crate::quotas::load_of(&def);
        crate::quotas::ensure_load_for_change(c, &settings.quotas, user.org_id, id, load).await?;
    }
    let definition_change = uptime_db::monitors::DefinitionChange {
        check_changed: def.changes_checks_of(stored),
        reset_runtime_at: watched_changed.then(Utc::now),
    };
    if rules.depends_on != stored.rules.depends_on {
        alert_rules::check_dependencies(c, user, Some(id), &rules.depends_on).await?;
    }
    let stored_rules = AlertRules::of(stored);
    let current_ref = &current;
    // The closure below runs inside `audit::update`, which borrows `user` too.
    let who = user;
    let written = audit::update(
        c,
        user,
        audit::kind::MONITOR,
        Some(id),
        &current.audited,
        move |c| {
            async move {
                let current = current_ref;
                let mut row = uptime_db::monitors::update_definition_labelled(
                    c,
                    id,
                    def,
                    definition_change,
                    Some(labels),
                )
                .await?;
                if rules != stored_rules {
                    row = uptime_db::alerting::set_rules(c, id, rules).await?;
                }
                let contact_ids = match new_contacts {
                    Some(ids) => {
                        if !ids.is_empty() {
                            crate::routes::escalation_policies::ensure_no_policy(c, id).await?;
                        }
                        let ids = checked_contact_ids(c, user.org_id, ids).await?;
                        uptime_db::monitors::replace_contacts(c, id, &ids).await?;
                        ids
                    }
                    None => current.contact_ids.clone(),
                };
                crate::refs::set_if_new(
                    c,
                    RefKind::Monitor,
                    who,
                    id,
                    current.r#ref.as_deref(),
                    r#ref.as_deref(),
                )
                .await?;
                // Compared at the stored update time: what derives from it
                // (a heartbeat's `next_expected_at`) moves with any write,
                // and is no change of its own.
                let mut compared = row.clone();
                compared.updated_at = current.row.updated_at;
                let after = audited(
                    &MonitorResponse::from_row(compared, contact_ids.clone(), &settings.regions)?
                        .with_ref(r#ref.clone()),
                    &row,
                );
                let written = Written {
                    row,
                    contact_ids,
                    r#ref,
                    changed: true,
                };
                Ok((written, after))
            }
            .scope_boxed()
        },
    )
    .await?;
    Ok(written.unwrap_or(Written {
        row: current.row,
        contact_ids: current.contact_ids,
        r#ref: current.r#ref,
        changed: false,
    }))
}
