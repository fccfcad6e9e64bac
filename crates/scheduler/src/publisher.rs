//! Publishing with many acknowledgements in flight, retrying failures.
//!
//! Each message is handed to the client at once (that instant is what
//! lateness is measured at), and its acknowledgement is awaited in a
//! `FuturesUnordered`, up to `max_in_flight` at a time. A publish that fails
//! or is not acknowledged is sent again with the same `Nats-Msg-Id` after a
//! backoff, until it is acknowledged or the scheduler gives up at shutdown;
//! the id makes a retry of a publish that did in fact land harmless.

use crate::stats::{PublishKind, SchedulerStats, PUBLISH_RETRIES_TOTAL};
use async_nats::jetstream::context::{PublishAckFuture, PublishError};
use async_nats::jetstream::Context;
use async_nats::HeaderMap;
use bytes::Bytes;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use std::collections::BTreeMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_telemetry::Throttle;

const FIRST_RETRY_DELAY: Duration = Duration::from_millis(200);
const MAX_RETRY_DELAY: Duration = Duration::from_secs(5);

/// Failed publishes are logged at the first, then at most once per
/// [`FAILURE_LOG_EVERY`] with how many were left out: while a NATS node is
/// down every publish in flight fails, and every retry, thousands a second
/// (the retries metric counts each).
static FAILURE_LOG: Throttle = Throttle::new(FAILURE_LOG_EVERY);
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(5);

/// A message ready to go.
pub(crate) struct Outbound {
    pub kind: PublishKind,
    /// A region's own subject for a due check.
    pub subject: String,
    pub headers: HeaderMap,
    pub payload: Bytes,
    /// The slot it is for (epoch ms): what is in flight holds back how far
    /// the scheduler reports its shards published.
    pub due_at_ms: i64,
}

/// How one publish ended.
pub(crate) enum Acked {
    Stored {
        kind: PublishKind,
        duplicate: bool,
    },
    /// Still unacknowledged when the scheduler stopped.
    Abandoned,
}

/// A finished publish and the slot it was for.
type Done = (i64, Acked);

pub(crate) struct Publisher {
    js: Context,
    in_flight: FuturesUnordered<BoxFuture<'static, Done>>,
    /// The slots in flight, with how many publishes each.
    in_flight_dues: BTreeMap<i64, u32>,
    max_in_flight: usize,
    /// Cancelled to stop retrying when the drain at shutdown runs out of time.
    give_up: CancellationToken,
    /// The earliest slot given up unacknowledged at shutdown: it holds the
    /// watermark back like one in flight, so the next holder sends it again.
    abandoned_floor: Option<i64>,
}

impl Publisher {
    pub fn new(js: Context, max_in_flight: usize) -> Self {
        Self {
            js,
            in_flight: FuturesUnordered::new(),
            in_flight_dues: BTreeMap::new(),
            max_in_flight: max_in_flight.max(1),
            give_up: CancellationToken::new(),
            abandoned_floor: None,
        }
    }

    /// Hands `out` to the client, first waiting for room among the in-flight
    /// acknowledgements.
    pub async fn send(&mut self, out: Outbound, stats: &SchedulerStats) {
        while self.in_flight.len() >= self.max_in_flight {
            if let Some(done) = self.next_done().await {
                record(stats, done);
            }
        }
        *self.in_flight_dues.entry(out.due_at_ms).or_default() += 1;
        let first = self
            .js
            .publish_with_headers(
                out.subject.clone(),
                out.headers.clone(),
                out.payload.clone(),
            )
            .await;
        self.in_flight.push(Box::pin(until_acked(
            self.js.clone(),
            out,
            first,
            self.give_up.clone(),
        )));
    }

    /// The next acknowledgement (pending forever when none is in flight, so
    /// it can sit in a `select!`).
    pub async fn next_acked(&mut self) -> Acked {
        match self.next_done().await {
            Some(done) => done,
            None => std::future::pending().await,
        }
    }

