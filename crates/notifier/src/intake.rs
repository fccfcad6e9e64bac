//! Events in: each state change (of any live `state-changed` version, read
//! into a `StateChange`) and certificate warning (`SslWarning`) becomes one
//! pending delivery per verified contact of its monitor, written before the event is
//! acked. A redelivered event finds its deliveries there already (unique
//! `(event_id, contact_id)`), so each event reaches each contact once.
//!
//! Events are taken in batches (the consumer scaffold's `run_batches`: up to
//! `batch_size` events arriving within `batch_wait` of the first): a batch's
//! deliveries are written by one statement
//! ([`uptime_db::deliveries::intake`]), then every event is acked and the
//! delivery worker woken once. An event nobody is alerted about (a monitor
//! without verified contacts, the common case) therefore costs a share of one
//! statement, not a round trip of its own; a change to `pending` costs no
//! database work at all.
//!
//! - An undecodable event is dead-lettered with its reason; the rest of its
//!   batch goes on.
//! - A transient database error (connection lost, pool exhausted) hands the
//!   whole batch back for redelivery after `retry_delay`.
//! - Any other error of a batch is looked into event by event, so one event
//!   that can never be stored does not hold back the others. An event that
//!   fails on its own is handed back too, never given up on: that would be
//!   an alert lost, and the error may be the database's (a broken
//!   migration), not the event's.
//!
//! Versions: the recorder publishes one message per status change, of the
//! current version (with the round of a monitor checked from several
//! regions); the previous version, published beside it by older recorders
//! under the same `event_id`, is still read. Deliveries are unique per
//! `(event_id, contact)`, so an event in both versions alerts once.
//!
//! Order: batches are handled one after another, and within a batch
//! deliveries are numbered in stream order (`seq`, the order the worker sends
//! a contact's deliveries in), so one monitor's events reach each contact in
//! the order they were published.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Notify;
use uptime_alerts::AlertEvent;
use uptime_consumer::{DeadReason, Delivery};
use uptime_contracts::{ssl_expiring, state_changed, DecodeError};
use uptime_db::deliveries::intake::{self as store, IntakeEvent, IntakeOutcome};
use uptime_db::{DbError, Pool};

/// Histogram: events (messages) taken per batch.
pub const BATCH_SIZE_METRIC: &str = "notifier_intake_batch_size";
/// Counter: events taken that nobody is alerted about (no verified contact
/// of an active monitor, or a change to `pending`).
pub const WITHOUT_DELIVERIES_METRIC: &str = "alert_events_without_deliveries_total";

/// Redelivering cannot help.
#[derive(Debug, thiserror::Error)]
#[error("undecodable event on {subject}: {reason}")]
struct Undecodable {
    subject: String,
    reason: String,
}

/// The alert an event message raises; `None` when there is nothing to tell
/// anyone (a change to `pending`).
fn decode(subject: &str, payload: &[u8]) -> Result<Option<AlertEvent>, Undecodable> {
    let undecodable = |reason: String| Undecodable {
        subject: subject.to_string(),
        reason,
    };
    match ssl_expiring::decode(subject, payload) {
        Ok(warning) => return Ok(Some(AlertEvent::from_ssl_expiring(&warning))),
        Err(DecodeError::UnknownSubject(_)) => {}
        Err(e) => return Err(undecodable(e.to_string())),
    }
    let change = state_changed::decode(subject, payload).map_err(|e| undecodable(e.to_string()))?;
    Ok(AlertEvent::from_state_change(&change))
}

/// The row the store needs for an alert about a monitor; `None` for an alert
/// about no monitor (nobody to tell).
fn to_store(alert: &AlertEvent) -> Option<IntakeEvent> {
    let monitor = alert.monitor.as_ref()?;
    Some(IntakeEvent {
        event_id: alert.event_id,
        monitor_id: monitor.id,
        event_type: alert.event.as_str().to_string(),
        payload: serde_json::to_string(alert).expect("an alert serialises"),
        severity: uptime_alerts::incident::severity_of(alert).rank(),
        incident_id: alert.incident.as_ref().map(|i| i.id),
        escalates: alert.incident_to_acknowledge().is_some(),
    })
}

/// Turns events into deliveries.
#[derive(Clone)]
pub struct Intake {
    pub pool: Pool,
    /// Woken after new deliveries are written, so they go out at once.
    pub deliveries_added: Arc<Notify>,
    pub retry_delay: Duration,
}

/// How an attempt to store some events' deliveries ended.
enum Attempt {
    /// Written and acked.
    Stored,
    /// Handed back for redelivery after a transient error.
    Retrying,
    /// A non-transient error: these events cannot be stored together.
    Failed(DbError),
}

