//! One pull request: ask for at most `max` messages, waiting up to `expires`
//! for them, and read what comes until the request ends.

use async_nats::jetstream::consumer::pull::Batch;
use async_nats::jetstream::consumer::PullConsumer;
use async_nats::jetstream::Message;
use futures::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How long a pull request stays open on the server when there is no work.
pub(crate) const PULL_EXPIRES: Duration = Duration::from_secs(5);
/// Wait after a failed pull before the next.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// A request still open this long after its expiry lost its connection (the
/// server's end of it is gone, and nothing will close ours): pull again.
const OVERDUE_AFTER: Duration = Duration::from_secs(5);

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
        name: &str,
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
                    tracing::warn!(consumer = name, error = %e, "pulling messages failed; retrying");
                    tokio::select! {
                        _ = shutdown.cancelled() => return None,
                        _ = tokio::time::sleep(RETRY_AFTER) => {}
                    }
                }
            }
        }
    }

    /// The next message of this request.
    pub(crate) async fn next(&mut self, name: &str, shutdown: &CancellationToken) -> Next {
        let next = tokio::select! {
            // A message already here is taken before a shutdown: once sent
            // by the server, dropping it would leave it to its ack deadline.
            biased;
            next = tokio::time::timeout_at(self.overdue_at, self.batch.next()) => next,
            _ = shutdown.cancelled() => return Next::Shutdown,
        };
        match next {
            Ok(Some(Ok(message))) => Next::Message(Box::new(message)),
            Ok(None) => Next::Done,
            Ok(Some(Err(e))) => {
                tracing::warn!(consumer = name, error = %e, "receiving messages failed");
                Next::Done
            }
            Err(_) => {
                tracing::warn!(
                    consumer = name,
                    "a pull request outlived its expiry (connection lost?); pulling again"
                );
                Next::Done
            }
        }
    }
}