    /// Waits for every in-flight acknowledgement, retrying for at most `grace`.
    pub async fn drain(&mut self, grace: Duration, stats: &SchedulerStats) {
        let deadline = tokio::time::Instant::now() + grace;
        let mut abandoned = 0usize;
        loop {
            let next = tokio::time::timeout_at(deadline, self.next_done()).await;
            match next {
                Ok(Some(Acked::Abandoned)) => abandoned += 1,
                Ok(Some(done)) => record(stats, done),
                Ok(None) => break,
                Err(_) => {
                    // Out of time: stop the retry loops; they finish at once.
                    self.give_up.cancel();
                    while let Some(done) = self.next_done().await {
                        match done {
                            Acked::Abandoned => abandoned += 1,
                            done => record(stats, done),
                        }
                    }
                    break;
                }
            }
        }
        if abandoned > 0 {
            // Not lost: they hold the watermark the leases are released
            // with, so the next holder publishes them again under their ids.
            tracing::warn!(abandoned, "publishes still unacknowledged at shutdown");
        }
    }
}

impl Publisher {
    /// The earliest slot still in flight, or given up at shutdown.
    pub fn earliest_in_flight(&self) -> Option<i64> {
        let in_flight = self.in_flight_dues.keys().next().copied();
        match (in_flight, self.abandoned_floor) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    async fn next_done(&mut self) -> Option<Acked> {
        let (due_at_ms, acked) = self.in_flight.next().await?;
        if matches!(acked, Acked::Abandoned) {
            let floor = self.abandoned_floor.get_or_insert(due_at_ms);
            *floor = (*floor).min(due_at_ms);
        }
        if let Some(count) = self.in_flight_dues.get_mut(&due_at_ms) {
            *count -= 1;
            if *count == 0 {
                self.in_flight_dues.remove(&due_at_ms);
            }
        }
        Some(acked)
    }
}

pub(crate) fn record(stats: &SchedulerStats, done: Acked) {
    if let Acked::Stored { kind, duplicate } = done {
        stats.record_acked(kind, duplicate);
    }
}

async fn until_acked(
    js: Context,
    out: Outbound,
    first: Result<PublishAckFuture, PublishError>,
    give_up: CancellationToken,
) -> Done {
    let due_at_ms = out.due_at_ms;
    (due_at_ms, until_acked_inner(js, out, first, give_up).await)
}

async fn until_acked_inner(
    js: Context,
    out: Outbound,
    first: Result<PublishAckFuture, PublishError>,
    give_up: CancellationToken,
) -> Acked {
    let mut attempt = first;
    let mut delay = FIRST_RETRY_DELAY;
    loop {
        let result = match attempt {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        match result {
            Ok(ack) => {
                return Acked::Stored {
                    kind: out.kind,
                    duplicate: ack.duplicate,
                }
            }
            Err(error) => {
                // A full stream is counted and logged as such (it lasts
                // until the checkers or the recorder catch up).
                uptime_contracts::bus::note_failed_publish(&out.subject, &error);
                if let Some(held_back) = FAILURE_LOG.admit() {
                    tracing::warn!(%error, subject = %out.subject, retry_in_ms = delay.as_millis() as u64, held_back, "publish failed; retrying with the same message id (logged at most every 5 s; held_back: failures since the last line)");
                }
                metrics::counter!(PUBLISH_RETRIES_TOTAL, "kind" => out.kind.as_str()).increment(1);
                tokio::select! {
                    _ = give_up.cancelled() => return Acked::Abandoned,
                    _ = tokio::time::sleep(delay) => {}
                }
                delay = (delay * 2).min(MAX_RETRY_DELAY);
                attempt = js
                    .publish_with_headers(
                        out.subject.clone(),
                        out.headers.clone(),
                        out.payload.clone(),
                    )
                    .await;
            }
        }
    }
}
