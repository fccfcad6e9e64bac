//! Message by message, up to a bound at once, each in a task of its own.

use crate::delivery::with_progress;
use crate::pull::{Failures, Next, Pull, PULL_EXPIRES};
use crate::{Consumer, Delivery};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// Most messages requested in one pull.
const MAX_PULL_BATCH: usize = 256;
/// After the shutdown grace, how long the abandoned handlers' naks may take.
const NAK_GRACE: Duration = Duration::from_secs(2);

/// How many messages are handled at once, and how long a shutdown waits for them.
#[derive(Debug, Clone, Copy)]
pub struct Concurrency {
    /// At most this many messages are pulled and not yet settled (at least 1;
    /// 1 handles messages one after the other, in stream order).
    pub max_in_flight: usize,
    /// On shutdown, handlers still running after this are stopped and their
    /// messages naked, so another replica takes them at once.
    pub shutdown_grace: Duration,
}

impl Consumer {
    /// Pulls messages and runs `handler` on each in a task of its own, at most
    /// `concurrency.max_in_flight` at once, until `shutdown`; then waits for
    /// the handlers in flight (see [`Concurrency::shutdown_grace`]).
    ///
    /// Each handler runs in [`crate::trace::message_span`] and is reported in
    /// progress every third of the ack wait while it runs; it settles its
    /// [`Delivery`] itself (one left unsettled comes back after the ack wait).
    /// Only as many messages are pulled as there are free slots, so none waits
    /// in a buffer while its ack deadline runs.
    pub async fn run_each<H, F>(
        &self,
        concurrency: Concurrency,
        handler: H,
        shutdown: CancellationToken,
    ) where
        H: Fn(Delivery) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let handler = Arc::new(handler);
        let pull = self.pull_each(concurrency, handler, shutdown.clone());
        tokio::join!(self.report_lag(shutdown.cancelled()), pull);
    }

    async fn pull_each<H, F>(
        &self,
        concurrency: Concurrency,
        handler: Arc<H>,
        shutdown: CancellationToken,
    ) where
        H: Fn(Delivery) -> F + Send + Sync + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        let name = self.name();
        let slots = Arc::new(Semaphore::new(concurrency.max_in_flight.max(1)));
        // Owning the tasks here means that dropping this future (a crash in
        // tests) drops every handler with it, settled or not.
        let mut in_flight = JoinSet::new();
        let abandon = CancellationToken::new();
        let mut failures = Failures::new(name);

        'pull: loop {
            reap(name, &mut in_flight);
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
            let Some(mut request) = Pull::open(
                &self.pull,
                &mut failures,
                permits.len(),
                PULL_EXPIRES,
                &shutdown,
            )
            .await
            else {
                break 'pull;
            };
            loop {
                let message = match request.next(&mut failures, &shutdown).await {
                    Next::Message(message) => message,
                    Next::Done => {
                        // An idle pull that expired is progress too.
                        self.progress.tick();
                        break;
                    }
                    Next::Shutdown => break 'pull,
                };
                self.progress.tick();
                let delivery = Delivery::new(*message, self.shared.clone());
                // The request asked for exactly as many messages as there are permits.
                let Some(permit) = permits.pop() else {
                    tracing::warn!(
                        consumer = name,
                        "more messages than requested; handing one back"
                    );
                    delivery.nak(None).await;
                    continue;
                };
                let span = crate::trace::message_span(name, &delivery);
                // A panicking handler fails its message only (redelivered),
                // not the process: see `uptime_telemetry::panics`.
                let work = uptime_telemetry::contain_async(handler(delivery.clone()));
                let (every, abandon) = (self.progress_every(), abandon.clone());
                // Handlers finishing while every slot is taken (no pull
                // ends meanwhile) are the loop's progress.
                let progress = self.progress.clone();
                in_flight.spawn(
                    async move {
                        let _slot = permit;
                        tokio::select! {
                            _ = with_progress(std::slice::from_ref(&delivery), every, work) => progress.tick(),
                            _ = abandon.cancelled() => delivery.nak(None).await,
                        }
                    }
                    .instrument(span),
                );
                reap(name, &mut in_flight);
            }
        }
        drain(name, in_flight, abandon, concurrency.shutdown_grace).await;
    }
}

/// Waits for the handlers in flight, then hands back those still running.
async fn drain(
    name: &str,
    mut in_flight: JoinSet<()>,
    abandon: CancellationToken,
    grace: Duration,
) {
    tracing::info!(
        consumer = name,
        in_flight = in_flight.len(),
        "stopped pulling; finishing the messages in flight"
    );
    let finished = tokio::time::timeout(grace, async {
        while in_flight.join_next().await.is_some() {}
    })
    .await;
    if finished.is_err() {
        tracing::warn!(
            consumer = name,
            remaining = in_flight.len(),
            "messages still in work after the shutdown grace; handing them back to JetStream"
        );
        // Each abandoned handler naks its message, so another replica gets it
        // now instead of after ack_wait; give the naks a moment to go out.
        abandon.cancel();
        let naked = tokio::time::timeout(NAK_GRACE, async {
            while in_flight.join_next().await.is_some() {}
        })
        .await;
        if naked.is_err() {
            in_flight.abort_all();
        }
    }
}

/// Collects finished handler tasks, logging any that panicked.
fn reap(name: &str, in_flight: &mut JoinSet<()>) {
    while let Some(finished) = in_flight.try_join_next() {
        if let Err(e) = finished {
            if e.is_panic() {
                tracing::error!(consumer = name, error = %e, "a handler panicked; its message will be redelivered");
            }
        }
    }
}
