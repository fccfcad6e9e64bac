//! Recording batches of results and settling each message: ack after the
//! batch is committed and its events are published, nak with a delay when
//! the database is briefly unavailable, dead-letter what can never be
//! recorded. Pulling, the batch span (linked to every result's trace) and
//! progress while a batch is recorded are the consumer scaffold's
//! (`uptime_consumer`).

use crate::outbox;
use crate::rounds::RoundRules;
use crate::store::{self, BatchOutcome};
use async_nats::jetstream;
use std::time::{Duration, Instant};
use uptime_consumer::{DeadReason, Delivery};
use uptime_contracts::{check_result, CheckResult};
use uptime_db::{DbError, Pool};

/// Records batches of results and settles their messages.
#[derive(Clone)]
pub struct BatchHandler {
    pub pool: Pool,
    pub js: jetstream::Context,
    pub retry_delay: Duration,
    /// How results of monitors checked from several regions form rounds.
    pub rounds: RoundRules,
}

/// How an attempt to record some results ended.
enum Attempt {
    /// Committed and acked.
    Recorded,
    /// Naked for redelivery after a transient error.
    Retrying,
    /// A non-transient error: these results cannot be recorded together.
    Failed(DbError),
}

impl BatchHandler {
    /// Records one batch and settles every message in it.
    pub async fn handle(&self, messages: Vec<Delivery>) {
        if messages.is_empty() {
            return;
        }
        let started = Instant::now();
        let size = messages.len();
        self.handle_inner(messages).await;
        metrics::histogram!("recorder_batch_size").record(size as f64);
        metrics::histogram!("recorder_batch_duration_seconds")
            .record(started.elapsed().as_secs_f64());
    }

    async fn handle_inner(&self, messages: Vec<Delivery>) {
        let mut batch = Vec::with_capacity(messages.len());
        for message in messages {
            match check_result::decode(message.subject(), message.payload()) {
                Ok(result) => batch.push((message, result)),
                Err(e) => {
                    // Redelivering cannot make it decodable.
                    metrics::counter!("results_undecodable_total").increment(1);
                    message
                        .dead_letter(DeadReason::Undecodable, &e.to_string())
                        .await;
                }
            }
        }
        if batch.is_empty() {
            return;
        }
        let Attempt::Failed(e) = self.attempt(&batch).await else {
            return;
        };
        if batch.len() == 1 {
            return self.give_up(&batch[0], &e).await;
        }
        // One bad result must not hold back the others: record them one by
        // one to find it.
        tracing::warn!(error = %e, size = batch.len(), "batch failed; recording its results one by one");
        for item in &batch {
            if let Attempt::Failed(e) = self.attempt(std::slice::from_ref(item)).await {
                self.give_up(item, &e).await;
            }
        }
    }

    async fn attempt(&self, batch: &[(Delivery, CheckResult)]) -> Attempt {
        let results: Vec<CheckResult> = batch.iter().map(|(_, r)| r.clone()).collect();
        match store::record_batch_with(&self.pool, &results, &self.rounds, chrono::Utc::now()).await
        {
            Ok(outcome) => {
                self.after_commit(outcome).await;
                for (message, _) in batch {
                    message.ack().await;
                }
                Attempt::Recorded
            }
            Err(e) if is_retryable(&e) => {
                tracing::warn!(error = %e, size = batch.len(), "recording failed; will retry");
                for (message, _) in batch {
                    message.nak(Some(self.retry_delay)).await;
                }
                Attempt::Retrying
            }
            Err(e) => Attempt::Failed(e),
        }
    }

    async fn give_up(&self, (message, result): &(Delivery, CheckResult), e: &DbError) {
        tracing::error!(check_id = %result.check_id, monitor_id = result.monitor_id, error = %e,
            "check result can never be recorded; dead-lettering it");
        metrics::counter!("results_rejected_total").increment(1);
        message
            .dead_letter(DeadReason::Rejected, &e.to_string())
            .await;
    }

    /// Metrics, logs and publishing the committed events (before the ack, so
    /// a crash here leaves the events to the relay and the results redelivered).
    async fn after_commit(&self, outcome: BatchOutcome) {
        for (check_id, monitor_id) in &outcome.dropped {
            tracing::info!(%check_id, monitor_id, "dropping the result of a deleted monitor");
        }
        for (check_id, monitor_id) in &outcome.outdated {
            tracing::info!(%check_id, monitor_id,
                "stored a result made for an older definition of its monitor; it does not move state");
        }
        metrics::counter!("results_recorded_total").increment(outcome.inserted as u64);
        metrics::counter!("results_duplicate_total").increment(outcome.duplicates as u64);
        metrics::counter!("results_dropped_total").increment(outcome.dropped.len() as u64);
        metrics::counter!("results_outdated_total").increment(outcome.outdated.len() as u64);
        metrics::counter!("round_answers_total").increment(outcome.answers as u64);
        metrics::counter!("rounds_decided_total", "by" => "all_answered")
            .increment(outcome.rounds_decided as u64);
        for to in &outcome.transitions {
            metrics::counter!("state_changes_total", "to" => to.as_str()).increment(1);
        }
        tracing::debug!(
            inserted = outcome.inserted,
            duplicates = outcome.duplicates,
            events = outcome.events.len(),
            "batch recorded"
        );
        outbox::publish_and_mark(&self.pool, &self.js, &outcome.events).await;
    }
}

/// Whether trying again later may succeed.
fn is_retryable(e: &DbError) -> bool {
    e.is_transient() || is_deadlock(e)
}

/// The primary message PostgreSQL sends with SQLSTATE 40P01
/// (`deadlock_detected`) when its `lc_messages` is English or `C`.
const DEADLOCK_MESSAGE: &str = "deadlock detected";

/// Whether PostgreSQL rolled the batch back as the victim of a deadlock
/// (SQLSTATE 40P01). Nothing was written, and the same batch succeeds once
/// the other transaction is done, so it is retried rather than recorded
/// result by result (which a second deadlock would turn into a dead letter).
/// Deadlocks cannot happen between recorders (monitors are locked in id
/// order) but may with another writer of the same rows.
///
/// The SQLSTATE itself is out of reach: diesel 2.3's `DatabaseErrorKind` has
/// no deadlock variant, diesel-async 0.7 maps every code but six to
/// `Unknown` and keeps the server's error (with its code) in a private
/// wrapper, and `DatabaseErrorInformation` has no accessor for the code. So
/// this compares the structured primary message, exactly, rather than
/// searching the whole error text. A server whose `lc_messages` translates
/// it is not recognised here; its deadlocks are handled as any other failed
/// batch (result by result).
fn is_deadlock(e: &DbError) -> bool {
    use diesel::result::Error;
    matches!(e, DbError::Query(Error::DatabaseError(_, info)) if info.message() == DEADLOCK_MESSAGE)
}
