//! One delivered message and the ways to settle it.

use crate::{DeadReason, Shared};
use async_nats::jetstream::{AckKind, Message};
use async_nats::HeaderMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use uptime_contracts::streams::dead;

/// Counter of messages sent to the dead-letter stream, by `consumer` and `reason`.
pub const DEAD_LETTERED_TOTAL: &str = "messages_dead_lettered_total";

/// When the dead-letter stream cannot take a message, it is handed back
/// after this long rather than dropped unseen.
const DEAD_LETTER_RETRY: Duration = Duration::from_secs(5);

/// A message handed to a handler, with its consumer's settling rules.
/// Cloning is cheap; every clone settles the same message.
#[derive(Clone)]
pub struct Delivery {
    message: Message,
    shared: Arc<Shared>,
}

impl Delivery {
    pub(crate) fn new(message: Message, shared: Arc<Shared>) -> Self {
        Self { message, shared }
    }

    /// The message as received.
    pub fn message(&self) -> &Message {
        &self.message
    }

    pub fn subject(&self) -> &str {
        &self.message.subject
    }

    pub fn payload(&self) -> &[u8] {
        &self.message.payload
    }

    pub fn headers(&self) -> Option<&HeaderMap> {
        self.message.headers.as_ref()
    }

    /// How many times this message has been delivered, this one included.
    pub fn delivered(&self) -> i64 {
        self.message.info().map(|i| i.delivered).unwrap_or(1)
    }

    /// The message's sequence number in its stream (0 if unknown).
    pub fn stream_sequence(&self) -> u64 {
        self.message.info().map(|i| i.stream_sequence).unwrap_or(0)
    }

    /// Done: JetStream forgets it (a work queue deletes it).
    pub async fn ack(&self) {
        self.settle(AckKind::Ack).await
    }

    /// Not now: redeliver after `delay` (at once with `None`). On the last
    /// delivery the consumer allows there is no "later": the message is
    /// dead-lettered instead (reason `max_deliveries`).
    pub async fn nak(&self, delay: Option<Duration>) {
        let max = self.shared.max_deliver;
        if max > 0 && self.delivered() >= max {
            let detail = format!("delivered {max} times, the most its consumer allows");
            return self.dead_letter(DeadReason::MaxDeliveries, &detail).await;
        }
        self.settle(AckKind::Nak(delay)).await
    }

    /// Still working on it: restarts the ack wait.
    pub async fn progress(&self) {
        self.settle(AckKind::Progress).await
    }

    /// Gives up on a message that can never succeed: publishes it verbatim
    /// on `uptime.dead.<subject>` with why and where from in headers, waits
    /// for the dead-letter stream to store it, then terminates the original
    /// (no redelivery). If the dead-letter stream refuses it, the original
    /// is handed back for a later try instead of being dropped unseen.
    pub async fn dead_letter(&self, reason: DeadReason, detail: &str) {
        let consumer = self.shared.consumer;
        tracing::error!(consumer, reason = %reason, subject = %self.subject(),
            stream_sequence = self.stream_sequence(), detail, "dead-lettering a message");
        let subject = dead::subject_for(self.subject());
        let stored = match self
            .shared
            .js
            .publish_with_headers(subject, self.dead_headers(reason, detail), {
                self.message.payload.clone()
            })
            .await
        {
            Ok(ack) => ack.await.map(|_| ()),
            Err(e) => Err(e),
        };
        match stored {
            Ok(()) => {
                metrics::counter!(DEAD_LETTERED_TOTAL, "consumer" => consumer, "reason" => reason.as_str())
                    .increment(1);
                self.settle(AckKind::Term).await;
            }
            Err(e) => {
                tracing::warn!(consumer, error = %e, "the dead-letter stream did not take the message; handing it back");
                self.settle(AckKind::Nak(Some(DEAD_LETTER_RETRY))).await;
            }
        }
    }

    fn dead_headers(&self, reason: DeadReason, detail: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        // Everything the publisher sent (trace context included, so the dead
        // letter sits in the message's trace) except JetStream's own headers.
        if let Some(original) = self.headers() {
            for (name, values) in original.iter() {
                let name: &str = name.as_ref();
                if name.starts_with("Nats-") {
                    continue;
                }
                for value in values {
                    headers.append(name, value.as_str());
                }
            }
            if let Some(id) = original.get(async_nats::header::NATS_MESSAGE_ID) {
                headers.insert(dead::ORIGINAL_MSG_ID_HEADER, id.as_str());
            }
        }
        let (stream, sequence) = (self.shared.stream, self.stream_sequence());
        // One dead letter per original message, however often it is dead-lettered.
        headers.insert(
            async_nats::header::NATS_MESSAGE_ID,
            format!("{stream}:{sequence}").as_str(),
        );
        headers.insert(dead::REASON_HEADER, reason.as_str());
        // Header values are one line.
        headers.insert(
            dead::DETAIL_HEADER,
            detail.replace(['\r', '\n'], " ").as_str(),
        );
        headers.insert(dead::ORIGINAL_SUBJECT_HEADER, self.subject());
        headers.insert(dead::STREAM_HEADER, stream);
        headers.insert(dead::SEQUENCE_HEADER, sequence.to_string().as_str());
        headers.insert(dead::CONSUMER_HEADER, self.shared.consumer);
        headers.insert(
            dead::DELIVERED_HEADER,
            self.delivered().to_string().as_str(),
        );
        headers
    }

    async fn settle(&self, kind: AckKind) {
        let label = format!("{kind:?}");
        if let Err(e) = self.message.ack_with(kind).await {
            // A lost ack is not lost work: the message comes back after its
            // ack wait, and every consumer's work is idempotent.
            tracing::warn!(consumer = self.shared.consumer, error = %e, kind = %label, "settling a message failed");
        }
    }
}

/// Runs `work`, reporting every message of `deliveries` in progress every
/// `every` until it ends. Progress on a message already settled is ignored
/// by the server.
pub(crate) async fn with_progress<F: Future>(
    deliveries: &[Delivery],
    every: Duration,
    work: F,
) -> F::Output {
    let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    tokio::pin!(work);
    loop {
        tokio::select! {
            output = &mut work => return output,
            _ = ticks.tick() => {
                for delivery in deliveries {
                    delivery.progress().await;
                }
            }
        }
    }
}
