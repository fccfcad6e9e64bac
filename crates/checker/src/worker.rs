//! The check pipeline: pull due checks from the shared durable consumer, run
//! up to `concurrency` of them at once, publish each result and only then
//! ack the due check.
//!
//! Delivery guarantees, end to end:
//! - A due check is acked only after JetStream has acknowledged its result,
//!   so a crash at any moment leaves it unacked and JetStream redelivers it
//!   (to any replica) after `ack_wait`.
//! - A redelivered check runs again, and its result is published with the
//!   same `Nats-Msg-Id` (the `check_id`), so the results stream keeps one.
//! - Long checks send `Progress` every third of `ack_wait` so that a slow
//!   but healthy check is not handed to a second replica.
//!
//! Flow control: the loop pulls only as many messages as it has free slots
//! (semaphore permits), so nothing waits in a client-side buffer while its
//! ack deadline runs out.

use crate::due::{self, Publishable, Received};
use crate::http_check::{CheckReport, HttpChecker};
use crate::metrics as m;
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::{self, AckKind};
use chrono::Utc;
use futures::StreamExt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uptime_contracts::{bus, CheckResultV1, MonitorKind};

/// How long one pull request stays open on the server when there is no work.
const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// Most messages requested in one pull.
const MAX_PULL_BATCH: usize = 256;
/// Redelivery delay after a failed result publish (the broker is struggling).
const PUBLISH_RETRY_DELAY: Duration = Duration::from_secs(1);

/// Everything a check task needs; shared by all of them.
pub struct Worker {
    pub http: HttpChecker,
    pub js: jetstream::Context,
    pub instance_id: String,
    pub ack_wait: Duration,
    pub concurrency: usize,
    pub shutdown_grace: Duration,
}

impl Worker {
    /// Pulls and runs checks until `shutdown`, then lets the checks in flight
    /// finish (for up to `shutdown_grace`) and hands the rest back to JetStream.
    pub async fn run(self: Arc<Self>, consumer: PullConsumer, shutdown: CancellationToken) {
        let slots = Arc::new(Semaphore::new(self.concurrency.max(1)));
        // Owning the tasks here means that dropping this future (a crash in
        // tests) drops every check with it, acked or not.
        let mut in_flight = JoinSet::new();
        let abandon = CancellationToken::new();

        'pull: loop {
            reap(&mut in_flight);
            let first = tokio::select! {
                _ = shutdown.cancelled() => break 'pull,
                permit = slots.clone().acquire_owned() => permit.expect("semaphore never closed"),
            };
            let mut permits = vec![first];
            while permits.len() < MAX_PULL_BATCH {
                match slots.clone().try_acquire_owned() {
                    Ok(permit) => permits.push(permit),
                    Err(_) => break,
                }
            }
            let batch = consumer
                .batch()
                .max_messages(permits.len())
                .expires(PULL_EXPIRES)
                .messages()
                .await;
            let mut batch = match batch {
                Ok(batch) => batch,
                Err(e) => {
                    tracing::warn!(error = %e, "pulling due checks failed; retrying");
                    tokio::select! {
                        _ = shutdown.cancelled() => break 'pull,
                        _ = tokio::time::sleep(Duration::from_secs(1)) => continue 'pull,
                    }
                }
            };
            loop {
                let next = tokio::select! {
                    _ = shutdown.cancelled() => break 'pull,
                    next = batch.next() => next,
                };
                let msg = match next {
                    None => break,
                    Some(Err(e)) => {
                        tracing::warn!(error = %e, "receiving due checks failed");
                        break;
                    }
                    Some(Ok(msg)) => msg,
                };
                // The batch asked for exactly as many messages as there are permits.
                let Some(permit) = permits.pop() else {
                    tracing::warn!("more messages than requested; handing one back");
                    let _ = msg.ack_with(AckKind::Nak(None)).await;
                    continue;
                };
                in_flight.spawn(self.clone().process(msg, permit, abandon.clone()));
                reap(&mut in_flight);
            }
        }

