//! The transaction of an apply: lock the organisation, load its managed
//! resources (one query per kind for contacts and monitors), plan every
//! resource (collecting every problem), then, unless a dry run, write:
//! contacts, escalation policies, then the monitors' plain creates in a few
//! multi-row statements, the other monitors in dependency order and the
//! policies monitors alert through, then maintenance windows and status
//! pages, then the prunes (the other way round); last the quotas of the
//! end state. A dry run does all of it and is rolled back.

use super::config_kinds::{clear_links, set_link, ManagedConfig, OtherPlan, PolicyLink};
use super::end_state::{check_end_state, delete_contact};
use super::refusals::{envelopes, failure_at, resource_errors, Failure};
use crate::apply::changes::FieldChange;
use crate::apply::plan::{self, Key, RefTable, Stored};
use crate::apply::request::{
    Action, ApplyRequest, ApplyResponse, Kind, PlanEntry, ResourceError, ResourceInput, Summary,
};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::routes::contacts::{
    execute_contact, plan_contact, ContactOutcome, CreateContact, StoredContact,
};
use crate::routes::monitors::{
    announce_all, delete_monitor, execute_monitor, insert_plain, plan_monitor, ManagedMonitors,
    MonitorPlan, MonitorWrites,
};
use crate::state::AppState;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use std::collections::HashMap;
use uptime_db::refs::RefKind;

/// One desired resource, planned.
enum Desired {
    Contact(crate::routes::contacts::PlannedContact),
    Monitor(MonitorPlan, PolicyLink),
    Other(OtherPlan),
}

/// The organisation's managed resources.
struct Managed {
    contacts: HashMap<String, StoredContact>,
    monitors: ManagedMonitors,
    others: ManagedConfig,
}

