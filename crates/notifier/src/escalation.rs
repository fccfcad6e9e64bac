//! Escalation: an open incident of a monitor with an escalation policy that
//! nobody acknowledges moves to the policy's next step when the current
//! step's delay has passed.
//!
//! - [`planner`]: what happens next to one escalation, pure (the clock is a
//!   parameter).
//! - [`Sweep`]: every `escalation.sweep_interval_ms`, one transaction per
//!   batch of due escalations: lock them (`FOR UPDATE SKIP LOCKED`: several
//!   notifiers share the work), read their policies, plan, and write the
//!   notified steps' deliveries and the new positions
//!   (`uptime_db::escalations`). A crash before the commit changes nothing;
//!   a step's deliveries have an event id derived from (incident, run,
//!   step), so a step reaches each contact once.
//!
//! The intake starts an escalation (step 0, with the alert that opens the
//! incident); the delivery worker sends what the sweep writes.

pub mod planner;

use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use planner::{IncidentNow, Plan, PolicyShape, Progress};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use uptime_db::escalations::{self, DueEscalation, EscalationUpdate, PolicySteps, StepNotice};
use uptime_db::{DbError, Pool};

/// Counter: escalation steps notified.
pub const STEPS_METRIC: &str = "escalation_steps_total";
/// Counter: escalations stopped, by `reason`.
pub const STOPPED_METRIC: &str = "escalations_stopped_total";

/// What one sweep transaction did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SweepOutcome {
    /// Due escalations looked at.
    pub due: usize,
    /// Steps notified.
    pub steps: usize,
    /// Deliveries written.
    pub deliveries: u64,
}

/// The time-driven part of escalation.
pub struct Sweep {
    pub pool: Pool,
    pub interval: Duration,
    pub batch: i64,
    /// Woken when deliveries were written.
    pub deliveries_added: Arc<Notify>,
}

impl Sweep {
    /// Sweeps until `shutdown`; a full batch is followed by another at once.
    /// Ticks `progress` every sweep.
    pub async fn run(&self, shutdown: CancellationToken, progress: uptime_ops::Progress) {
        while !shutdown.is_cancelled() {
            progress.tick();
            let full = match self.once(Utc::now()).await {
                Ok(outcome) => outcome.due as i64 >= self.batch,
                Err(e) => {
                    tracing::warn!(error = %e, "escalation sweep failed; retrying after its interval");
                    false
                }
            };
            if full {
                continue;
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(self.interval) => {}
            }
        }
    }

    /// One transaction: the escalations due at `now` (up to a batch) planned
    /// and written.
    pub async fn once(&self, now: DateTime<Utc>) -> Result<SweepOutcome, DbError> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let batch = self.batch;
        let outcome = conn
            .transaction::<_, DbError, _>(|c| {
                async move {
                    let due = escalations::lock_due(c, now, batch).await?;
                    if due.is_empty() {
                        return Ok(SweepOutcome::default());
                    }
                    let mut policy_ids: Vec<i64> =
                        due.iter().filter_map(|d| d.stage.policy_id).collect();
                    policy_ids.sort_unstable();
                    policy_ids.dedup();
                    let shapes = escalations::policy_steps(c, &policy_ids).await?;
                    let updates: Vec<EscalationUpdate> =
                        due.iter().map(|d| update_for(d, &shapes, now)).collect();
                    let deliveries = escalations::apply(c, &updates).await?;
                    Ok(SweepOutcome {
                        due: due.len(),
                        steps: updates.iter().filter(|u| u.notify.is_some()).count(),
                        deliveries,
                    })
                }
                .scope_boxed()
            })
            .await?;
        if outcome.steps > 0 {
            metrics::counter!(STEPS_METRIC).increment(outcome.steps as u64);
            tracing::info!(
                steps = outcome.steps,
                deliveries = outcome.deliveries,
                "escalation steps notified"
            );
        }
        if outcome.deliveries > 0 {
            self.deliveries_added.notify_one();
        }
        Ok(outcome)
    }
}

/// The planner's decision for `due`, as the row update it makes.
fn update_for(
    due: &DueEscalation,
    shapes: &HashMap<i64, PolicySteps>,
    now: DateTime<Utc>,
) -> EscalationUpdate {
    let shape = due
        .stage
        .policy_id
        .and_then(|id| shapes.get(&id))
        .map(|s| PolicyShape {
            delays: s
                .delays_secs
                .iter()
                .map(|d| chrono::Duration::seconds(i64::from(*d)))
                .collect(),
            repeat_count: u16::try_from(s.repeat_count).unwrap_or(0),
        });
    let progress = Progress {
        position: u16::try_from(due.stage.position).unwrap_or(0),
        round: u16::try_from(due.stage.round).unwrap_or(0),
        notified_at: due.stage.notified_at,
    };
    let incident = if due.resolved {
        IncidentNow::Resolved
    } else if due.acknowledged {
        IncidentNow::Acknowledged
    } else {
        IncidentNow::Open
    };
    let unchanged = EscalationUpdate {
        incident_id: due.incident_id,
        notify: None,
        position: due.stage.position,
        round: due.stage.round,
        notified_at: due.stage.notified_at,
        next_at: None,
        stopped: None,
    };
    match planner::plan(shape.as_ref(), progress, incident, now) {
        Plan::Wait { until } => EscalationUpdate {
            next_at: Some(until),
            ..unchanged
        },
        Plan::Stop(stop) => {
            metrics::counter!(STOPPED_METRIC, "reason" => stop.as_str()).increment(1);
            EscalationUpdate {
                stopped: Some(stop.as_str()),
                ..unchanged
            }
        }
        Plan::Notify {
            position,
            round,
            next_at,
        } => EscalationUpdate {
            notify: Some(StepNotice {
                event_id: planner::step_event_id(due.incident_id, position, round),
            }),
            position: position as i16,
            round: round as i16,
            notified_at: now,
            next_at: Some(next_at),
            ..unchanged
        },
    }
}