impl Intake {
    /// Turns one batch of event messages into deliveries and settles every
    /// message.
    pub async fn handle(&self, mut messages: Vec<Delivery>) {
        if messages.is_empty() {
            return;
        }
        metrics::histogram!(BATCH_SIZE_METRIC).record(messages.len() as f64);
        // A pull hands messages over in stream order, but a redelivered one
        // may come after newer ones: its place is its sequence.
        messages.sort_by_key(Delivery::stream_sequence);
        let mut batch: Vec<(Delivery, IntakeEvent)> = Vec::with_capacity(messages.len());
        let mut silent = 0u64;
        for message in messages {
            match decode(message.subject(), message.payload()) {
                Err(e) => {
                    metrics::counter!("alert_events_total", "outcome" => "undecodable")
                        .increment(1);
                    message
                        .dead_letter(DeadReason::Undecodable, &e.to_string())
                        .await;
                }
                Ok(alert) => match alert.as_ref().and_then(to_store) {
                    Some(event) => batch.push((message, event)),
                    None => {
                        // Nothing to write: done as soon as it is read.
                        silent += 1;
                        message.ack().await;
                    }
                },
            }
        }
        if silent > 0 {
            metrics::counter!("alert_events_total", "outcome" => "accepted").increment(silent);
            metrics::counter!(WITHOUT_DELIVERIES_METRIC).increment(silent);
        }
        if batch.is_empty() {
            return;
        }
        let Attempt::Failed(e) = self.attempt(&batch).await else {
            return;
        };
        if batch.len() > 1 {
            // One event the database refuses must not hold back the others:
            // store them one by one to find it.
            tracing::warn!(error = %e, size = batch.len(), "storing a batch of events failed; storing them one by one");
            for item in &batch {
                if let Attempt::Failed(e) = self.attempt(std::slice::from_ref(item)).await {
                    self.hand_back(item, &e).await;
                }
            }
        } else {
            self.hand_back(&batch[0], &e).await;
        }
    }

    /// Writes the deliveries of `batch` in one statement and settles its
    /// messages, unless the error calls for looking into it event by event.
    async fn attempt(&self, batch: &[(Delivery, IntakeEvent)]) -> Attempt {
        // The same event twice in a batch (republished after the dedup
        // window) is written once; both messages are settled with it.
        let mut seen = HashSet::with_capacity(batch.len());
        let events: Vec<IntakeEvent> = batch
            .iter()
            .filter(|(_, e)| seen.insert(e.event_id))
            .map(|(_, e)| e.clone())
            .collect();
        match self.store(&events).await {
            Ok(outcome) => {
                if outcome.created > 0 {
                    // Once per batch: the worker claims all that is due.
                    self.deliveries_added.notify_one();
                }
                let without = (events.len() as i64 - outcome.with_contacts).max(0) as u64;
                metrics::counter!(WITHOUT_DELIVERIES_METRIC).increment(without);
                metrics::counter!("alert_events_total", "outcome" => "accepted")
                    .increment(batch.len() as u64);
                if outcome.created > 0 {
                    tracing::info!(
                        events = events.len(),
                        with_contacts = outcome.with_contacts,
                        created = outcome.created,
                        "alert events accepted"
                    );
                } else {
                    tracing::debug!(
                        events = events.len(),
                        with_contacts = outcome.with_contacts,
                        "alert events accepted; no new deliveries"
                    );
                }
                for (message, _) in batch {
                    message.ack().await;
                }
                Attempt::Stored
            }
            Err(e) if e.is_transient() => {
                tracing::warn!(error = %e, size = batch.len(), "storing deliveries failed; events will be redelivered");
                metrics::counter!("alert_events_total", "outcome" => "retry")
                    .increment(batch.len() as u64);
                for (message, _) in batch {
                    message.nak(Some(self.retry_delay)).await;
                }
                Attempt::Retrying
            }
            Err(e) => Attempt::Failed(e),
        }
    }

