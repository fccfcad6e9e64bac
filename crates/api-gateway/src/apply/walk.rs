//! The writes of an apply, kind after kind in [`Kind::ALL`]'s order (each
//! after the kinds it may name), every resource planned again with the ids
//! known by then (a created contact's, a created monitor's). Monitors go
//! their own way within the walk: the plain creates in a few multi-row
//! statements, the others in dependency order, then the policies they
//! alert through.

use super::managed::{entry_of, Desired, ManagedSet};
use super::monitor_policy::{clear_links, set_link, PolicyLink};
use super::refusals::{failure_at, Failure};
use crate::apply::plan::{Key, RefTable};
use crate::apply::request::{Action, Kind, PlanEntry, ResourceInput};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::resource::{execute, Resource};
use crate::routes::monitors::{insert_plain, is_plain_create, Monitors};
use crate::state::AppState;
use diesel_async::AsyncPgConnection;

/// What the walk works through and fills in.
pub(super) struct Walk<'a> {
    pub(super) state: &'a AppState,
    pub(super) user: &'a AuthUser,
    pub(super) managed: &'a ManagedSet,
    pub(super) inputs: &'a [(usize, ResourceInput)],
    pub(super) keys: &'a [Key],
    pub(super) table: RefTable,
    /// The plan's entries, request order.
    pub(super) entries: Vec<PlanEntry>,
    /// The id of each resource once written.
    pub(super) written_ids: Vec<Option<i64>>,
    /// The monitors written (to announce).
    pub(super) written_monitors: Vec<i64>,
}

impl Walk<'_> {
    fn fail(&self, position: usize, e: ApiError) -> Failure {
        failure_at(self.inputs, self.keys, position, e)
    }

    async fn plan_again(
        &mut self,
        c: &mut AsyncPgConnection,
        position: usize,
    ) -> Result<Desired, Failure> {
        let input = &self.inputs[position].1;
        let desired = self
            .managed
            .plan(c, self.state, self.user, input, &self.table, false)
            .await
            .map_err(|e| self.fail(position, e))?;
        self.entries[position] = entry_of(input, &desired);
        Ok(desired)
    }

    /// Writes every kind; `links`: the monitors' policies as first planned.
    pub(super) async fn write_all(
        &mut self,
        c: &mut AsyncPgConnection,
        planned_links: &[Option<PolicyLink>],
        order: &[usize],
    ) -> Result<(), Failure> {
        for kind in Kind::ALL {
            if kind == Kind::Monitor {
                self.write_monitors(c, planned_links, order).await?;
            } else {
                self.write_kind(c, kind).await?;
            }
        }
        for (entry, id) in self.entries.iter_mut().zip(&self.written_ids) {
            entry.id = entry.id.or(*id);
        }
        Ok(())
    }

    /// Writes the request's resources of `kind` (not monitors).
    async fn write_kind(&mut self, c: &mut AsyncPgConnection, kind: Kind) -> Result<(), Failure> {
        for position in 0..self.inputs.len() {
            if self.inputs[position].1.kind != kind {
                continue;
            }
            let Desired::Other(plan) = self.plan_again(c, position).await? else {
                continue;
            };
            let created = self.entries[position].action == Action::Create;
            let r#ref = &self.inputs[position].1.r#ref;
            let id = plan
                .execute(c, self.state, self.user, r#ref)
                .await
                .map_err(|e| self.fail(position, e))?;
            if created {
                self.table.created(self.keys[position].clone(), id);
            }
            self.written_ids[position] = Some(id);
        }
        Ok(())
    }

    /// Writes the request's monitors in `order` (positions among them, as
    /// `plan::creation_order` gives), then the policies they alert through.
    async fn write_monitors(
        &mut self,
        c: &mut AsyncPgConnection,
        planned_links: &[Option<PolicyLink>],
        order: &[usize],
    ) -> Result<(), Failure> {
        // Monitors leaving their policy leave it before they are written
        // (one given contacts must not alert through one).
        let leaving: Vec<(i64, PolicyLink)> = planned_links
            .iter()
            .zip(&self.entries)
            .filter_map(|(link, entry)| Some((entry.id?, (*link)?)))
            .collect();
        clear_links(c, &leaving).await?;
        let positions: Vec<usize> = (0..self.inputs.len())
            .filter(|&p| self.inputs[p].1.kind == Kind::Monitor)
            .collect();
        let mut links: Vec<Option<PolicyLink>> = vec![None; self.inputs.len()];
        // Plain creates first, in a few statements (they name no other
        // monitor, so nothing need be written before them).
        let (mut plain, mut plain_positions, mut rest) = (Vec::new(), Vec::new(), Vec::new());
        for &graph_position in order {
            let position = positions[graph_position];
            let Desired::Monitor(plan, link) = self.plan_again(c, position).await? else {
                continue;
            };
            links[position] = Some(link);
            if is_plain_create(&plan) {
                plain.push((self.inputs[position].1.r#ref.clone(), *plan));
                plain_positions.push(position);
            } else {
                rest.push(position);
            }
        }
        let first_plain = plain_positions.first().copied();
        let ids = insert_plain(c, self.user, plain)
            .await
            .map_err(|e| match first_plain {
                Some(p) => self.fail(p, e),
                None => Failure::Api(e),
            })?;
        self.written_monitors.extend(&ids);
        for (&position, id) in plain_positions.iter().zip(ids) {
            self.table.created(self.keys[position].clone(), id);
            self.written_ids[position] = Some(id);
        }
        // The others in dependency order, planned again now that the
        // monitors they name have ids.
        for position in rest {
            let Desired::Monitor(plan, _) = self.plan_again(c, position).await? else {
                continue;
            };
            let action = plan.entry().0;
            let r#ref = &self.inputs[position].1.r#ref;
            let done = execute::<Monitors>(c, self.state, self.user, r#ref, *plan, true)
                .await
                .map_err(|e| self.fail(position, e))?;
            let id = Monitors::id(&done.row);
            if action == Action::Create {
                self.table.created(self.keys[position].clone(), id);
            }
            if action != Action::Unchanged {
                self.written_monitors.push(id);
            }
            self.written_ids[position] = Some(id);
        }
        for (position, link) in links.iter().enumerate() {
            if let (Some(link), Some(id)) = (link, self.written_ids[position]) {
                set_link(c, self.user, id, *link)
                    .await
                    .map_err(|e| self.fail(position, e))?;
            }
        }
        Ok(())
    }
}

/// The monitors of the request: `(index, ref, the refs it depends on)`,
/// request order.
pub(super) fn monitors_of(inputs: &[(usize, ResourceInput)]) -> Vec<(usize, String, Vec<String>)> {
    inputs
        .iter()
        .filter(|(_, r)| r.kind == Kind::Monitor)
        .map(|(i, r)| {
            let deps = crate::apply::plan::depends_on_refs(&r.spec);
            (*i, r.r#ref.clone(), deps)
        })
        .collect()
}
