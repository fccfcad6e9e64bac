//! One transaction per batch: lock the monitors, store the new results, move
//! state, add to the rollup and write events to the outbox. Either all of it
//! happens or none of it, so a crash at any moment loses nothing and a
//! redelivered batch changes nothing twice.

use crate::plan;
use crate::rounds::{self, RoundRules};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use std::collections::{HashMap, HashSet};
use uptime_contracts::{CheckResult, MonitorStatus};
use uptime_db::recording::ResultPlace;

use uptime_db::recording::{self, NewOutboxEvent};
use uptime_db::{DbError, DbResult, Pool};
use uuid::Uuid;

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
    /// Regions' results merged into their rounds (not applied alone).
    pub answers: usize,
    /// Rounds this batch completed and decided.
    pub rounds_decided: usize,
}

/// Records `results` in one transaction with the default round rules (one
/// region). `now` decides certificate windows.
pub async fn record_batch(
    pool: &Pool,
    incoming: &[CheckResult],
    now: DateTime<Utc>,
) -> DbResult<BatchOutcome> {
    record_batch_with(pool, incoming, &RoundRules::default(), now).await
}

/// Records `results` in one transaction. A result of a monitor checked from
/// several regions is stored and merged into its round; the rounds it
/// completes are decided here, and only their verdicts move state.
pub async fn record_batch_with(
    pool: &Pool,
    incoming: &[CheckResult],
    rules: &RoundRules,
    now: DateTime<Utc>,
) -> DbResult<BatchOutcome> {
    // The same result twice in one batch (a republish) counts once.
    let mut seen = HashSet::new();
    let results: Vec<&CheckResult> = incoming
        .iter()
        .filter(|r| seen.insert(r.check_id))
        .collect();
    let mut monitor_ids: Vec<i64> = results.iter().map(|r| r.monitor_id).collect();
    monitor_ids.sort_unstable();
    monitor_ids.dedup();

    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let monitors = uptime_db::monitor_decisions::lock(conn, &monitor_ids).await?;
            let by_id: HashMap<i64, _> = monitors.iter().map(|m| (m.id, m)).collect();

            let mut outcome = BatchOutcome::default();
            let mut rows = Vec::with_capacity(results.len());
            let mut places = Vec::with_capacity(results.len());
            let mut known = Vec::with_capacity(results.len());
            for r in &results {
                match by_id.get(&r.monitor_id) {
                    Some(monitor) => {
                        rows.push(plan::result_row(r, monitor));
                        places.push(ResultPlace {
                            region: Some(r.region.clone()),
                            round_id: r.round_id,
                            in_maintenance: crate::maintenance::in_maintenance(
                                monitor,
                                r.checked_at,
                            ),
                        });
                        known.push(*r);
                    }
                    // Deleted after the check was scheduled: nothing to record it on.
                    None => outcome.dropped.push((r.check_id, r.monitor_id)),
                }
            }

            let inserted: HashSet<Uuid> = recording::insert_placed_results(conn, &rows, &places)
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
            // A region's result of a round is an answer of that round, never
            // applied alone: only the round's verdict moves state.
            let mut fresh: Vec<&CheckResult> = Vec::with_capacity(known.len());
            let mut answers = Vec::new();
            for r in known {
                if !inserted.contains(&r.check_id) {
                    continue;
                }
                let monitor = by_id[&r.monitor_id];
                if !plan::is_current(r.definition_version, monitor) {
                    outcome.outdated.push((r.check_id, r.monitor_id));
                    continue;
                }
                match rules.answer_of(r, monitor) {
                    Some(answer) => answers.push(answer),
                    None => fresh.push(r),
                }
            }
            outcome.answers = answers.len();
            // Rounds already decided are left alone by the merge and not
            // returned: a late answer is stored and moves nothing.
            let open =
                uptime_db::rounds::merge_answers(conn, &rounds::merge_by_round(answers)).await?;
            let complete: Vec<_> = open.into_iter().filter(|r| r.is_complete()).collect();
            if fresh.is_empty() && complete.is_empty() {
                return Ok(outcome);
            }
            // Every region answered, so none is offline.
            let applied =
                rounds::decide_and_apply(conn, &monitors, &fresh, &complete, &HashSet::new(), now)
                    .await?;
            outcome.events = applied.events;
            outcome.transitions = applied.transitions;
            outcome.rounds_decided = applied.decided;
            Ok(outcome)
        }
        .scope_boxed()
    })
    .await
}
