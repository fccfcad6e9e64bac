//! One transaction per batch: lock the monitors, store the new results, move
//! state, add to the rollup and write events to the outbox. Either all of it
//! happens or none of it, so a crash at any moment loses nothing and a
//! redelivered batch changes nothing twice.

use crate::plan;
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use std::collections::{HashMap, HashSet};
use uptime_contracts::{CheckResultV1, MonitorStatus};

use uptime_db::recording::{self, NewOutboxEvent};
use uptime_db::{DbError, DbResult, Pool};
use uuid::Uuid;

/// A result as received, with the definition version it was made for (`None`
/// for a version-1 message, which predates versions: it counts as current).
#[derive(Debug, Clone, PartialEq)]
pub struct Incoming {
    pub result: CheckResultV1,
    pub definition_version: Option<i64>,
}

impl From<CheckResultV1> for Incoming {
    fn from(result: CheckResultV1) -> Self {
        Self {
            result,
            definition_version: None,
        }
    }
}

/// What a committed batch did.
#[derive(Debug, Default)]
pub struct BatchOutcome {
    /// Results stored for the first time.
    pub inserted: usize,
    /// Results already stored before (redeliveries, republished results).
    pub duplicates: usize,
    /// Results of monitors that no longer exist, dropped.
    pub dropped: Vec<(Uuid, i64)>,
    /// Results stored that were made for an older definition of their
    /// monitor, so they did not move its state.
    pub outdated: Vec<(Uuid, i64)>,
    /// Events committed to the outbox, to publish now.
    pub events: Vec<NewOutboxEvent>,
    /// The status each transition went to.
    pub transitions: Vec<MonitorStatus>,
}

/// Records `results` in one transaction. `now` decides certificate windows.
pub async fn record_batch(
    pool: &Pool,
    incoming: &[Incoming],
    now: DateTime<Utc>,
) -> DbResult<BatchOutcome> {
    // The same result twice in one batch (a republish) counts once.
    let mut seen = HashSet::new();
    let results: Vec<&Incoming> = incoming
        .iter()
        .filter(|r| seen.insert(r.result.check_id))
        .collect();
    let mut monitor_ids: Vec<i64> = results.iter().map(|r| r.result.monitor_id).collect();
    monitor_ids.sort_unstable();
    monitor_ids.dedup();

    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let monitors = recording::lock_monitors(conn, &monitor_ids).await?;
            let by_id: HashMap<i64, _> = monitors.iter().map(|m| (m.id, m)).collect();

            let mut outcome = BatchOutcome::default();
            let mut rows = Vec::with_capacity(results.len());
            let mut known = Vec::with_capacity(results.len());
            for r in &results {
                match by_id.get(&r.result.monitor_id) {
                    Some(monitor) => {
                        rows.push(plan::result_row(&r.result, r.definition_version, monitor));
                        known.push(*r);
                    }
                    // Deleted after the check was scheduled: nothing to record it on.
                    None => outcome
                        .dropped
                        .push((r.result.check_id, r.result.monitor_id)),
                }
            }

            let inserted: HashSet<Uuid> = recording::insert_results(conn, &rows)
                .await?
                .into_iter()
                .collect();
            outcome.inserted = inserted.len();
            outcome.duplicates = known.len() - inserted.len();
            // Only results stored just now move state: a redelivery must not
            // count a failure twice or raise its event again. And only those
            // made for the monitor's current definition: a check that was in
            // flight when the monitor was edited says nothing about what it
            // watches now.
            let mut fresh: Vec<&CheckResultV1> = Vec::with_capacity(known.len());
            for r in known {
                if !inserted.contains(&r.result.check_id) {
                    continue;
                }
                let monitor = by_id[&r.result.monitor_id];
                if plan::is_current(r.definition_version, monitor) {
                    fresh.push(&r.result);
                } else {
                    outcome
                        .outdated
                        .push((r.result.check_id, r.result.monitor_id));
                }
            }
            if fresh.is_empty() {
                return Ok(outcome);
            }

            let effects = plan::effects(&monitors, &fresh, now);
            recording::update_monitor_states(conn, &effects.updates).await?;
            recording::add_daily_uptime(conn, &effects.increments).await?;
            recording::insert_outbox(conn, &effects.events).await?;
            outcome.events = effects.events;
            outcome.transitions = effects.transitions;
            Ok(outcome)
        }
        .scope_boxed()
    })
    .await
}
