//! One pull request: ask for at most `max` messages, waiting up to `expires`
//! for them, and read what comes until the request ends. A pull that cannot
//! be opened or whose messages cannot be received is tried again after a
//! [`Pause`] that grows while the failures go on, and its warning is
//! throttled: a pull whose stream has no leader fails at once, and without
//! a pause the loop sent thousands of requests (and log lines) a second.

use async_nats::jetstream::consumer::pull::Batch;
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::Message;
use futures::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_telemetry::Throttle;

/// How long a pull request stays open on the server when there is no work.
pub(crate) const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// A request still open this long after its expiry lost its connection (the
/// server's end of it is gone, and nothing will close ours): pull again.
const OVERDUE_AFTER: Duration = Duration::from_secs(5);
/// The pause after the first failure of a run of them...
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// ...doubling up to this: a pull within a second of a node's return, and
/// never longer than an idle pull lasts (the loop's progress for `/readyz`
/// comes round as often as when all is well).
const LONGEST_PAUSE: Duration = PULL_EXPIRES;
/// A consumer's failure warnings are logged at most this often.
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(5);

/// How long to wait before pulling again after a failure, free of I/O.
#[derive(Debug, Clone)]
pub(crate) struct Pause {
    next: Duration,
}

impl Default for Pause {
    fn default() -> Self {
        Self { next: FIRST_PAUSE }
    }
}

impl Pause {
    /// The pause after one more failure; the next will be twice as long, up
    /// to [`LONGEST_PAUSE`].
    pub(crate) fn after_failure(&mut self) -> Duration {
        let pause = self.next;
        self.next = (self.next * 2).min(LONGEST_PAUSE);
        pause
    }

    /// A pull worked: the next failure pauses briefly again.
    pub(crate) fn reset(&mut self) {
        self.next = FIRST_PAUSE;
    }
}

/// The failures of one consumer's loop: their pause and their log throttle.
pub(crate) struct Failures {
    consumer: &'static str,
    pause: Pause,
    log: Throttle,
}

impl Failures {
    pub(crate) fn new(consumer: &'static str) -> Self {
        Self {
            consumer,
            pause: Pause::default(),
            log: Throttle::new(FAILURE_LOG_EVERY),
        }
    }

    /// Logs the failure (throttled) and waits out its pause; `false` when
    /// `shutdown` came first.
    async fn wait(
        &mut self,
        what: &'static str,
        error: &(dyn std::fmt::Display + Send + Sync),
        shutdown: &CancellationToken,
    ) -> bool {
        let pause = self.pause.after_failure();
        if let Some(held_back) = self.log.admit() {
            tracing::warn!(consumer = self.consumer, error = %error, retry_in_ms = pause.as_millis() as u64,
                held_back, "{what}; retrying (logged at most every 5 s; held_back: failures since the last line)");
        }
        tokio::select! {
            _ = shutdown.cancelled() => false,
            _ = tokio::time::sleep(pause) => true,
        }
    }
}

/// An open pull request.
pub(crate) struct Pull {
    batch: Batch,
    overdue_at: tokio::time::Instant,
}

/// What reading a pull request gave.
pub(crate) enum Next {
    Message(Box<Message>),
    /// The request ended (filled, expired, or broken): pull again.
    Done,
    Shutdown,
}

impl Pull {
    /// Opens a request for up to `max` messages, retrying until it opens or
    /// `shutdown`. `expires` of zero asks only for what is there now.
    pub(crate) async fn open(
        consumer: &PullConsumer,
        failures: &mut Failures,
        max: usize,
        expires: Duration,
        shutdown: &CancellationToken,
    ) -> Option<Self> {
        loop {
            let opened = if expires.is_zero() {
                consumer.fetch().max_messages(max).messages().await
            } else {
                consumer
                    .batch()
                    .max_messages(max)
                    .expires(expires)
                    .messages()
                    .await
            };
            match opened {
                Ok(batch) => {
                    let overdue_at = tokio::time::Instant::now() + expires + OVERDUE_AFTER;
                    return Some(Self { batch, overdue_at });
                }
                Err(e) => {
                    if !failures.wait("pulling messages failed", &e, shutdown).await {
                        return None;
                    }
                }
            }
        }
    }

    /// The next message of this request. A receive error ends the request
    /// after its pause (or with [`Next::Shutdown`] if `shutdown` comes first).
    pub(crate) async fn next(
        &mut self,
        failures: &mut Failures,
        shutdown: &CancellationToken,
    ) -> Next {
        let next = tokio::select! {
            // A message already here is taken before a shutdown: once sent
            // by the server, dropping it would leave it to its ack deadline.
            biased;
            next = tokio::time::timeout_at(self.overdue_at, self.batch.next()) => next,
            _ = shutdown.cancelled() => return Next::Shutdown,
        };
        match next {
            Ok(Some(Ok(message))) => {
                failures.pause.reset();
                Next::Message(Box::new(message))
            }
            Ok(None) => {
                failures.pause.reset();
                Next::Done
            }
            Ok(Some(Err(e))) => {
                if failures
                    .wait("receiving messages failed", &e, shutdown)
                    .await
                {
                    Next::Done
                } else {
                    Next::Shutdown
                }
            }
            Err(_) => {
                tracing::warn!(
                    consumer = failures.consumer,
                    "a pull request outlived its expiry (connection lost?); pulling again"
                );
                Next::Done
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pause_doubles_to_its_bound_and_starts_again_after_a_success() {
        let mut pause = Pause::default();
        let pauses: Vec<u64> = (0..8)
            .map(|_| pause.after_failure().as_millis() as u64)
            .collect();
        assert_eq!(pauses, [100, 200, 400, 800, 1_600, 3_200, 5_000, 5_000]);
        pause.reset();
        assert_eq!(pause.after_failure(), Duration::from_millis(100));
    }
}
