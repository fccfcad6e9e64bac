//! Deliveries out: claim due deliveries (with a lease), attempt them
//! concurrently, log every attempt, and reschedule or settle each one.
//!
//! A worker that dies mid-attempt leaves its lease behind: it restarts under
//! the same instance id and releases it at once, or, dead for good, its lease
//! runs out within one lease (about one send attempt) and another notifier
//! attempts the delivery again. Receivers may therefore see a delivery twice,
//! always with the same `webhook-id`, and can deduplicate on it.

use crate::backoff::{Next, RetryPolicy};
use crate::lease::{LeaseKeeper, LeaseLost};
use chrono::{DateTime, Utc};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Notify;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uptime_alerts::{
    AcknowledgeRequest, AlertEvent, Channel, Destination, Outgoing, ProviderOptions, SendError,
    Sender, VerificationRequest,
};
use uptime_db::deliveries::{self, AttemptOutcome, AttemptRecord, DueDelivery};
use uptime_db::Pool;

/// Everything an attempt needs.
pub struct Worker {
    pub pool: Pool,
    pub sender: Sender,
    /// Signs the acknowledge link of down alerts (`None`: no links).
    pub ack_links: Option<uptime_alerts::AckLinks>,
    /// Opens contacts' provider credentials; `None`: none configured.
    pub keyring: Option<Arc<uptime_secrets::Keyring>>,
    pub policy: RetryPolicy,
    pub concurrency: usize,
    pub lease: Duration,
    /// This notifier's name on its leases (`notifier.instance_id`).
    pub holder: String,
    pub poll_interval: Duration,
    /// Woken when new deliveries were written.
    pub deliveries_added: Arc<Notify>,
}

