//! Mails to status page subscribers: drains the `status_page_mails`
//! outbox (confirmations written by the status-pages service, notices
//! written by the api-gateway in the notice's transaction) the way the
//! [`crate::worker`] drains alert deliveries: claim due rows with a lease,
//! send, then record the attempt: sent, retried with the same backoff
//! ([`crate::backoff::RetryPolicy`]) or, past `give_up_after_secs` or on a
//! permanent SMTP answer, `failed` (the dead letters, kept for reading
//! until retention prunes them).
//!
//! Each mail is one row, unique per (notice update, subscriber): a crash
//! before the attempt is recorded repeats that one mail after its lease,
//! never the fan-out, and the repeat carries the same `Message-ID`.
//! Sends are bounded by the SMTP timeout, shorter than the lease.

pub mod render;

use crate::backoff::{Next, RetryPolicy};
use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use uptime_alerts::{ListMail, Retry, SendError, Sender};
use uptime_db::status_page_mails::{self as mails, DueMail, MailOutcome};
use uptime_db::Pool;

/// Everything the page mail loop needs.
pub struct PageMailer {
    pub pool: Pool,
    pub sender: Sender,
    pub policy: RetryPolicy,
    pub concurrency: usize,
    pub lease: Duration,
    pub holder: String,
    pub poll_interval: Duration,
}

impl PageMailer {
    /// Runs until `shutdown`, then lets the sends in flight finish. Ticks
    /// `progress` every round.
    pub async fn run(self: Arc<Self>, shutdown: CancellationToken, progress: uptime_ops::Progress) {
        self.release_earlier_leases().await;
        while !shutdown.is_cancelled() {
            progress.tick();
            let claimed = async {
                let mut conn = uptime_db::pool::conn(&self.pool).await?;
                mails::claim_due(
                    &mut conn,
                    self.concurrency.max(1) as i64,
                    self.lease.as_secs_f64(),
                    &self.holder,
                )
                .await
            };
            let due = match claimed.await {
                Ok(due) => due,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming subscriber mails failed");
                    Vec::new()
                }
            };
            let full = due.len() >= self.concurrency.max(1);
            let mut in_flight = JoinSet::new();
            for mail in due {
                let mailer = self.clone();
                in_flight.spawn(async move { mailer.attempt(mail).await });
            }
            while in_flight.join_next().await.is_some() {}
            if full {
                continue;
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(self.poll_interval) => {}
            }
        }
    }

    async fn release_earlier_leases(&self) {
        let released = async {
            let mut conn = uptime_db::pool::conn(&self.pool).await?;
            mails::release_leases_of(&mut conn, &self.holder).await
        };
        match released.await {
            Ok(0) => {}
            Ok(n) => tracing::info!(
                released = n,
                "released the subscriber mail leases of this notifier's previous run"
            ),
            // The leases run out by themselves.
            Err(e) => tracing::warn!(error = %e, "releasing earlier subscriber mail leases failed"),
        }
    }

    async fn attempt(&self, mail: DueMail) {
        let result = self.send(&mail).await;
        let outcome = match result {
            Ok(()) => MailOutcome::Sent,
            Err(e) => match e.retry {
                Retry::Never => MailOutcome::Failed { error: e.message },
                Retry::Later { after } => {
                    let failed = u32::try_from(mail.attempts + 1).unwrap_or(u32::MAX);
                    match self.policy.next(mail.created_at, Utc::now(), failed, after) {
                        Next::RetryAt(next_attempt_at) => MailOutcome::Retry {
                            next_attempt_at,
                            error: e.message,
                        },
                        Next::GiveUp => MailOutcome::Failed { error: e.message },
                    }
                }
            },
        };
        let label = match &outcome {
            MailOutcome::Sent => "sent",
            MailOutcome::Retry { .. } => "retry",
            MailOutcome::Failed { .. } => "failed",
        };
        metrics::counter!("status_page_mails_total", "kind" => kind_label(&mail.kind), "outcome" => label)
            .increment(1);
        match &outcome {
            MailOutcome::Sent => {
                tracing::info!(mail_id = %mail.id, kind = %mail.kind, "subscriber mail sent")
            }
            MailOutcome::Retry {
                error,
                next_attempt_at,
            } => {
                tracing::warn!(mail_id = %mail.id, %error, %next_attempt_at, "subscriber mail failed; will retry")
            }
            MailOutcome::Failed { error } => {
                tracing::error!(mail_id = %mail.id, %error, "subscriber mail failed for good")
            }
        }
        // Retried briefly; if the database stays away the lease runs out
        // and the mail is attempted again (at least once, never lost).
        for wait_ms in [0u64, 200, 1000, 3000] {
            tokio::time::sleep(Duration::from_millis(wait_ms)).await;
            let saved = async {
                let mut conn = uptime_db::pool::conn(&self.pool).await?;
                mails::record_attempt(&mut conn, mail.id, &outcome).await
            };
            match saved.await {
                Ok(()) => return,
                Err(e) => tracing::warn!(error = %e, "recording a subscriber mail attempt failed"),
            }
        }
    }

    async fn send(&self, mail: &DueMail) -> Result<(), SendError> {
        let invalid =
            |e: serde_json::Error| SendError::permanent(format!("stored payload is invalid: {e}"));
        let rendered = match mail.kind.as_str() {
            mails::KIND_CONFIRMATION => {
                let payload: render::ConfirmationPayload =
                    serde_json::from_value(mail.payload.clone()).map_err(invalid)?;
                render::confirmation(&payload, &mail.unsubscribe_token)
                    .ok_or_else(|| SendError::permanent("the confirmation token is gone"))?
            }
            mails::KIND_NOTICE => {
                // Written for confirmed subscribers only; kept as a guard.
                if !mail.confirmed {
                    return Err(SendError::permanent("the subscription is not confirmed"));
                }
                let payload: render::NoticePayload =
                    serde_json::from_value(mail.payload.clone()).map_err(invalid)?;
                render::notice(&payload, &mail.unsubscribe_token)
            }
            other => return Err(SendError::permanent(format!("unknown mail kind {other:?}"))),
        };
        let message_id = format!("<{}@status-pages.uptime>", mail.id);
        self.sender
            .send_list_mail(&ListMail {
                to: &mail.email,
                subject: &rendered.subject,
                body: &rendered.body,
                unsubscribe_url: &rendered.unsubscribe_url,
                message_id: &message_id,
            })
            .await
            .map(|_| ())
    }
}

fn kind_label(kind: &str) -> &'static str {
    match kind {
        mails::KIND_CONFIRMATION => "confirmation",
        mails::KIND_NOTICE => "notice",
        _ => "unknown",
    }
}