    async fn store(&self, events: &[IntakeEvent]) -> Result<IntakeOutcome, DbError> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        store::create_for_events(&mut conn, events).await
    }

    /// An event whose deliveries cannot be written even on its own: handed
    /// back for redelivery (every database error is retried, since an event
    /// given up on would be an alert lost).
    async fn hand_back(&self, (message, event): &(Delivery, IntakeEvent), e: &DbError) {
        tracing::error!(event_id = %event.event_id, monitor_id = event.monitor_id, error = %e,
            "storing an event's deliveries failed; it will be redelivered");
        metrics::counter!("alert_events_total", "outcome" => "retry").increment(1);
        message.nak(Some(self.retry_delay)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::{
        subjects, CheckRef, Message as _, MonitorKind, MonitorRef, MonitorStatus, StateChange,
        StateChangedV3, Trigger,
    };
    use uuid::Uuid;

    fn change(previous: MonitorStatus, status: MonitorStatus) -> StateChangedV3 {
        let now = chrono::Utc::now();
        StateChangedV3 {
            event_id: Uuid::new_v4(),
            monitor: MonitorRef {
                id: 7,
                user_id: 1,
                name: "API".into(),
                kind: MonitorKind::Http,
                target: Some("https://example.com".into()),
            },
            previous_status: previous,
            status,
            occurred_at: now,
            previous_since: None,
            consecutive_failures: 0,
            check: CheckRef {
                check_id: Uuid::new_v4(),
                trigger: Trigger::Scheduled,
                checked_at: now,
                status,
                latency_ms: Some(12),
                http_status: Some(200),
                error: None,
            },
            round: None,
        }
    }

    #[test]
    fn unknown_subjects_and_bad_json_are_undecodable() {
        assert!(decode("uptime.events.other.v1", b"{}").is_err());
        assert!(decode(subjects::STATE_CHANGED_V3, b"not json").is_err());
        // Retired versions' subjects have no handler.
        for retired in uptime_contracts::versions::VERSIONS
            .iter()
            .filter(|v| !v.status.is_live())
        {
            assert!(
                decode(retired.subject, b"{}").is_err(),
                "{}",
                retired.subject
            );
        }
    }

    #[test]
    fn a_first_result_alerts_and_a_change_to_pending_does_not() {
        // `pending → up` is a change to up: the contract alerts on it.
        let first = change(MonitorStatus::Pending, MonitorStatus::Up);
        let alert = decode(subjects::STATE_CHANGED_V3, &first.to_bytes())
            .unwrap()
            .expect("an alert");
        let row = to_store(&alert).expect("about a monitor");
        assert_eq!(row.event_id, first.event_id);
        assert_eq!(row.monitor_id, 7);
        assert_eq!(row.event_type, "monitor.up");
        let payload: serde_json::Value = serde_json::from_str(&row.payload).unwrap();
        assert_eq!(payload, alert.to_json(), "the payload the worker sends");

        let reset = change(MonitorStatus::Up, MonitorStatus::Pending);
        assert!(decode(subjects::STATE_CHANGED_V3, &reset.to_bytes())
            .unwrap()
            .is_none());
    }

    #[test]
    fn version_three_carries_the_new_kinds_into_the_alert() {
        let mut event = change(MonitorStatus::Up, MonitorStatus::Down);
        event.monitor.kind = MonitorKind::Dns;
        let alert = decode(subjects::STATE_CHANGED_V3, &event.to_bytes())
            .unwrap()
            .expect("an alert");
        assert_eq!(alert.monitor.as_ref().unwrap().kind, MonitorKind::Dns);
        assert_eq!(to_store(&alert).unwrap().event_type, "monitor.down");
    }

    #[test]
    fn the_current_version_carries_the_round_into_the_alert() {
        use uptime_contracts::{RegionOutcome, RegionSeen, Round};
        let v2 = change(MonitorStatus::Up, MonitorStatus::Down);
        let region = |name: &str, seen, error: Option<&str>| RegionOutcome {
            region: name.into(),
            seen,
            check_id: Some(Uuid::new_v4()),
            latency_ms: Some(40),
            http_status: None,
            error: error.map(String::from),
        };
        let event = StateChange {
            round: Some(Round {
                round_id: Uuid::new_v4(),
                quorum: 2,
                regions: vec![
                    region("eu", RegionSeen::Failed, Some("connection refused")),
                    region("us", RegionSeen::Failed, Some("timed out after 5 s")),
                    region("ap", RegionSeen::Passed, None),
                ],
                note: None,
            }),
            ..StateChange::from(v2)
        };
        let alert = decode(subjects::STATE_CHANGED_V4, &event.to_bytes())
            .unwrap()
            .expect("an alert");
        let row = to_store(&alert).expect("about a monitor");
        assert_eq!(row.event_id, event.event_id);
        assert_eq!(row.event_type, "monitor.down");
        let payload: serde_json::Value = serde_json::from_str(&row.payload).unwrap();
        let regions: Vec<(&str, &str)> = payload["round"]["regions"]
            .as_array()
            .expect("the round in the payload")
            .iter()
            .map(|r| (r["region"].as_str().unwrap(), r["seen"].as_str().unwrap()))
            .collect();
        assert_eq!(
            regions,
            [("eu", "failed"), ("us", "failed"), ("ap", "passed")]
        );
        assert_eq!(payload["round"]["quorum"], 2);
        assert_eq!(
            payload["round"]["regions"][0]["error"],
            "connection refused"
        );

        // Without a round (one region): no `round` in the payload.
        let single = StateChange {
            round: None,
            ..event
        };
        let alert = decode(subjects::STATE_CHANGED_V4, &single.to_bytes())
            .unwrap()
            .expect("an alert");
        assert!(alert.to_json().get("round").is_none());
    }
}