impl Worker {
    /// Runs until `shutdown`, then lets the attempts in flight finish (each
    /// is bounded by its channel's timeout). Ticks `progress` every time
    /// the loop comes round.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken, progress: uptime_ops::Progress) {
        self.release_earlier_leases(&shutdown).await;
        let mut in_flight: JoinSet<()> = JoinSet::new();
        let concurrency = self.concurrency.max(1);
        while !shutdown.is_cancelled() {
            progress.tick();
            let free = concurrency.saturating_sub(in_flight.len());
            let mut claimed_all = false;
            if free > 0 {
                let claimed_at = tokio::time::Instant::now();
                match self.claim(free).await {
                    Ok(due) => {
                        claimed_all = due.len() == free;
                        for delivery in due {
                            let worker = self.clone();
                            in_flight
                                .spawn(async move { worker.attempt(delivery, claimed_at).await });
                        }
                    }
                    Err(e) => tracing::warn!(error = %e, "claiming deliveries failed"),
                }
            }
            if claimed_all {
                // More may be due right now; claim again once a slot frees.
                if in_flight.len() >= concurrency {
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = in_flight.join_next() => {}
                    }
                }
                continue;
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = self.deliveries_added.notified() => {}
                _ = tokio::time::sleep(self.poll_interval) => {}
                Some(_) = in_flight.join_next(), if !in_flight.is_empty() => {}
            }
        }
        while in_flight.join_next().await.is_some() {}
    }

    /// A notifier restarted under the same instance id (a crashed container
    /// restarted in its pod) holds leases its previous life took: what that
    /// life was sending died with it, so those deliveries are free at once
    /// instead of after their leases run out. Retried until the database
    /// answers: claiming before this would leave them waiting anyway.
    async fn release_earlier_leases(&self, shutdown: &CancellationToken) {
        while !shutdown.is_cancelled() {
            let released = async {
                let mut conn = uptime_db::pool::conn(&self.pool).await?;
                deliveries::release_leases_of(&mut conn, &self.holder).await
            };
            match released.await {
                Ok(0) => return,
                Ok(n) => {
                    tracing::info!(released = n, holder = %self.holder, "released the leases of this notifier's previous run");
                    return;
                }
                Err(e) => tracing::warn!(error = %e, "releasing earlier leases failed; retrying"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => return,
                _ = tokio::time::sleep(self.poll_interval) => {}
            }
        }
    }

    async fn claim(&self, limit: usize) -> Result<Vec<DueDelivery>, uptime_db::DbError> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        deliveries::claim_due(
            &mut conn,
            limit as i64,
            self.lease.as_secs_f64(),
            &self.holder,
        )
        .await
    }

    async fn attempt(&self, due: DueDelivery, claimed_at: tokio::time::Instant) {
        let d = &due.delivery;
        let channel = Channel::parse(&due.contact.kind);
        let channel_label = channel.map_or("unknown", Channel::as_str);
        let span = tracing::info_span!("alert_delivery", delivery_id = %d.id, event_id = %d.event_id,
            kind = %d.kind, channel = channel_label, attempt = d.attempts + 1);
        async {
            let attempted_at = Utc::now();
            let occurred_at = alert_occurred_at(d);
            if d.attempts == 0 {
                if let Some(occurred_at) = occurred_at {
                    metrics::histogram!("alert_first_attempt_latency_seconds", "channel" => channel_label)
                        .record(seconds_between(occurred_at, attempted_at));
                }
            }
            let started = Instant::now();
            let keeper = LeaseKeeper {
                pool: &self.pool,
                holder: &self.holder,
                lease: self.lease,
                delivery_id: d.id,
                claimed_at,
            };
            let result = tokio::select! {
                result = self.send(&due, channel) => result,
                lost = keeper.keep() => {
                    // Someone else may send it now: stop, and record nothing
                    // (the attempt's outcome is unknown).
                    let reason = match lost {
                        LeaseLost::TakenOver => "taken_over",
                        LeaseLost::Expiring => "expiring",
                    };
                    metrics::counter!("alert_delivery_leases_lost_total", "reason" => reason).increment(1);
                    tracing::warn!(reason, "lost the delivery's lease mid-send; the send was stopped");
                    return;
                }
            };
            let elapsed = started.elapsed();
            let record = self.record_for(&due, attempted_at, elapsed, result);
            let outcome = record.outcome.as_str();
            metrics::counter!("alert_deliveries_total", "channel" => channel_label, "outcome" => outcome)
                .increment(1);
            metrics::histogram!("alert_delivery_attempt_duration_seconds", "channel" => channel_label)
                .record(elapsed.as_secs_f64());
            match record.outcome {
                AttemptOutcome::Delivered => {
                    if let Some(occurred_at) = occurred_at {
                        metrics::histogram!("alert_delivered_latency_seconds", "channel" => channel_label)
                            .record(seconds_between(occurred_at, Utc::now()));
                    }
                    tracing::info!("alert delivered")
                }
                AttemptOutcome::Retry { next_attempt_at } => {
                    tracing::warn!(error = ?record.error, %next_attempt_at, "delivery failed; will retry")
                }
                AttemptOutcome::Failed => {
                    metrics::counter!("alert_delivery_failures_total", "channel" => channel_label)
                        .increment(1);
                    tracing::error!(error = ?record.error, "delivery failed for good")
                }
            }
            self.save(d.id, &record).await;
        }
        .instrument(span)
        .await
    }

    async fn send(
        &self,
        due: &DueDelivery,
        channel: Option<Channel>,
    ) -> Result<uptime_alerts::Sent, SendError> {
        let d = &due.delivery;
        let contact = &due.contact;
        let channel = channel.ok_or_else(|| {
            SendError::permanent(format!("unknown contact type {:?}", contact.kind))
        })?;
        let options = ProviderOptions::from_json(&contact.options)?;
        // Opened just before the request and wiped when dropped; never logged.
        let secret = self.open_secret(contact)?;
        let to = Destination {
            channel,
            value: &contact.value,
            signing_secret: contact.signing_secret.as_deref(),
            secret: secret.as_ref().map(|s| s.as_str()),
            options: &options,
        };
        let invalid =
            |e: serde_json::Error| SendError::permanent(format!("stored payload is invalid: {e}"));
        if d.kind == deliveries::acknowledge::KIND_ACKNOWLEDGE {
            let request: AcknowledgeRequest =
                serde_json::from_value(d.payload.clone()).map_err(invalid)?;
            return self.sender.send(to, Outgoing::Acknowledge(&request)).await;
        }
        if d.kind == deliveries::KIND_VERIFICATION {
            let request: VerificationRequest =
                serde_json::from_value(d.payload.clone()).map_err(invalid)?;
            return self.sender.send(to, Outgoing::Verification(&request)).await;
        }
        // Alerts go to verified contacts only; a contact whose address
        // changed since the delivery was written is unverified again.
        if !contact.verified {
            return Err(SendError::permanent("the contact is not verified"));
        }
        let mut event: AlertEvent = serde_json::from_value(d.payload.clone()).map_err(invalid)?;
        // Made now, for this contact, never stored: the link is a credential.
        if let (Some(links), Some(incident_id)) = (&self.ack_links, event.incident_to_acknowledge())
        {
            if let Some(incident) = event.incident.as_mut() {
                incident.acknowledge_url = Some(links.url(incident_id, contact.id, Utc::now()));
            }
        }
        self.sender
            .send(
                to,
                Outgoing::Alert {
                    delivery_id: d.id,
                    event: &event,
                },
            )
            .await
    }

    /// The contact's provider credential, opened. A missing key or a value
    /// that does not open fails the delivery for good: retrying cannot help
    /// until an operator fixes the keys.
    fn open_secret(
        &self,
        contact: &uptime_db::models::AlertContact,
    ) -> Result<Option<uptime_secrets::Zeroizing<String>>, SendError> {
        let Some(sealed) = &contact.secret_sealed else {
            return Ok(None);
        };
        let keyring = self.keyring.as_deref().ok_or_else(|| {
            SendError::permanent(
                "the contact's credential cannot be opened: no secrets key is configured \
                 (secrets.keys)",
            )
        })?;
        keyring
            .open(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, sealed)
            .map(Some)
            .map_err(|e| SendError::permanent(format!("the contact's credential: {e}")))
    }

    fn record_for(
        &self,
        due: &DueDelivery,
        attempted_at: chrono::DateTime<Utc>,
        elapsed: Duration,
        result: Result<uptime_alerts::Sent, SendError>,
    ) -> AttemptRecord {
        let duration_ms = i32::try_from(elapsed.as_millis()).unwrap_or(i32::MAX);
        let (outcome, http_status, error) = match result {
            Ok(sent) => (AttemptOutcome::Delivered, sent.http_status, None),
            Err(e) => {
                let outcome = match e.retry {
                    uptime_alerts::Retry::Never => AttemptOutcome::Failed,
                    uptime_alerts::Retry::Later { after } => {
                        let failed_attempts =
                            u32::try_from(due.delivery.attempts + 1).unwrap_or(u32::MAX);
                        match self.policy.next(
                            due.delivery.created_at,
                            Utc::now(),
                            failed_attempts,
                            after,
                        ) {
                            Next::RetryAt(next_attempt_at) => {
                                AttemptOutcome::Retry { next_attempt_at }
                            }
                            Next::GiveUp => AttemptOutcome::Failed,
                        }
                    }
                };
                (outcome, e.http_status, Some(e.message))
            }
        };
        AttemptRecord {
            attempted_at,
            outcome,
            http_status: http_status.map(i32::from),
            error,
            duration_ms,
        }
    }

    /// Records the attempt, retrying briefly while the database is away. If
    /// it stays away the lease runs out and the delivery is attempted again:
    /// at least once, never lost.
    async fn save(&self, delivery_id: uuid::Uuid, record: &AttemptRecord) {
        for wait_ms in [0u64, 200, 1000, 3000] {
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            let saved = async {
                let mut conn = uptime_db::pool::conn(&self.pool).await?;
                deliveries::record_attempt(&mut conn, delivery_id, record).await
            };
            match saved.await {
                Ok(()) => return,
                Err(e) => tracing::warn!(error = %e, "recording a delivery attempt failed"),
            }
        }
        tracing::error!(
            "could not record the attempt; the delivery will be attempted again after its lease"
        );
    }
}

/// When the event of an alert delivery happened (the state change, the
/// certificate warning); `None` for verification mail and test alerts.
fn alert_occurred_at(d: &deliveries::AlertDelivery) -> Option<DateTime<Utc>> {
    if d.kind != deliveries::KIND_ALERT {
        return None;
    }
    d.payload
        .get("occurred_at")
        .and_then(|v| v.as_str())
        .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
        .map(|t| t.with_timezone(&Utc))
}

fn seconds_between(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    ((to - from).num_milliseconds() as f64 / 1000.0).max(0.0)
}
