//! The transaction of an apply: lock the organisation, load its managed
//! resources ([`ManagedSet`]), plan every resource (collecting every
//! problem), then, unless a dry run, write them kind after kind
//! ([`Walk`]), then the prunes (the other way round); last the quotas of
//! the end state. A dry run does all of it and is rolled back.

use super::end_state::check_end_state;
use super::managed::{entry_of, Desired, ManagedSet};
use super::monitor_policy::PolicyLink;
use super::refusals::{envelopes, resource_errors, Failure};
use super::walk::{monitors_of, Walk};
use crate::apply::plan::{self, Key, RefTable};
use crate::apply::request::{
    Action, ApplyRequest, ApplyResponse, Kind, PlanEntry, ResourceError, Summary,
};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::routes::monitors::announce_all;
use crate::state::AppState;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;

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
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let outcome = conn
        .transaction::<_, Failure, _>(|c| {
            async move {
                // The organisation's row first: concurrent applies and
                // creates of one organisation go one after the other.
                let before = uptime_db::quotas::lock_quotas(c, user.org_id, None).await?;
                let managed = ManagedSet::load(c, user).await?;
                let stored = managed.stored();
                let keys: Vec<Key> = inputs
                    .iter()
                    .map(|(_, r)| (r.kind, r.r#ref.clone()))
                    .collect();
                let matching = plan::match_resources(&keys, &stored);
                let deleted: &[(Key, i64)] = if prune { &matching.absent } else { &[] };
                let table = RefTable::new(&stored, deleted, &keys);

                // Plan (and validate) every resource; collect every problem.
                let mut errors = envelope_errors;
                let mut entries = Vec::with_capacity(inputs.len());
                let mut planned_links: Vec<Option<PolicyLink>> = vec![None; inputs.len()];
                for (position, ((index, input), key)) in inputs.iter().zip(&keys).enumerate() {
                    match managed.plan(c, state, user, input, &table, true).await {
                        Ok(desired) => {
                            if let Desired::Monitor(_, link) = &desired {
                                planned_links[position] = Some(*link);
                            }
                            entries.push(entry_of(input, &desired));
                        }
                        Err(e) => match resource_errors(*index, key, &e) {
                            Some(found) => errors.extend(found),
                            None => return Err(Failure::Api(e)),
                        },
                    }
                }
                let monitors = monitors_of(&inputs);
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

                let mut walk = Walk {
                    state,
                    user,
                    managed: &managed,
                    inputs: &inputs,
                    keys: &keys,
                    table,
                    entries,
                    written_ids: vec![None; inputs.len()],
                    written_monitors: Vec::new(),
                };
                walk.write_all(c, &planned_links, &order).await?;
                let Walk {
                    mut entries,
                    written_monitors,
                    ..
                } = walk;

                let mut deleted_monitors = Vec::new();
                if prune {
                    for ((kind, r#ref), id) in &matching.absent {
                        managed.kind(*kind)?.prune(c, state, user, r#ref).await?;
                        if *kind == Kind::Monitor {
                            deleted_monitors.push(*id);
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
