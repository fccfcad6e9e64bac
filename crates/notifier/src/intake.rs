//! Events in: each `StateChangedV1` / `SslExpiringV1` becomes one pending
//! delivery per verified contact of its monitor, written before the event is
//! acked. A redelivered event finds its deliveries there already (unique
//! `(event_id, contact_id)`), so each event reaches each contact once.
//! Pulling, the span in each event's trace and dead letters are the consumer
//! scaffold's (`uptime_consumer`); events are taken one at a time, in stream
//! order.

use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uptime_alerts::AlertEvent;
use uptime_consumer::{Concurrency, Consumer, DeadReason, Delivery};
use uptime_contracts::{subjects, Message as _, SslExpiringV1, StateChangedV1};
use uptime_db::{DbError, Pool};

#[derive(Debug, thiserror::Error)]
enum IntakeError {
    /// Redelivering cannot help.
    #[error("undecodable event on {subject}: {reason}")]
    Undecodable { subject: String, reason: String },
    #[error(transparent)]
    Db(#[from] DbError),
}

/// The alert an event message raises; `None` when there is nothing to tell
/// anyone (a change to `pending`).
fn decode(subject: &str, payload: &[u8]) -> Result<Option<AlertEvent>, IntakeError> {
    let undecodable = |reason: String| IntakeError::Undecodable {
        subject: subject.to_string(),
        reason,
    };
    match subject {
        subjects::STATE_CHANGED_V1 => {
            let event =
                StateChangedV1::from_bytes(payload).map_err(|e| undecodable(e.to_string()))?;
            Ok(AlertEvent::from_state_change(&event))
        }
        subjects::SSL_EXPIRING_V1 => {
            let event =
                SslExpiringV1::from_bytes(payload).map_err(|e| undecodable(e.to_string()))?;
            Ok(Some(AlertEvent::from_ssl_expiring(&event)))
        }
        other => Err(undecodable(format!("no handler for subject {other}"))),
    }
}

/// Turns events into deliveries.
#[derive(Clone)]
pub struct Intake {
    pub pool: Pool,
    /// Woken after new deliveries are written, so they go out at once.
    pub deliveries_added: Arc<Notify>,
    pub retry_delay: Duration,
}

impl Intake {
    async fn handle(&self, message: Delivery) {
        // A child of the scaffold's message span, itself in the event's trace.
        let span = tracing::info_span!("alert_event", subject = %message.subject(), event_id = tracing::field::Empty);
        async {
            match self.store(&message).await {
                Ok(created) => {
                    if created > 0 {
                        self.deliveries_added.notify_one();
                    }
                    metrics::counter!("alert_events_total", "outcome" => "accepted").increment(1);
                    message.ack().await;
                }
                Err(e @ IntakeError::Undecodable { .. }) => {
                    metrics::counter!("alert_events_total", "outcome" => "undecodable").increment(1);
                    message
                        .dead_letter(DeadReason::Undecodable, &e.to_string())
                        .await;
                }
                Err(IntakeError::Db(e)) => {
                    // Every database error is retried: an event given up on
                    // would be an alert lost.
                    tracing::warn!(error = %e, transient = e.is_transient(), "storing deliveries failed; event will be redelivered");
                    metrics::counter!("alert_events_total", "outcome" => "retry").increment(1);
                    message.nak(Some(self.retry_delay)).await;
                }
            }
        }
        .instrument(span)
        .await
    }

    /// Writes the event's deliveries; returns how many are new.
    async fn store(&self, message: &Delivery) -> Result<i64, IntakeError> {
        let Some(event) = decode(message.subject(), message.payload())? else {
            return Ok(0);
        };
        tracing::Span::current().record("event_id", tracing::field::display(event.event_id));
        let Some(monitor) = &event.monitor else {
            return Ok(0);
        };
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let created = uptime_db::deliveries::create_for_event(
            &mut conn,
            event.event_id,
            monitor.id,
            event.event.as_str(),
            &event.to_json(),
        )
        .await?;
        tracing::info!(
            monitor_id = monitor.id,
            event = event.event.as_str(),
            created,
            "alert event accepted"
        );
        Ok(created)
    }
}

/// Pulls events and hands them to `intake`, one at a time, until
/// `shutdown`; the event in progress is finished first.
pub async fn run(consumer: Consumer, intake: Intake, shutdown: CancellationToken) {
    let one_at_a_time = Concurrency {
        max_in_flight: 1,
        // Storing an event takes milliseconds; past this the database is
        // stuck, and the event is handed back for another notifier.
        shutdown_grace: Duration::from_secs(10),
    };
    let intake = Arc::new(intake);
    consumer
        .run_each(
            one_at_a_time,
            move |message| {
                let intake = intake.clone();
                async move { intake.handle(message).await }
            },
            shutdown,
        )
        .await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_subjects_and_bad_json_are_undecodable() {
        assert!(matches!(
            decode("uptime.events.other.v1", b"{}"),
            Err(IntakeError::Undecodable { .. })
        ));
        assert!(matches!(
            decode(subjects::STATE_CHANGED_V1, b"not json"),
            Err(IntakeError::Undecodable { .. })
        ));
    }
}