        self.drain(in_flight, abandon).await;
    }

    /// Waits for the checks in flight, then hands back those still running.
    async fn drain(&self, mut in_flight: JoinSet<()>, abandon: CancellationToken) {
        tracing::info!(
            in_flight = in_flight.len(),
            "stopped pulling; finishing checks in flight"
        );
        let finished = tokio::time::timeout(self.shutdown_grace, async {
            while in_flight.join_next().await.is_some() {}
        })
        .await;
        if finished.is_err() {
            tracing::warn!(
                remaining = in_flight.len(),
                "checks still running after the shutdown grace; handing them back to JetStream"
            );
            // Each abandoned task naks its message, so another replica gets it now
            // instead of after ack_wait; give the naks a moment to go out.
            abandon.cancel();
            let naked = tokio::time::timeout(Duration::from_secs(2), async {
                while in_flight.join_next().await.is_some() {}
            })
            .await;
            if naked.is_err() {
                in_flight.abort_all();
            }
        }
    }

    /// One due check, from message to ack.
    async fn process(
        self: Arc<Self>,
        msg: jetstream::Message,
        _slot: OwnedSemaphorePermit,
        abandon: CancellationToken,
    ) {
        let received = match due::decode(&msg.subject, &msg.payload) {
            Ok(received) => received,
            Err(e) => {
                // No redelivery can fix a message that does not decode.
                tracing::error!(error = %e, subject = %msg.subject, "undecodable due check; terminating it");
                ack(&msg, AckKind::Term).await;
                return;
            }
        };
        let due = &received.due;
        if due.spec.kind == MonitorKind::Heartbeat {
            tracing::error!(check_id = %due.check_id, "heartbeat monitors have no check to run; terminating it");
            ack(&msg, AckKind::Term).await;
            return;
        }
        if received.is_stale(Utc::now()) {
            // The scheduler has published this monitor's next slot by now:
            // working through a backlog of old slots would only delay it.
            tracing::info!(check_id = %due.check_id, monitor_id = due.monitor_id, due_at = %due.due_at,
                "due check more than one interval late; skipping it");
            m::record_stale_skip();
            ack(&msg, AckKind::Ack).await;
            return;
        }
        let delivery = msg.info().map(|i| i.delivered).unwrap_or(1);
        let span = tracing::info_span!(
            "check",
            check_id = %due.check_id,
            monitor_id = due.monitor_id,
            kind = due.spec.kind.as_str(),
            delivery,
            outcome = tracing::field::Empty,
        );
        uptime_telemetry::nats::set_parent_from(&span, msg.headers.as_ref());
        self.check_and_publish(msg, received, abandon)
            .instrument(span)
            .await;
    }

    async fn check_and_publish(
        &self,
        msg: jetstream::Message,
        received: Received,
        abandon: CancellationToken,
    ) {
        let due = &received.due;
        let _in_flight = m::InFlight::enter();
        let checked_at = Utc::now();
        m::record_lateness(checked_at - due.due_at);
        let started = Instant::now();

        let work = async {
            let report = self.http.check(&due.spec).await;
            m::record_check(report.outcome, started.elapsed());
            tracing::Span::current().record("outcome", m::outcome_label(report.outcome));
            let result = received.publishable(self.result_of(due, checked_at, report));
            // Headers inside the check span, so the result continues its trace.
            let headers = uptime_telemetry::nats::headers_with_msg_id(&due.check_id.to_string());
            let published = match &result {
                Publishable::V1(r) => bus::publish(&self.js, headers, r).await,
                Publishable::V2(r) => bus::publish(&self.js, headers, r).await,
            };
            match published {
                Ok(ack) => ack.await,
                Err(e) => Err(e),
            }
        };
        let published = tokio::select! {
            published = with_progress(&msg, self.ack_wait / 3, work) => published,
            _ = abandon.cancelled() => {
                ack(&msg, AckKind::Nak(None)).await;
                return;
            }
        };
        match published {
            Ok(ack_info) => {
                if ack_info.duplicate {
                    tracing::debug!("result was already published by an earlier delivery");
                }
                ack(&msg, AckKind::Ack).await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "publishing the result failed; the check will be redelivered");
                ack(&msg, AckKind::Nak(Some(PUBLISH_RETRY_DELAY))).await;
            }
        }
    }

    fn result_of(
        &self,
        due: &uptime_contracts::CheckDueV1,
        checked_at: chrono::DateTime<Utc>,
        report: CheckReport,
    ) -> CheckResultV1 {
        CheckResultV1 {
            check_id: due.check_id,
            monitor_id: due.monitor_id,
            trigger: due.trigger,
            due_at: Some(due.due_at),
            checked_at,
            outcome: report.outcome,
            latency_ms: report.latency_ms,
            http_status: report.http_status,
            error: report.error,
            ssl_expires_at: report.ssl_expires_at,
            reporter: self.instance_id.clone(),
        }
    }
}

/// Runs `work`, telling JetStream every `every` that the message is still being handled.
async fn with_progress<F: Future>(msg: &jetstream::Message, every: Duration, work: F) -> F::Output {
    let every = every.max(Duration::from_millis(100));
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tokio::pin!(work);
    loop {
        tokio::select! {
            output = &mut work => return output,
            _ = ticks.tick() => ack(msg, AckKind::Progress).await,
        }
    }
}

/// Sends an ack of any kind. A lost ack is not lost work: JetStream
/// redelivers, and the result publish is deduplicated.
async fn ack(msg: &jetstream::Message, kind: AckKind) {
    let label = format!("{kind:?}");
    if let Err(e) = msg.ack_with(kind).await {
        tracing::warn!(error = %e, kind = %label, "acknowledging a due check failed");
    }
}

/// Collects finished check tasks, logging any that panicked.
fn reap(in_flight: &mut JoinSet<()>) {
    while let Some(finished) = in_flight.try_join_next() {
        if let Err(e) = finished {
            if e.is_panic() {
                tracing::error!(error = %e, "a check task panicked; its check will be redelivered");
            }
        }
    }
}