impl Managed {
    async fn load(
        c: &mut AsyncPgConnection,
        org_id: i64,
        writes: &MonitorWrites,
    ) -> Result<Self, ApiError> {
        let refs: HashMap<i64, String> = uptime_db::refs::all(c, RefKind::AlertContact, org_id)
            .await?
            .into_iter()
            .collect();
        let ids: Vec<i64> = refs.keys().copied().collect();
        let mut contacts = HashMap::with_capacity(ids.len());
        for row in uptime_db::refs::contacts_locked(c, org_id, &ids).await? {
            if let Some(r#ref) = refs.get(&row.id) {
                contacts.insert(r#ref.clone(), StoredContact::of(row, Some(r#ref.clone()))?);
            }
        }
        let monitors = ManagedMonitors::load(c, org_id, writes).await?;
        let monitor_ids: Vec<i64> = monitors.ids().map(|(_, id)| id).collect();
        let others = ManagedConfig::load(c, org_id, &monitor_ids).await?;
        Ok(Self {
            contacts,
            monitors,
            others,
        })
    }

    fn stored(&self) -> Stored {
        let contacts = self
            .contacts
            .iter()
            .map(|(r, s)| ((Kind::AlertContact, r.clone()), s.row.id));
        let monitors = self
            .monitors
            .ids()
            .map(|(r, id)| ((Kind::Monitor, r.to_string()), id));
        contacts
            .chain(monitors)
            .chain(self.others.stored())
            .collect()
    }
}

/// Plans one resource against `table` (its refs resolved; `placeholders`:
/// before anything is written, when refs to resources the apply creates
/// resolve to negative placeholders).
#[allow(clippy::too_many_arguments)]
async fn plan_resource(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    input: &ResourceInput,
    table: &RefTable,
    managed: &Managed,
    state: &AppState,
    writes: &MonitorWrites,
    placeholders: bool,
) -> Result<Desired, ApiError> {
    let spec = plan::resolved_spec(input.kind, &input.r#ref, &input.spec, table)
        .map_err(ApiError::InvalidBody)?;
    match input.kind {
        Kind::AlertContact => {
            let body: CreateContact = serde_json::from_value(spec)
                .map_err(|e| ApiError::invalid_field("spec", e.to_string()))?;
            let stored = managed.contacts.get(&input.r#ref).cloned();
            plan_contact(
                user.org_id,
                &input.r#ref,
                stored,
                body,
                state.settings.safety.allow_private_targets,
                state.keyring.as_deref(),
            )
            .map(Desired::Contact)
        }
        Kind::Monitor => {
            let stored_id = managed.monitors.id_of(&input.r#ref);
            let (spec, link) = managed.others.split_link(spec, stored_id)?;
            plan_monitor(user.org_id, &input.r#ref, spec, &managed.monitors, writes)
                .map(|plan| Desired::Monitor(plan, link))
        }
        other => managed
            .others
            .plan(c, user, state, other, &input.r#ref, spec, placeholders)
            .await
            .map(Desired::Other),
    }
}

/// Writes the request's resources of `kind` (a kind of
/// [`ManagedConfig`]), each planned again with the ids known by then.
#[allow(clippy::too_many_arguments)]
async fn write_others(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    kind: Kind,
    inputs: &[(usize, ResourceInput)],
    keys: &[Key],
    table: &mut RefTable,
    managed: &Managed,
    state: &AppState,
    writes: &MonitorWrites,
    entries: &mut [PlanEntry],
    written_ids: &mut [Option<i64>],
) -> Result<(), Failure> {
    for (position, (_, input)) in inputs.iter().enumerate() {
        if input.kind != kind {
            continue;
        }
        let desired = plan_resource(c, user, input, table, managed, state, writes, false)
            .await
            .map_err(|e| failure_at(inputs, keys, position, e))?;
        entries[position] = entry_of(input, &desired, None);
        let Desired::Other(plan) = desired else {
            continue;
        };
        let created = entries[position].action == Action::Create;
        let id = plan
            .execute(c, user, state, &input.r#ref)
            .await
            .map_err(|e| failure_at(inputs, keys, position, e))?;
        if created {
            table.created(keys[position].clone(), id);
        }
        written_ids[position] = Some(id);
    }
    Ok(())
}

/// The plan entry of a planned resource (`id` given once written).
fn entry_of(input: &ResourceInput, desired: &Desired, id: Option<i64>) -> PlanEntry {
    let (action, stored_id, changes): (Action, Option<i64>, Option<Vec<FieldChange>>) =
        match desired {
            Desired::Contact(planned) => {
                use crate::routes::contacts::PlannedContact as P;
                match planned {
                    P::Create { .. } => (Action::Create, None, None),
                    P::Update {
                        stored, changes, ..
                    } => (Action::Update, Some(stored.row.id), Some(changes.clone())),
                    P::Unchanged { stored } => (Action::Unchanged, Some(stored.row.id), None),
                }
            }
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
        id: id.or(stored_id),
        changes,
        pruned: None,
    }
}

/// Runs an apply: `Ok(Err(errors))` when resources were refused (nothing
/// written).
pub(super) async fn apply(
    state: &AppState,
    user: &AuthUser,
    body: ApplyRequest,
) -> Result<Result<ApplyResponse, Vec<ResourceError>>, ApiError> {
    let ApplyRequest {
        resources,
        dry_run,
        prune,
    } = body;
    let (inputs, envelope_errors) = envelopes(resources);
    let writes = MonitorWrites::of(state);
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let outcome = conn
        .transaction::<_, Failure, _>(|c| {
            async move {
                // The organisation's row first: concurrent applies and
                // creates of one organisation go one after the other.
                let before = uptime_db::quotas::lock_quotas(c, user.org_id, None).await?;
                let managed = Managed::load(c, user.org_id, &writes).await?;
                let stored = managed.stored();
                let keys: Vec<Key> = inputs
                    .iter()
                    .map(|(_, r)| (r.kind, r.r#ref.clone()))
                    .collect();
                let matching = plan::match_resources(&keys, &stored);
                let deleted: &[(Key, i64)] = if prune { &matching.absent } else { &[] };
                let mut table = RefTable::new(&stored, deleted, &keys);

                // Plan (and validate) every resource; collect every problem.
                let mut errors = envelope_errors;
                let mut entries = Vec::with_capacity(inputs.len());
                let mut planned_links: Vec<Option<PolicyLink>> = vec![None; inputs.len()];
                for (position, ((index, input), key)) in inputs.iter().zip(&keys).enumerate() {
                    let planned =
                        plan_resource(c, user, input, &table, &managed, state, &writes, true).await;
                    match planned {
                        Ok(desired) => {
                            if let Desired::Monitor(_, link) = &desired {
                                planned_links[position] = Some(*link);
                            }
                            entries.push(entry_of(input, &desired, None));
                        }
                        Err(e) => match resource_errors(*index, key, &e) {
                            Some(found) => errors.extend(found),
                            None => return Err(Failure::Api(e)),
                        },
                    }
                }
                let monitors: Vec<(usize, String, Vec<String>)> = inputs
                    .iter()
                    .filter(|(_, r)| r.kind == Kind::Monitor)
                    .map(|(i, r)| (*i, r.r#ref.clone(), plan::depends_on_refs(&r.spec)))
                    .collect();
                let graph: Vec<(String, Vec<String>)> = monitors
                    .iter()
                    .map(|(_, r, d)| (r.clone(), d.clone()))
                    .collect();
                let order = match plan::creation_order(&graph) {
                    Ok(order) => order,
                    Err(cyclic) => {
                        for position in cyclic {
                            let (index, r#ref, _) = &monitors[position];
                            errors.push(ResourceError {
                                index: *index,
                                kind: Some(Kind::Monitor),
                                r#ref: Some(r#ref.clone()),
                                field: "spec.depends_on_refs".into(),
                                message: "the set's monitors depend on each other in a cycle"
                                    .into(),
                            });
                        }
                        Vec::new()
                    }
                };
                if !errors.is_empty() {
                    errors.sort_by_key(|e| e.index);
                    return Err(Failure::Invalid(errors));
                }
                let deletes: Vec<PlanEntry> = matching
                    .absent
                    .iter()
                    .map(|((kind, r#ref), id)| PlanEntry {
                        kind: *kind,
                        r#ref: r#ref.clone(),
                        action: Action::Delete,
                        id: Some(*id),
                        changes: None,
                        pruned: Some(prune),
                    })
                    .collect();
                // A dry run goes on to write everything, checks the end
                // state as the apply does, and is rolled back: it is refused
                // exactly as the apply would be (the quotas, a ref taken
                // meanwhile), so a plan can say so. Its answer is the plan
                // as made before any write (creates without ids).
                let planned = dry_run.then(|| entries.clone());

                // Write, planning each resource again with the ids known by
                // then (a created contact's, a created monitor's).
                let position_of: HashMap<&Key, usize> =
                    keys.iter().enumerate().map(|(i, k)| (k, i)).collect();
                let mut written_ids: Vec<Option<i64>> = vec![None; inputs.len()];
                let fail = |position: usize, e: ApiError| -> Failure {
                    let (index, _) = &inputs[position];
                    match resource_errors(*index, &keys[position], &e) {
                        Some(found) => Failure::Invalid(found),
                        None => Failure::Api(e),
                    }
                };
                for (position, (_, input)) in inputs.iter().enumerate() {
                    if input.kind != Kind::AlertContact {
                        continue;
                    }
                    let desired =
                        plan_resource(c, user, input, &table, &managed, state, &writes, false)
                            .await
                            .map_err(|e| fail(position, e))?;
                    entries[position] = entry_of(input, &desired, None);
                    let Desired::Contact(planned) = desired else {
                        continue;
                    };
                    let outcome = execute_contact(c, user, &input.r#ref, planned, &quotas, true)
                        .await
                        .map_err(|e| fail(position, e))?;
                    let row = match outcome {
                        ContactOutcome::Created(row) => {
                            table.created(keys[position].clone(), row.id);
                            row
                        }
                        ContactOutcome::Replaced(row, _) | ContactOutcome::Unchanged(row) => row,
                    };
                    written_ids[position] = Some(row.id);
                }
                write_others(
                    c,
                    user,
                    Kind::EscalationPolicy,
                    &inputs,
                    &keys,
                    &mut table,
                    &managed,
                    state,
                    &writes,
                    &mut entries,
                    &mut written_ids,
                )
                .await?;
                // Monitors leaving their policy leave it before they are
                // written (one given contacts must not alert through one).
                let leaving: Vec<(i64, PolicyLink)> = planned_links
                    .iter()
                    .zip(&entries)
                    .filter_map(|(link, entry)| Some((entry.id?, (*link)?)))
                    .collect();
                clear_links(c, &leaving).await?;
                let mut links: Vec<Option<PolicyLink>> = vec![None; inputs.len()];
                // Plain creates first, in a few statements (they name no
                // other monitor, so nothing need be written before them).
                let mut plain = Vec::new();
                let mut plain_positions = Vec::new();
                let mut rest = Vec::new();
                for &graph_position in &order {
                    let position =
                        position_of[&(Kind::Monitor, monitors[graph_position].1.clone())];
                    let input = &inputs[position].1;
                    let desired =
                        plan_resource(c, user, input, &table, &managed, state, &writes, false)
                            .await
                            .map_err(|e| fail(position, e))?;
                    entries[position] = entry_of(input, &desired, None);
                    let Desired::Monitor(plan, link) = desired else {
                        continue;
                    };
                    links[position] = Some(link);
                    if plan.is_plain_create() {
                        plain.push((input.r#ref.clone(), plan));
                        plain_positions.push(position);
                    } else {
                        rest.push(position);
                    }
                }
                let first_plain = plain_positions.first().copied();
                let ids = insert_plain(c, user, plain)
                    .await
                    .map_err(|e| match first_plain {
                        Some(p) => fail(p, e),
                        None => Failure::Api(e),
                    })?;
                let mut written_monitors = ids.clone();
                for (&position, id) in plain_positions.iter().zip(ids) {
                    table.created(keys[position].clone(), id);
                    written_ids[position] = Some(id);
                }
                // The others in dependency order, planned again now that
                // the monitors they name have ids.
                for position in rest {
                    let input = &inputs[position].1;
                    let desired =
                        plan_resource(c, user, input, &table, &managed, state, &writes, false)
                            .await
                            .map_err(|e| fail(position, e))?;
                    entries[position] = entry_of(input, &desired, None);
                    let Desired::Monitor(plan, _) = desired else {
                        continue;
                    };
                    let action = plan.action();
                    let id = execute_monitor(c, user, plan, &writes)
                        .await
                        .map_err(|e| fail(position, e))?;
                    if action == Action::Create {
                        table.created(keys[position].clone(), id);
                    }
                    if action != Action::Unchanged {
                        written_monitors.push(id);
                    }
                    written_ids[position] = Some(id);
                }
                for (position, link) in links.iter().enumerate() {
                    if let (Some(link), Some(id)) = (link, written_ids[position]) {
                        set_link(c, user, id, *link)
                            .await
                            .map_err(|e| fail(position, e))?;
                    }
                }
                for kind in [Kind::MaintenanceWindow, Kind::StatusPage] {
                    write_others(
                        c,
                        user,
                        kind,
                        &inputs,
                        &keys,
                        &mut table,
                        &managed,
                        state,
                        &writes,
                        &mut entries,
                        &mut written_ids,
                    )
                    .await?;
                }
                for (entry, id) in entries.iter_mut().zip(&written_ids) {
                    entry.id = entry.id.or(*id);
                }

                let mut deleted_monitors = Vec::new();
                if prune {
                    for ((kind, r#ref), id) in &matching.absent {
                        match kind {
                            Kind::Monitor => {
                                delete_monitor(c, user, r#ref, &managed.monitors).await?;
                                deleted_monitors.push(*id);
                            }
                            Kind::AlertContact => {
                                delete_contact(c, user, &managed.contacts[r#ref]).await?;
                            }
                            other => managed.others.prune(c, user, *other, r#ref).await?,
                        }
                    }
                }
                check_end_state(c, &quotas, user.org_id, before.check_load_millis).await?;
                if let Some(mut planned) = planned {
                    planned.extend(deletes);
                    return Err(Failure::DryRun(planned));
                }
                entries.extend(deletes);
                Ok((entries, written_monitors, deleted_monitors))
            }
            .scope_boxed()
        })
        .await;
    drop(conn);
    let (plan, written, deleted) = match outcome {
        Ok(done) => done,
        Err(Failure::DryRun(plan)) => (plan, Vec::new(), Vec::new()),
        Err(Failure::Invalid(errors)) => return Ok(Err(errors)),
        Err(Failure::Api(e)) => return Err(e),
    };
    if !dry_run {
        announce_all(state, &written, &deleted).await;
    }
    Ok(Ok(ApplyResponse {
        dry_run,
        applied: !dry_run,
        summary: Summary::of(&plan),
        plan,
    }))
}
