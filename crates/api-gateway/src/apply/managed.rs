//! An apply's view of the organisation: every kind's resources that carry
//! a ref, loaded and locked at the start of its transaction, and each
//! desired resource planned against them (its refs resolved).

use super::monitor_policy::{split_link, PolicyLink};
use crate::apply::plan::{self, RefTable, Stored};
use crate::apply::request::{Action, Kind, PlanEntry, ResourceInput};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::resource::managed::{Managed, ManagedKind, PlannedWrite};
use crate::routes::contacts::Contacts;
use crate::routes::escalation_policies::Policies;
use crate::routes::maintenance_windows::Windows;
use crate::routes::monitors::{plan_monitor, ManagedMonitors, MonitorPlan, MonitorWrites};
use crate::routes::status_pages::Pages;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use std::collections::HashMap;

/// One desired resource, planned.
pub(super) enum Desired {
    Monitor(MonitorPlan, PolicyLink),
    Other(Box<dyn PlannedWrite>),
}

/// The organisation's managed resources.
pub(super) struct ManagedSet {
    /// The settings of the monitors' writes.
    pub(super) writes: MonitorWrites,
    pub(super) monitors: ManagedMonitors,
    /// The policies the managed monitors alert through, by monitor id.
    monitor_policies: HashMap<i64, i64>,
    /// Every other kind, in the order an apply writes them.
    kinds: Vec<Box<dyn ManagedKind>>,
}

impl ManagedSet {
    pub(super) async fn load(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
    ) -> Result<Self, ApiError> {
        let writes = MonitorWrites::of(state);
        let mut kinds = Vec::with_capacity(Kind::ALL.len());
        let mut monitors = None;
        for kind in Kind::ALL {
            kinds.push(match kind {
                Kind::AlertContact => Managed::<Contacts>::load(c, user).await?,
                Kind::EscalationPolicy => Managed::<Policies>::load(c, user).await?,
                Kind::Monitor => {
                    monitors = Some(ManagedMonitors::load(c, user.org_id, &writes).await?);
                    continue;
                }
                Kind::MaintenanceWindow => Managed::<Windows>::load(c, user).await?,
                Kind::StatusPage => Managed::<Pages>::load(c, user).await?,
            });
        }
        let monitors = monitors.ok_or_else(|| ApiError::Internal("monitors not loaded".into()))?;
        let monitor_ids: Vec<i64> = monitors.ids().map(|(_, id)| id).collect();
        let monitor_policies = uptime_db::escalation_policies::of_monitors(c, &monitor_ids).await?;
        Ok(Self {
            writes,
            monitors,
            monitor_policies,
            kinds,
        })
    }

    /// The managed resources of `kind` (not monitors).
    pub(super) fn kind(&self, kind: Kind) -> Result<&dyn ManagedKind, ApiError> {
        self.kinds
            .iter()
            .find(|k| k.kind() == kind)
            .map(|k| k.as_ref())
            .ok_or_else(|| ApiError::Internal(format!("{} is not managed", kind.as_str())))
    }

    pub(super) fn stored(&self) -> Stored {
        let monitors = self
            .monitors
            .ids()
            .map(|(r, id)| ((Kind::Monitor, r.to_string()), id));
        let others = self.kinds.iter().flat_map(|k| {
            let kind = k.kind();
            k.stored().into_iter().map(move |(r, id)| ((kind, r), id))
        });
        monitors.chain(others).collect()
    }

    /// Plans one resource against `table` (its refs resolved;
    /// `placeholders`: before anything is written, when refs to resources
    /// the apply creates resolve to negative placeholders).
    pub(super) async fn plan(
        &self,
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        input: &ResourceInput,
        table: &RefTable,
        placeholders: bool,
    ) -> Result<Desired, ApiError> {
        let spec = plan::resolved_spec(input.kind, &input.r#ref, &input.spec, table)
            .map_err(ApiError::InvalidBody)?;
        let r#ref = input.r#ref.as_str();
        if input.kind == Kind::Monitor {
            let stored_id = self.monitors.id_of(r#ref);
            let (spec, link) = split_link(&self.monitor_policies, spec, stored_id)?;
            return plan_monitor(user.org_id, r#ref, spec, &self.monitors, &self.writes)
                .map(|plan| Desired::Monitor(plan, link));
        }
        self.kind(input.kind)?
            .plan(c, state, user, r#ref, spec, placeholders)
            .await
            .map(Desired::Other)
    }
}

/// The plan entry of a planned resource.
pub(super) fn entry_of(input: &ResourceInput, desired: &Desired) -> PlanEntry {
    let (action, id, changes) = match desired {
        Desired::Monitor(plan, link) => {
            let mut action = plan.action();
            let mut changes = plan.changes();
            if link.changes() && action != Action::Create {
                changes.get_or_insert_with(Vec::new).push(link.change());
                action = Action::Update;
            }
            (action, plan.id(), changes)
        }
        Desired::Other(plan) => plan.entry(),
    };
    PlanEntry {
        kind: input.kind,
        r#ref: input.r#ref.clone(),
        action,
        id,
        changes,
        pruned: None,
    }
}
