//! Pulling results in batches and settling each message: ack after the batch
//! is committed and its events are published, nak with a delay when the
//! database is briefly unavailable, term what can never be recorded.

use crate::outbox;
use crate::store::{self, BatchOutcome, Incoming};
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::{self, AckKind, Message};
use futures::StreamExt;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uptime_contracts::{subjects, CheckResultV1, CheckResultV2, Message as _};
use uptime_db::{DbError, Pool};

/// How messages are gathered into batches.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    pub max_messages: usize,
    /// After the first message of a batch, how long to wait for more.
    pub max_wait: Duration,
}

/// Records batches of results and settles their messages.
#[derive(Clone)]
pub struct BatchHandler {
    pub pool: Pool,
    pub js: jetstream::Context,
    pub retry_delay: Duration,
    /// How often a batch still being recorded tells JetStream it is in
    /// progress (a third of the ack wait), so a slow batch is not handed to
    /// a second recorder while a dead recorder's batch is, within one ack wait.
    pub progress_every: Duration,
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
    pub async fn handle(&self, messages: Vec<Message>) {
        let Some(first) = messages.first() else {
            return;
        };
        let span = tracing::info_span!("record_batch", size = messages.len());
        uptime_telemetry::nats::set_parent_from(&span, first.headers.as_ref());
        let started = Instant::now();
        let size = messages.len();
        let in_progress = keep_in_progress(messages.clone(), self.progress_every);
        tokio::select! {
            _ = self.handle_inner(messages).instrument(span) => {}
            never = in_progress => match never {},
        }
        metrics::histogram!("recorder_batch_size").record(size as f64);
        metrics::histogram!("recorder_batch_duration_seconds")
            .record(started.elapsed().as_secs_f64());
    }

    async fn handle_inner(&self, messages: Vec<Message>) {
        let mut batch = Vec::with_capacity(messages.len());
        for message in messages {
            match decode(&message.subject, &message.payload) {
                Ok(result) => batch.push((message, result)),
                Err(e) => {
                    // Redelivering cannot make it decodable.
                    tracing::error!(subject = %message.subject, error = %e, "undecodable check result; terminating it");
                    metrics::counter!("results_undecodable_total").increment(1);
                    settle(&message, AckKind::Term).await;
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

    async fn attempt(&self, batch: &[(Message, Incoming)]) -> Attempt {
        let results: Vec<Incoming> = batch.iter().map(|(_, r)| r.clone()).collect();
        match store::record_batch(&self.pool, &results, chrono::Utc::now()).await {
            Ok(outcome) => {
                self.after_commit(outcome).await;
                for (message, _) in batch {
                    settle(message, AckKind::Ack).await;
                }
                Attempt::Recorded
            }
            Err(e) if is_retryable(&e) => {
                tracing::warn!(error = %e, size = batch.len(), "recording failed; will retry");
                for (message, _) in batch {
                    settle(message, AckKind::Nak(Some(self.retry_delay))).await;
                }
                Attempt::Retrying
            }
            Err(e) => Attempt::Failed(e),
        }
    }

    async fn give_up(&self, (message, incoming): &(Message, Incoming), e: &DbError) {
        let result = &incoming.result;
        tracing::error!(check_id = %result.check_id, monitor_id = result.monitor_id, error = %e,
            "check result can never be recorded; terminating it");
        metrics::counter!("results_rejected_total").increment(1);
        settle(message, AckKind::Term).await;
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

/// Decodes a result by the version its `subject` names.
fn decode(subject: &str, payload: &[u8]) -> Result<Incoming, serde_json::Error> {
    if subject == subjects::CHECK_RESULT_V1 {
        return CheckResultV1::from_bytes(payload).map(|result| Incoming {
            result,
            definition_version: None,
        });
    }
    // Version 2, or a newer one that only adds fields.
    let (result, version) = CheckResultV2::from_bytes(payload)?.into_parts();
    Ok(Incoming {
        result,
        definition_version: Some(version),
    })
}

/// Whether trying again later may succeed.
fn is_retryable(e: &DbError) -> bool {
    // Deadlocks cannot happen between recorders (monitors are locked in id
    // order) but may with other writers; PostgreSQL reports them as 40P01.
    e.is_transient() || e.to_string().contains("deadlock detected")
}

/// Reports the batch in progress every `every`, until dropped.
async fn keep_in_progress(messages: Vec<Message>, every: Duration) -> std::convert::Infallible {
    let every = every.max(Duration::from_millis(100));
    loop {
        tokio::time::sleep(every).await;
        for message in &messages {
            // Progress on a message already settled is ignored by the server.
            let _ = message.ack_with(AckKind::Progress).await;
        }
    }
}

async fn settle(message: &Message, kind: AckKind) {
    if let Err(e) = message.ack_with(kind).await {
        // The message comes back after its ack wait; recording is idempotent.
        tracing::warn!(error = %e, "settling a message failed");
    }
}

/// Pulls batches from `consumer` and hands them to `handler` until `shutdown`.
/// A batch that has started is always finished.
pub async fn run(
    consumer: PullConsumer,
    handler: BatchHandler,
    batching: Batching,
    shutdown: CancellationToken,
) {
    let max = batching.max_messages.max(1);
    'reconnect: while !shutdown.is_cancelled() {
        let mut stream = match consumer
            .stream()
            .max_messages_per_batch(max)
            .heartbeat(Duration::from_secs(5))
            .messages()
            .await
        {
            Ok(stream) => stream,
            Err(e) => {
                tracing::warn!(error = %e, "pulling results failed; retrying");
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => continue,
                }
            }
        };
        loop {
            let first = tokio::select! {
                _ = shutdown.cancelled() => break 'reconnect,
                next = stream.next() => next,
            };
            let mut batch = Vec::with_capacity(max);
            match first {
                Some(Ok(message)) => batch.push(message),
                Some(Err(e)) => {
                    tracing::warn!(error = %e, "pulling results");
                    continue;
                }
                None => continue 'reconnect,
            }
            let deadline = tokio::time::Instant::now() + batching.max_wait;
            while batch.len() < max {
                match tokio::time::timeout_at(deadline, stream.next()).await {
                    Ok(Some(Ok(message))) => batch.push(message),
                    Ok(Some(Err(e))) => tracing::warn!(error = %e, "pulling results"),
                    Ok(None) | Err(_) => break,
                }
            }
            handler.handle(batch).await;
        }
    }
    tracing::info!("result consumer stopped");
}
