//! The kinds of an apply around monitors and contacts: escalation
//! policies (written after contacts, before monitors, which name them),
//! maintenance windows and status pages (written after monitors, which
//! they name), and the escalation policy a monitor alerts through (the
//! `escalation_policy_id`/`escalation_policy_ref` of a monitor's spec).
//!
//! Each resource is planned and written by its kind's own code
//! (`plan_window`/`execute_window` and friends), the validation and writes
//! of its `POST` and `PUT .../by-ref/{ref}`. The managed resources of these
//! kinds are loaded one row at a time: an organisation has at most 200
//! windows, 100 policies and `status_pages.max_pages_per_org` pages.

use crate::apply::changes::FieldChange;
use crate::apply::request::{Action, Kind};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::routes::escalation_policies::{self as policies, PolicyPlan};
use crate::routes::maintenance_windows::{self as windows, WindowPlan};
use crate::routes::status_pages::{self as pages, PagePlan};
use crate::state::AppState;
use chrono::Utc;
use diesel_async::AsyncPgConnection;
use serde_json::{json, Value};
use std::collections::HashMap;
use uptime_db::escalation_policies::Policy;
use uptime_db::maintenance::MaintenanceWindow;
use uptime_db::refs::RefKind;
use uptime_db::status_pages::StatusPage;

/// The organisation's windows, pages and policies that carry a ref, by
/// ref, locked until the transaction ends; and the policies its managed
/// monitors alert through.
#[derive(Default)]
pub(super) struct ManagedConfig {
    windows: HashMap<String, MaintenanceWindow>,
    pages: HashMap<String, StatusPage>,
    policies: HashMap<String, Policy>,
    monitor_policies: HashMap<i64, i64>,
}

