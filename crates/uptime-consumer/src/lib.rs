//! One way to consume a JetStream durable pull consumer, shared by the
//! checker, the recorder and the notifier.
//!
//! - **Bounded in flight.** [`Consumer::run_each`] asks the server for only as
//!   many messages as it has free slots, and [`Consumer::run_batches`] for one
//!   batch at a time, so no message waits in a client-side buffer while its
//!   ack deadline runs out. (No idle heartbeat on these pulls: with one, the
//!   client kept messages unacked until `ack_wait`.)
//! - **A span per message** whose parent is the message's `traceparent`; a
//!   batch gets one span that *links* every message's context, so each
//!   check's trace continues through a batch consumer, not just the first's.
//! - **Settling** through [`Delivery`]: ack, nak with a delay, progress
//!   (sent for you every third of `ack_wait` while a handler runs), and
//!   [`Delivery::dead_letter`] instead of a silent term.
//! - **Dead letters**: the message goes to `uptime.dead.<subject>` in
//!   `UPTIME_DEAD` with why and where from in headers
//!   (`uptime_contracts::streams::dead`), then is terminated. A nak on the
//!   last delivery a consumer allows dead-letters too (`max_deliveries`).
//! - **Reconnect**: a failed pull, or one whose messages cannot be
//!   received (a stream without a leader answers at once), is retried after
//!   a pause that doubles from 0.1 s to 5 s while the failures go on, its
//!   warning throttled (`uptime_telemetry::throttle`); a pull that outlives
//!   its expiry by far (a connection lost mid-pull) is abandoned.
//! - **Lag**: `nats_consumer_pending` / `nats_consumer_ack_pending` are
//!   reported while the consumer runs.
//! - **Progress**: with [`Consumer::watched_by`], every pull that ends (idle
//!   ones too, every few seconds), every message received and every handler
//!   or batch finished ticks the consumer's loop for `/readyz`
//!   (`uptime_ops::progress`).
//! - **Setup**: [`bus::Bus`] connects a service, creates the streams and its
//!   durable consumer, and flushes the client before it exits.
//!
//! Inside: `each` (message by message, bounded in flight), `batches`
//! (batch by batch), `pull` (the pull loop, its pause and its throttle),
//! `delivery`, [`dead`] and [`trace`].

mod batches;
pub mod bus;
pub mod dead;
mod delivery;
mod each;
mod pull;
pub mod trace;

pub use batches::Batching;
pub use bus::{Bus, BusError};
pub use delivery::{Delivery, DEAD_LETTERED_TOTAL};
pub use each::Concurrency;
pub use uptime_contracts::streams::dead::Reason as DeadReason;

use async_nats::jetstream::{self, consumer::PullConsumer};
use std::sync::Arc;
use std::time::Duration;

/// How often the lag gauges are refreshed.
const LAG_EVERY: Duration = Duration::from_secs(15);

/// A durable pull consumer and what settling its messages needs.
#[derive(Clone)]
pub struct Consumer {
    pull: PullConsumer,
    shared: Arc<Shared>,
    progress: uptime_ops::Progress,
}

/// What every [`Delivery`] of one consumer shares.
pub(crate) struct Shared {
    pub js: jetstream::Context,
    pub stream: &'static str,
    pub consumer: &'static str,
    pub ack_wait: Duration,
    /// From the consumer's configuration; zero or negative means unlimited.
    pub max_deliver: i64,
}

impl Consumer {
    /// Wraps `pull`, a durable consumer named `consumer` on `stream` (the
    /// names label metrics and dead letters). Its ack wait and delivery
    /// limit are read from the consumer's configuration.
    pub fn new(
        js: jetstream::Context,
        pull: PullConsumer,
        stream: &'static str,
        consumer: &'static str,
    ) -> Self {
        let config = &pull.cached_info().config;
        let shared = Shared {
            js,
            stream,
            consumer,
            ack_wait: config.ack_wait,
            max_deliver: config.max_deliver,
        };
        Self {
            pull,
            shared: Arc::new(shared),
            progress: uptime_ops::Progress::unwatched(),
        }
    }

    /// Registers this consumer's loop (`consumer <name>`) with `watchdog`:
    /// `/readyz` says when it stops coming round.
    pub fn watched_by(mut self, watchdog: &uptime_ops::Watchdog) -> Self {
        self.progress = watchdog.register(format!("consumer {}", self.name()), pull::PULL_EXPIRES);
        self
    }

    /// The durable consumer's name.
    pub fn name(&self) -> &'static str {
        self.shared.consumer
    }

    /// How often a message being worked on is reported in progress.
    pub fn progress_every(&self) -> Duration {
        (self.shared.ack_wait / 3).max(Duration::from_millis(100))
    }

    /// Reports the consumer's lag until `stop` resolves.
    async fn report_lag(&self, stop: impl std::future::Future<Output = ()>) {
        uptime_telemetry::nats::report_consumer_lag(
            self.shared.js.clone(),
            self.shared.stream,
            self.shared.consumer,
            LAG_EVERY,
            stop,
        )
        .await
    }
}
