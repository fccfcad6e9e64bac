//! An apply's view of the organisation: every kind's resources that carry
//! a ref, loaded and locked at the start of its transaction, and each
//! desired resource planned against them (its refs resolved).

use super::monitor_policy::{split_link, PolicyLink};
use crate::apply::plan::{self, RefTable, Stored};
use crate::apply::request::{Action, Kind, PlanEntry, ResourceInput};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::resource::managed::{Managed, ManagedKind, PlannedWrite};
use crate::resource::Plan;
use crate::routes::contacts::Contacts;
use crate::routes::escalation_policies::Policies;
use crate::routes::maintenance_windows::Windows;
use crate::routes::monitors::Monitors;
use crate::routes::status_pages::Pages;
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use std::collections::HashMap;

/// One desired resource, planned.
pub(super) enum Desired {
    Monitor(Box<Plan<Monitors>>, PolicyLink),
    Other(Box<dyn PlannedWrite>),
}

/// The organisation's managed resources.
pub(super) struct ManagedSet {
    pub(super) monitors: Managed<Monitors>,
    /// The policies the managed monitors alert through, by monitor id.
    monitor_policies: HashMap<i64, i64>,
    /// Every other kind, in the order an apply writes them.
    kinds: Vec<Box<dyn ManagedKind>>,
}

impl ManagedSet {
    pub(super) async fn load(c: &mut AsyncPgConnection, user: &AuthUser) -> Result<Self, ApiError> {
        let mut kinds = Vec::with_capacity(Kind::ALL.len());
        let mut monitors = None;
        for kind in Kind::ALL {
            kinds.push(match kind {
                Kind::AlertContact => Managed::<Contacts>::load(c, user).await?,
                Kind::EscalationPolicy => Managed::<Policies>::load(c, user).await?,
                Kind::Monitor => {
                    monitors = Some(Managed::<Monitors>::of(c, user).await?);
                    continue;
                }
                Kind::MaintenanceWindow => Managed::<Windows>::load(c, user).await?,
                Kind::StatusPage => Managed::<Pages>::load(c, user).await?,
            });
        }
        let monitors = monitors.ok_or_else(|| ApiError::Internal("monitors not loaded".into()))?;
        let monitor_ids: Vec<i64> = monitors.stored().into_iter().map(|(_, id)| id).collect();
        let monitor_policies = uptime_db::escalation_policies::of_monitors(c, &monitor_ids).await?;
        Ok(Self {
            monitors,
            monitor_policies,
            kinds,
        })
    }

    /// The managed resources of `kind`.
    pub(super) fn kind(&self, kind: Kind) -> Result<&dyn ManagedKind, ApiError> {
        if kind == Kind::Monitor {
            return Ok(&self.monitors);
        }
        self.kinds
            .iter()
            .find(|k| k.kind() == kind)
            .map(|k| k.as_ref())
            .ok_or_else(|| ApiError::Internal(format!("{} is not managed", kind.as_str())))
    }

    pub(super) fn stored(&self) -> Stored {
        let monitors: &dyn ManagedKind = &self.monitors;
        std::iter::once(monitors)
            .chain(self.kinds.iter().map(|k| k.as_ref()))
            .flat_map(|k| {
                let kind = k.kind();
                k.stored().into_iter().map(move |(r, id)| ((kind, r), id))
            })
            .collect()
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
            let plan = self
                .monitors
                .plan_of(c, state, user, r#ref, spec, placeholders)
                .await?;
            return Ok(Desired::Monitor(Box::new(plan), link));
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
            let (mut action, id, mut changes) = plan.entry();
            if link.changes() && action != Action::Create {
                changes.get_or_insert_with(Vec::new).push(link.change());
                action = Action::Update;
            }
            (action, id, changes)
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