impl ManagedConfig {
    pub(super) async fn load(
        c: &mut AsyncPgConnection,
        org_id: i64,
        monitor_ids: &[i64],
    ) -> Result<Self, ApiError> {
        let mut managed = Self::default();
        for (id, r#ref) in uptime_db::refs::all(c, RefKind::MaintenanceWindow, org_id).await? {
            if let Some(row) = uptime_db::maintenance::get_for_update(c, org_id, id).await? {
                managed.windows.insert(r#ref, row);
            }
        }
        for (id, r#ref) in uptime_db::refs::all(c, RefKind::StatusPage, org_id).await? {
            if let Some(row) = uptime_db::status_pages::get(c, org_id, id, true).await? {
                managed.pages.insert(r#ref, row);
            }
        }
        for (id, r#ref) in uptime_db::refs::all(c, RefKind::EscalationPolicy, org_id).await? {
            if let Some(row) = uptime_db::escalation_policies::get(c, org_id, id, true).await? {
                managed.policies.insert(r#ref, row);
            }
        }
        managed.monitor_policies =
            uptime_db::escalation_policies::of_monitors(c, monitor_ids).await?;
        Ok(managed)
    }

    /// `((kind, ref), id)` of every managed resource of these kinds.
    pub(super) fn stored(&self) -> impl Iterator<Item = ((Kind, String), i64)> + '_ {
        let windows = self
            .windows
            .iter()
            .map(|(r, w)| ((Kind::MaintenanceWindow, r.clone()), w.id));
        let pages = self
            .pages
            .iter()
            .map(|(r, p)| ((Kind::StatusPage, r.clone()), p.id));
        let policies = self
            .policies
            .iter()
            .map(|(r, p)| ((Kind::EscalationPolicy, r.clone()), p.id));
        windows.chain(pages).chain(policies)
    }

    /// Takes the policy a monitor's resolved spec names out of it (the
    /// monitor's own body has no such field), beside the one the stored
    /// monitor `monitor_id` alerts through.
    pub(super) fn split_link(
        &self,
        mut spec: Value,
        monitor_id: Option<i64>,
    ) -> Result<(Value, PolicyLink), ApiError> {
        let field = "escalation_policy_id";
        let given = spec.as_object_mut().and_then(|o| o.remove(field));
        let wanted = match given {
            None | Some(Value::Null) => None,
            Some(value) => Some(value.as_i64().ok_or_else(|| {
                ApiError::invalid_field(field, "must be an escalation policy's id, or null")
            })?),
        };
        let has_contacts = spec
            .get("alert_contact_ids")
            .and_then(Value::as_array)
            .is_some_and(|ids| !ids.is_empty());
        if wanted.is_some() && has_contacts {
            return Err(ApiError::invalid_field(
                field,
                "a monitor alerts through a policy or its alert contacts, not both",
            ));
        }
        let stored = monitor_id.and_then(|id| self.monitor_policies.get(&id).copied());
        Ok((spec, PolicyLink { stored, wanted }))
    }

    /// Plans one resource of these kinds from its resolved spec
    /// (`placeholders`: before anything is written, when negative ids
    /// stand for resources the apply creates).
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn plan(
        &self,
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        state: &AppState,
        kind: Kind,
        r#ref: &str,
        spec: Value,
        placeholders: bool,
    ) -> Result<OtherPlan, ApiError> {
        Ok(match kind {
            Kind::MaintenanceWindow => {
                let stored = self.windows.get(r#ref).cloned();
                let now = Utc::now();
                OtherPlan::Window(
                    windows::plan_window(c, user, r#ref, stored, spec, now, placeholders).await?,
                )
            }
            Kind::StatusPage => OtherPlan::Page(pages::plan_page(
                r#ref,
                self.pages.get(r#ref).cloned(),
                spec,
            )?),
            Kind::EscalationPolicy => OtherPlan::Policy(policies::plan_policy(
                r#ref,
                self.policies.get(r#ref).cloned(),
                spec,
                state.settings.escalation.min_delay_secs,
            )?),
            Kind::Monitor | Kind::AlertContact => {
                return Err(ApiError::Internal(format!(
                    "{} is not planned here",
                    kind.as_str()
                )))
            }
        })
    }

    /// Deletes the managed resource `r#ref` of `kind` (its audit entry; a
    /// policy monitors still alert through is a 409).
    pub(super) async fn prune(
        &self,
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        kind: Kind,
        r#ref: &str,
    ) -> Result<(), ApiError> {
        let missing = || {
            ApiError::Internal(format!(
                "{} {:?} to delete not loaded",
                kind.as_str(),
                r#ref
            ))
        };
        match kind {
            Kind::MaintenanceWindow => {
                let stored = self.windows.get(r#ref).ok_or_else(missing)?;
                windows::remove(c, user, stored.clone(), Some(r#ref)).await
            }
            Kind::StatusPage => {
                let stored = self.pages.get(r#ref).ok_or_else(missing)?;
                pages::remove(c, user, stored.id, Some(r#ref)).await
            }
            Kind::EscalationPolicy => {
                let stored = self.policies.get(r#ref).ok_or_else(missing)?;
                policies::remove(c, user, stored, Some(r#ref)).await
            }
            Kind::Monitor | Kind::AlertContact => Err(missing()),
        }
    }
}

/// The policy a monitor alerts through: as stored, and as the spec wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PolicyLink {
    pub(super) stored: Option<i64>,
    pub(super) wanted: Option<i64>,
}

impl PolicyLink {
    pub(super) fn changes(&self) -> bool {
        self.stored != self.wanted
    }

    /// The plan's line for it.
    pub(super) fn change(&self) -> FieldChange {
        FieldChange {
            field: "escalation_policy_id".into(),
            before: json!(self.stored),
            after: json!(self.wanted),
        }
    }
}

/// Points the monitors whose policy changes away from their stored one,
/// before their rows are written (a monitor given contacts must not alert
/// through a policy at that moment). `links`: `(monitor id, link)`.
pub(super) async fn clear_links(
    c: &mut AsyncPgConnection,
    links: &[(i64, PolicyLink)],
) -> Result<(), ApiError> {
    for (monitor_id, link) in links {
        if link.stored.is_some() && link.changes() {
            uptime_db::escalation_policies::set_for_monitor(c, *monitor_id, None).await?;
        }
    }
    Ok(())
}

/// Points monitor `monitor_id` at the policy it wants, once written (its
/// policy checked to be the organisation's, locked until commit), with the
/// monitor's update entry as `PUT .../escalation-policy` writes it.
pub(super) async fn set_link(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    monitor_id: i64,
    link: PolicyLink,
) -> Result<(), ApiError> {
    if !link.changes() {
        return Ok(());
    }
    if let Some(policy_id) = link.wanted {
        if uptime_db::escalation_policies::get(c, user.org_id, policy_id, true)
            .await?
            .is_none()
        {
            return Err(ApiError::invalid_field(
                "escalation_policy_id",
                format!("no such escalation policy: {policy_id}"),
            ));
        }
        uptime_db::escalation_policies::set_for_monitor(c, monitor_id, Some(policy_id)).await?;
    }
    audit::record(
        c,
        user,
        audit::action::UPDATE,
        audit::kind::MONITOR,
        Some(monitor_id),
        json!({"escalation_policy_id": {"before": link.stored, "after": link.wanted}}),
    )
    .await
}

/// One desired window, page or policy, planned.
pub(super) enum OtherPlan {
    Window(WindowPlan),
    Page(PagePlan),
    Policy(PolicyPlan),
}

impl OtherPlan {
    /// The plan entry's action, stored id and changes.
    pub(super) fn entry(&self) -> (Action, Option<i64>, Option<Vec<FieldChange>>) {
        match self {
            OtherPlan::Window(plan) => match plan {
                WindowPlan::Create(_) => (Action::Create, None, None),
                WindowPlan::Update { changes, .. } => {
                    (Action::Update, plan.id(), Some(changes.clone()))
                }
                WindowPlan::Unchanged(_) => (Action::Unchanged, plan.id(), None),
            },
            OtherPlan::Page(plan) => match plan {
                PagePlan::Create { .. } => (Action::Create, None, None),
                PagePlan::Update { changes, .. } => {
                    (Action::Update, plan.id(), Some(changes.clone()))
                }
                PagePlan::Unchanged(_) => (Action::Unchanged, plan.id(), None),
            },
            OtherPlan::Policy(plan) => match plan {
                PolicyPlan::Create(_) => (Action::Create, None, None),
                PolicyPlan::Update { changes, .. } => {
                    (Action::Update, plan.id(), Some(changes.clone()))
                }
                PolicyPlan::Unchanged(_) => (Action::Unchanged, plan.id(), None),
            },
        }
    }

    /// Carries out the plan in the caller's transaction; the resource's id.
    pub(super) async fn execute(
        self,
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        state: &AppState,
        r#ref: &str,
    ) -> Result<i64, ApiError> {
        match self {
            OtherPlan::Window(plan) => {
                windows::execute_window(c, user, r#ref, plan, Utc::now()).await
            }
            OtherPlan::Page(plan) => {
                let limit = state.settings.status_pages.max_pages_per_org;
                pages::execute_page(c, user, r#ref, plan, limit).await
            }
            OtherPlan::Policy(plan) => policies::execute_policy(c, user, r#ref, plan).await,
        }
    }
}
