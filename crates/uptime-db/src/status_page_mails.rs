//! The mails to status page subscribers (migration 2026-11-28-000048): an
//! outbox written by the status-pages service (confirmations) and the
//! api-gateway (notices, see
//! [`crate::status_subscriptions::queue_notice_mails`]), drained by the
//! notifier like its alert deliveries: claimed with a lease
//! ([`claim_due`]), settled or rescheduled after each attempt
//! ([`record_attempt`]), the leases of a restarted notifier released at
//! once ([`release_leases_of`]). Retention: [`delete_settled_before`].

use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Bool, Double, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// `status_page_mails.kind`: the double opt-in mail of a new subscription.
pub const KIND_CONFIRMATION: &str = "confirmation";
/// `status_page_mails.kind`: a notice (or an update of one) posted on the page.
pub const KIND_NOTICE: &str = "notice";

/// A claimed mail with where it goes.
#[derive(Clone, QueryableByName)]
pub struct DueMail {
    #[diesel(sql_type = diesel::sql_types::Uuid)]
    pub id: Uuid,
    #[diesel(sql_type = Text)]
    pub kind: String,
    #[diesel(sql_type = Jsonb)]
    pub payload: serde_json::Value,
    #[diesel(sql_type = Integer)]
    pub attempts: i32,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    #[diesel(sql_type = Text)]
    pub email: String,
    #[diesel(sql_type = Text)]
    pub unsubscribe_token: String,
    #[diesel(sql_type = Bool)]
    pub confirmed: bool,
}

impl std::fmt::Debug for DueMail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Neither the address nor the tokens reach a log.
        f.debug_struct("DueMail")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("attempts", &self.attempts)
            .finish_non_exhaustive()
    }
}

/// Claims up to `limit` due mails for `holder` for `lease_secs`. Rows
/// another notifier holds (row lock or unexpired lease) are skipped.
pub async fn claim_due(
    conn: &mut AsyncPgConnection,
    limit: i64,
    lease_secs: f64,
    holder: &str,
) -> DbResult<Vec<DueMail>> {
    Ok(diesel::sql_query(
        "UPDATE status_page_mails m \
            SET locked_until = now() + make_interval(secs => $2), locked_by = $3 \
           FROM status_page_subscribers s \
          WHERE s.id = m.subscriber_id AND m.id IN ( \
                SELECT id FROM status_page_mails \
                 WHERE status = 'pending' AND next_attempt_at <= now() \
                   AND (locked_until IS NULL OR locked_until <= now()) \
                 ORDER BY next_attempt_at, created_at LIMIT $1 \
                 FOR UPDATE SKIP LOCKED) \
         RETURNING m.id, m.kind, m.payload, m.attempts, m.created_at, s.email, \
                   s.unsubscribe_token, s.confirmed_at IS NOT NULL AS confirmed",
    )
    .bind::<BigInt, _>(limit)
    .bind::<Double, _>(lease_secs)
    .bind::<Text, _>(holder)
    .load(conn)
    .await?)
}

/// Frees every lease `holder` holds (a notifier restarted under the same
/// instance id: what its previous life was sending died with it).
pub async fn release_leases_of(conn: &mut AsyncPgConnection, holder: &str) -> DbResult<usize> {
    Ok(diesel::sql_query(
        "UPDATE status_page_mails SET locked_until = NULL, locked_by = NULL \
          WHERE locked_by = $1 AND status = 'pending'",
    )
    .bind::<Text, _>(holder)
    .execute(conn)
    .await?)
}

/// What became of one attempt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MailOutcome {
    Sent,
    /// A transient failure: try again at this time.
    Retry {
        next_attempt_at: DateTime<Utc>,
        error: String,
    },
    /// Permanent, or retries exhausted: the mail stays as a dead letter.
    Failed {
        error: String,
    },
}

/// Records an attempt by `holder` and releases its lease. A settled
/// confirmation mail loses its token (the link lives in the mail alone).
/// A mail settled meanwhile (by a notifier that took it over) is left as it
/// is.
pub async fn record_attempt(
    conn: &mut AsyncPgConnection,
    mail_id: Uuid,
    outcome: &MailOutcome,
) -> DbResult<()> {
    let (status, next, error): (&str, Option<DateTime<Utc>>, Option<&str>) = match outcome {
        MailOutcome::Sent => ("sent", None, None),
        MailOutcome::Retry {
            next_attempt_at,
            error,
        } => ("pending", Some(*next_attempt_at), Some(error)),
        MailOutcome::Failed { error } => ("failed", None, Some(error)),
    };
    diesel::sql_query(
        "UPDATE status_page_mails SET status = $2, attempts = attempts + 1, \
            next_attempt_at = COALESCE($3, next_attempt_at), \
            last_error = COALESCE($4, last_error), \
            locked_until = NULL, locked_by = NULL, \
            sent_at = CASE WHEN $2 = 'sent' THEN now() END, \
            payload = CASE WHEN $2 <> 'pending' THEN payload - 'confirm_token' ELSE payload END \
          WHERE id = $1 AND status = 'pending'",
    )
    .bind::<diesel::sql_types::Uuid, _>(mail_id)
    .bind::<Text, _>(status)
    .bind::<Nullable<Timestamptz>, _>(next)
    .bind::<Nullable<Text>, _>(error)
    .execute(conn)
    .await?;
    Ok(())
}

crate::retention::delete_batch_fn! {
    /// Retention: deletes up to `limit` sent or failed mails written before
    /// `before` (pending ones stay, whatever their age).
    pub fn delete_settled_before(before): "status_page_mails"
        where "status <> 'pending' AND created_at < $1"
}
