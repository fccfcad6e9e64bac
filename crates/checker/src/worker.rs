//! The check pipeline: pull due checks from the shared durable consumer, run
//! up to `concurrency` of them at once, publish each result and only then
//! ack the due check. Pulling, spans, progress and dead letters are the
//! consumer scaffold's (`uptime_consumer`); this module is what one due
//! check means.
//!
//! Delivery guarantees, end to end:
//! - A due check is acked only after JetStream has acknowledged its result,
//!   so a crash at any moment leaves it unacked and JetStream redelivers it
//!   (to any replica) after `ack_wait`.
//! - A redelivered check runs again, and its result is published with the
//!   same `Nats-Msg-Id` (the `check_id`), so the results stream keeps one.
//! - Long checks are reported in progress every third of `ack_wait` (by the
//!   scaffold) so that a slow but healthy check is not handed to a second
//!   replica.
//! - A due check that can never run (undecodable, or for a heartbeat
//!   monitor) goes to the dead-letter stream with its reason.
//!
//! Flow control: the scaffold pulls only as many messages as there are free
//! slots, so nothing waits in a client-side buffer while its ack deadline
//! runs out.

use crate::due::{result_of, Observed};
use crate::metrics as m;
use crate::probes::Probes;
use crate::report::CheckReport;
use async_nats::jetstream;
use chrono::Utc;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;
use uptime_consumer::{Concurrency, Consumer, DeadReason, Delivery};
use uptime_contracts::{bus, check_due, DueCheck, MonitorKind};

/// Redelivery delay after a failed result publish (the broker is struggling).
const PUBLISH_RETRY_DELAY: Duration = Duration::from_secs(1);

/// Everything a check task needs; shared by all of them.
pub struct Worker {
    pub probes: Probes,
    pub js: jetstream::Context,
    pub instance_id: String,
    pub concurrency: usize,
    pub shutdown_grace: Duration,
    /// Opens basic-auth passwords (`secrets`); `None`: no key configured.
    pub keyring: Option<uptime_secrets::Keyring>,
    /// How late a scheduled check may be and still run (see
    /// `CheckerSection::stale_grace_secs`).
    pub stale_grace: chrono::TimeDelta,
}

impl Worker {
    /// Pulls and runs checks until `shutdown`, then lets the checks in flight
    /// finish (for up to `shutdown_grace`) and hands the rest back to JetStream.
    pub async fn run(self: Arc<Self>, consumer: Consumer, shutdown: CancellationToken) {
        let concurrency = Concurrency {
            max_in_flight: self.concurrency,
            shutdown_grace: self.shutdown_grace,
        };
        consumer
            .run_each(
                concurrency,
                move |delivery| self.clone().process(delivery),
                shutdown,
            )
            .await;
    }

    /// One due check, from message to ack.
    async fn process(self: Arc<Self>, delivery: Delivery) {
        let due = match check_due::decode(delivery.subject(), delivery.payload()) {
            Ok(due) => due,
            // No redelivery can fix a message that does not decode.
            Err(e) => {
                return delivery
                    .dead_letter(DeadReason::Undecodable, &e.to_string())
                    .await
            }
        };
        if due.spec.kind == MonitorKind::Heartbeat {
            let detail = format!(
                "check {}: heartbeat monitors have no check to run",
                due.check_id
            );
            return delivery.dead_letter(DeadReason::Unsupported, &detail).await;
        }
        if due.is_stale(Utc::now(), self.stale_grace) {
            // The scheduler has published this monitor's later slots by now:
            // working through a long backlog of old ones would only delay them.
            tracing::info!(check_id = %due.check_id, monitor_id = due.monitor_id, due_at = %due.due_at,
                "due check later than its interval and the stale grace; skipping it");
            m::record_stale_skip();
            delivery.ack().await;
            return;
        }
        // A child of the scaffold's message span, itself in the due check's trace.
        let span = tracing::info_span!(
            "check",
            check_id = %due.check_id,
            monitor_id = due.monitor_id,
            kind = due.spec.kind.as_str(),
            delivery = delivery.delivered(),
            outcome = tracing::field::Empty,
        );
        self.check_and_publish(delivery, due).instrument(span).await;
    }

    async fn check_and_publish(&self, delivery: Delivery, due: DueCheck) {
        let _in_flight = m::InFlight::enter();
        let checked_at = Utc::now();
        m::record_lateness(checked_at - due.due_at);
        let started = Instant::now();

        let report = match self.opened_password(&due) {
            Ok(password) => self.probes.check(&due.spec, password.as_deref()).await,
            Err(reason) => CheckReport::failed(reason),
        };
        m::record_check(report.outcome, started.elapsed());
        tracing::Span::current().record("outcome", m::outcome_label(report.outcome));
        let result = result_of(
            &due,
            Observed {
                checked_at,
                outcome: report.outcome,
                latency_ms: report.latency_ms,
                http_status: report.http_status,
                error: report.error,
                ssl_expires_at: report.ssl_expires_at,
            },
            &self.instance_id,
        );
        // Headers inside the check span, so the result continues its trace.
        let headers = uptime_telemetry::nats::headers_with_msg_id(&due.check_id.to_string());
        let published = bus::publish(&self.js, headers, &result).await;
        let published = match published {
            Ok(ack) => ack.await,
            Err(e) => Err(e),
        };
        match published {
            Ok(ack_info) => {
                if ack_info.duplicate {
                    tracing::debug!("result was already published by an earlier delivery");
                }
                delivery.ack().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "publishing the result failed; the check will be redelivered");
                delivery.nak(Some(PUBLISH_RETRY_DELAY)).await;
            }
        }
    }

    /// The basic-auth password opened, just before the request (`None`:
    /// nothing sealed). A password that does not open is the check's
    /// failure, its reason naming at most the key id, never the secret.
    fn opened_password(&self, due: &DueCheck) -> Result<Option<String>, String> {
        let Some(sealed) = due.spec.password_sealed() else {
            return Ok(None);
        };
        let keyring = self.keyring.as_ref().ok_or(
            "basic auth: the password is sealed and this checker has no secrets key \
             (secrets.keys) to open it",
        )?;
        let password = keyring
            .open(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, sealed)
            .map_err(|e| format!("basic auth: the password cannot be opened: {e}"))?;
        Ok(Some(password.to_string()))
    }
}
