//! Batch by batch: gather what arrives shortly after a first message, hand
//! it over whole, settle each message.

use crate::delivery::with_progress;
use crate::pull::{Failures, Next, Pull, PULL_EXPIRES};
use crate::{Consumer, Delivery};
use std::future::Future;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

/// How messages are gathered into batches.
#[derive(Debug, Clone, Copy)]
pub struct Batching {
    /// At most this many messages in a batch (at least 1).
    pub max_messages: usize,
    /// After the first message of a batch, how long to wait for more.
    pub max_wait: Duration,
}

impl Consumer {
    /// Pulls batches and runs `handler` on each, one batch at a time, until
    /// `shutdown`. A batch that has started is always finished.
    ///
    /// A batch is two pull requests: one message (waiting for work), then up
    /// to `max_messages - 1` more arriving within `max_wait`. Nothing is
    /// pulled while a batch is handled, so no message waits in a buffer while
    /// its ack deadline runs. The handler runs in
    /// [`crate::trace::batch_span`], linked to every message's trace, and
    /// every message is reported in progress every third of the ack wait
    /// while it runs; it settles each [`Delivery`] itself.
    pub async fn run_batches<H, F>(
        &self,
        batching: Batching,
        handler: H,
        shutdown: CancellationToken,
    ) where
        H: FnMut(Vec<Delivery>) -> F,
        F: Future<Output = ()>,
    {
        let pull = self.pull_batches(batching, handler, &shutdown);
        tokio::join!(self.report_lag(shutdown.cancelled()), pull);
    }

    async fn pull_batches<H, F>(
        &self,
        batching: Batching,
        mut handler: H,
        shutdown: &CancellationToken,
    ) where
        H: FnMut(Vec<Delivery>) -> F,
        F: Future<Output = ()>,
    {
        let name = self.name();
        let max = batching.max_messages.max(1);
        let mut failures = Failures::new(name);
        'pull: loop {
            let Some(mut first) =
                Pull::open(&self.pull, &mut failures, 1, PULL_EXPIRES, shutdown).await
            else {
                break;
            };
            let mut batch = Vec::with_capacity(max);
            loop {
                match first.next(&mut failures, shutdown).await {
                    Next::Message(message) => batch.push(*message),
                    Next::Done => break,
                    Next::Shutdown => break 'pull,
                }
            }
            // An idle pull that expired is progress too: the loop is alive.
            self.progress.tick();
            if batch.is_empty() {
                continue;
            }
            if max > 1 {
                // Read to its end even on shutdown: a message the server has
                // sent must be handled, or it waits out its ack deadline.
                let never = CancellationToken::new();
                if let Some(mut rest) = Pull::open(
                    &self.pull,
                    &mut failures,
                    max - 1,
                    batching.max_wait,
                    shutdown,
                )
                .await
                {
                    while let Next::Message(message) = rest.next(&mut failures, &never).await {
                        batch.push(*message);
                    }
                }
            }
            let deliveries: Vec<Delivery> = batch
                .into_iter()
                .map(|message| Delivery::new(message, self.shared.clone()))
                .collect();
            let span = crate::trace::batch_span(name, &deliveries);
            let work = handler(deliveries.clone()).instrument(span);
            with_progress(&deliveries, self.progress_every(), work).await;
            self.progress.tick();
        }
        tracing::info!(consumer = name, "consumer stopped");
    }
}
