//! Alert deliveries and their attempts: the notifier's durable work queue and
//! the delivery log users read. Also the email verification token, whose
//! email goes out as a delivery of kind `verification`.
//!
//! Each (event, contact) pair has at most one delivery (a unique key), which is
//! what makes "each event reaches each contact once" hold when an event is
//! redelivered by NATS. Workers claim due rows with a lease (`locked_until`,
//! held by `locked_by`, the notifier's instance id) about as long as one send
//! may take, renew it while a send is in progress, and a restarted notifier
//! releases the leases its previous life left behind. When a notifier dies
//! for good, its leases run out within one lease and another one retries.
//! Deliveries of events are written a batch at a time ([`intake`]); the
//! log users read is [`page_for_contact`] and [`list_for_event`].

use crate::models::AlertContact;
use crate::schema::{alert_contacts, alert_deliveries, alert_delivery_attempts};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Text, Uuid as SqlUuid};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

pub mod acknowledge;
pub mod intake;
mod log;

pub use log::{list_for_contact, list_for_event, page_for_contact};

/// `alert_deliveries.kind`: an alert about a monitor event.
pub const KIND_ALERT: &str = "alert";
/// `alert_deliveries.kind`: the email that verifies an email contact.
pub const KIND_VERIFICATION: &str = "verification";
/// `alert_deliveries.kind`: a test alert sent from the API.
pub const KIND_TEST: &str = "test";

pub const STATUS_PENDING: &str = "pending";
pub const STATUS_DELIVERED: &str = "delivered";
pub const STATUS_FAILED: &str = "failed";

#[derive(Debug, Clone, Queryable, QueryableByName, Selectable)]
#[diesel(table_name = alert_deliveries)]
pub struct AlertDelivery {
    pub id: Uuid,
    pub event_id: Uuid,
    pub contact_id: i64,
    pub monitor_id: Option<i64>,
    pub kind: String,
    pub event_type: String,
    pub payload: serde_json::Value,
    pub status: String,
    pub attempts: i32,
    pub last_error: Option<String>,
    pub next_attempt_at: DateTime<Utc>,
    pub locked_until: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub delivered_at: Option<DateTime<Utc>>,
    /// Creation order: a contact's deliveries go out in this order.
    pub seq: i64,
    /// The notifier instance holding the lease, if any.
    pub locked_by: Option<String>,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = alert_delivery_attempts)]
pub struct DeliveryAttempt {
    pub id: i64,
    pub delivery_id: Uuid,
    pub attempted_at: DateTime<Utc>,
    pub outcome: String,
    pub http_status: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

/// What became of one attempt, and so of its delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptOutcome {
    Delivered,
    /// A transient failure: try again at this time.
    Retry {
        next_attempt_at: DateTime<Utc>,
    },
    /// A permanent failure, or retries exhausted.
    Failed,
}

impl AttemptOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            AttemptOutcome::Delivered => "delivered",
            AttemptOutcome::Retry { .. } => "retry",
            AttemptOutcome::Failed => "failed",
        }
    }
}

/// One attempt, as the log records it.
#[derive(Debug, Clone)]
pub struct AttemptRecord {
    pub attempted_at: DateTime<Utc>,
    pub outcome: AttemptOutcome,
    pub http_status: Option<i32>,
    pub error: Option<String>,
    pub duration_ms: i32,
}

/// A claimed delivery together with the contact it goes to.
#[derive(Debug, Clone)]
pub struct DueDelivery {
    pub delivery: AlertDelivery,
    pub contact: AlertContact,
}

/// Claims up to `limit` due deliveries for `holder` for `lease_secs` and
/// returns them with their contacts. Rows another worker holds (row lock or
/// unexpired lease) are skipped, and so is any delivery with an older one
/// (by creation, `seq`) to the same contact still pending: a contact gets its
/// alerts in the order they were created (a "down" never overtaken by the
/// "up" that followed it), even while retrying.
pub async fn claim_due(
    conn: &mut AsyncPgConnection,
    limit: i64,
    lease_secs: f64,
    holder: &str,
) -> DbResult<Vec<DueDelivery>> {
    let claimed: Vec<AlertDelivery> = diesel::sql_query(
        "UPDATE alert_deliveries d \
         SET locked_until = now() + make_interval(secs => $2), locked_by = $3 \
         WHERE d.id IN ( \
           SELECT id FROM alert_deliveries \
           WHERE status = 'pending' AND next_attempt_at <= now() \
             AND (locked_until IS NULL OR locked_until <= now()) \
             AND NOT EXISTS ( \
               SELECT 1 FROM alert_deliveries older \
               WHERE older.contact_id = alert_deliveries.contact_id \
                 AND older.status = 'pending' AND older.seq < alert_deliveries.seq) \
           ORDER BY next_attempt_at, seq \
           LIMIT $1 \
           FOR UPDATE SKIP LOCKED) \
         RETURNING d.*",
    )
    .bind::<BigInt, _>(limit)
    .bind::<Double, _>(lease_secs)
    .bind::<Text, _>(holder)
    .load(conn)
    .await?;
    if claimed.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<i64> = claimed.iter().map(|d| d.contact_id).collect();
    let contacts: Vec<AlertContact> = alert_contacts::table
        .filter(alert_contacts::id.eq_any(ids))
        .select(AlertContact::as_select())
        .load(conn)
        .await?;
    Ok(claimed
        .into_iter()
        .filter_map(|delivery| {
            // A contact deleted in between takes its deliveries with it (cascade).
            let contact = contacts.iter().find(|c| c.id == delivery.contact_id)?;
            Some(DueDelivery {
                contact: contact.clone(),
                delivery,
            })
        })
        .collect())
}

/// Extends `holder`'s lease on a delivery it is still sending. `false` when
/// the lease is no longer `holder`'s (it ran out and another notifier took
/// the delivery, or the delivery was settled): the send should stop.
pub async fn renew_lease(
    conn: &mut AsyncPgConnection,
    delivery_id: Uuid,
    holder: &str,
    lease_secs: f64,
) -> DbResult<bool> {
    let renewed = diesel::sql_query(
        "UPDATE alert_deliveries SET locked_until = now() + make_interval(secs => $3) \
         WHERE id = $1 AND locked_by = $2 AND status = 'pending'",
    )
    .bind::<SqlUuid, _>(delivery_id)
    .bind::<Text, _>(holder)
    .bind::<Double, _>(lease_secs)
    .execute(conn)
    .await?;
    Ok(renewed == 1)
}

/// Releases every lease `holder` holds: called by a notifier as it starts,
/// when whatever its previous life (same instance id) was sending died with
/// it, so those deliveries go out now instead of after their leases run out.
/// Returns how many were released.
pub async fn release_leases_of(conn: &mut AsyncPgConnection, holder: &str) -> DbResult<usize> {
    Ok(diesel::update(alert_deliveries::table)
        .filter(alert_deliveries::locked_by.eq(holder))
        .filter(alert_deliveries::status.eq(STATUS_PENDING))
        .set((
            alert_deliveries::locked_until.eq(None::<DateTime<Utc>>),
            alert_deliveries::locked_by.eq(None::<String>),
        ))
        .execute(conn)
        .await?)
}

/// Logs an attempt and moves the delivery on: delivered, rescheduled, or failed.
/// Releases the lease. A delivery already settled (by another notifier that
/// took it over) keeps its outcome; the attempt is logged all the same.
pub async fn record_attempt(
    conn: &mut AsyncPgConnection,
    delivery_id: Uuid,
    attempt: &AttemptRecord,
) -> DbResult<()> {
    let attempt = attempt.clone();
    conn.transaction(|c| {
        async move {
            insert_attempt(c, delivery_id, &attempt).await?;
            let (status, next_attempt_at, delivered_at) = match attempt.outcome {
                AttemptOutcome::Delivered => {
                    (STATUS_DELIVERED, attempt.attempted_at, Some(Utc::now()))
                }
                AttemptOutcome::Retry { next_attempt_at } => {
                    (STATUS_PENDING, next_attempt_at, None)
                }
                AttemptOutcome::Failed => (STATUS_FAILED, attempt.attempted_at, None),
            };
            let moved = diesel::update(alert_deliveries::table.find(delivery_id))
                .filter(alert_deliveries::status.eq(STATUS_PENDING))
                .set((
                    alert_deliveries::status.eq(status),
                    alert_deliveries::attempts.eq(alert_deliveries::attempts + 1),
                    alert_deliveries::next_attempt_at.eq(next_attempt_at),
                    alert_deliveries::locked_until.eq(None::<DateTime<Utc>>),
                    alert_deliveries::locked_by.eq(None::<String>),
                    alert_deliveries::delivered_at.eq(delivered_at),
                ))
                .execute(c)
                .await?;
            if moved == 0 {
                return Ok(());
            }
            if let Some(error) = &attempt.error {
                diesel::update(alert_deliveries::table.find(delivery_id))
                    .set(alert_deliveries::last_error.eq(error))
                    .execute(c)
                    .await?;
            }
            if status != STATUS_PENDING {
                scrub_verification_link(c, delivery_id).await?;
            }
            Ok::<_, diesel::result::Error>(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(())
}

async fn insert_attempt(
    conn: &mut AsyncPgConnection,
    delivery_id: Uuid,
    attempt: &AttemptRecord,
) -> QueryResult<usize> {
    diesel::insert_into(alert_delivery_attempts::table)
        .values((
            alert_delivery_attempts::delivery_id.eq(delivery_id),
            alert_delivery_attempts::attempted_at.eq(attempt.attempted_at),
            alert_delivery_attempts::outcome.eq(attempt.outcome.as_str()),
            alert_delivery_attempts::http_status.eq(attempt.http_status),
            alert_delivery_attempts::error.eq(&attempt.error),
            alert_delivery_attempts::duration_ms.eq(attempt.duration_ms),
        ))
        .execute(conn)
        .await
}

/// The verification link is a credential: once its email is sent (or given
/// up on) the stored copy is no longer needed.
async fn scrub_verification_link(
    conn: &mut AsyncPgConnection,
    delivery_id: Uuid,
) -> QueryResult<usize> {
    diesel::sql_query(
        "UPDATE alert_deliveries SET payload = payload - 'verify_url' \
         WHERE id = $1 AND kind = 'verification'",
    )
    .bind::<SqlUuid, _>(delivery_id)
    .execute(conn)
    .await
}

/// A delivery attempted once, synchronously, outside the worker queue (the
/// test alert): it is logged like any other.
#[derive(Debug, Clone)]
pub struct CompletedDelivery {
    /// The delivery's id, as sent (`webhook-id`).
    pub id: Uuid,
    pub event_id: Uuid,
    pub contact_id: i64,
    pub kind: String,
    pub event_type: String,
    pub payload: serde_json::Value,
}

/// Logs a delivery that was attempted once, with that attempt.
pub async fn record_completed(
    conn: &mut AsyncPgConnection,
    delivery: &CompletedDelivery,
    attempt: &AttemptRecord,
) -> DbResult<()> {
    let (status, delivered_at) = match attempt.outcome {
        AttemptOutcome::Delivered => (STATUS_DELIVERED, Some(attempt.attempted_at)),
        _ => (STATUS_FAILED, None),
    };
    let attempt = attempt.clone();
    let d = delivery.clone();
    conn.transaction(|c| {
        async move {
            diesel::insert_into(alert_deliveries::table)
                .values((
                    alert_deliveries::id.eq(d.id),
                    alert_deliveries::event_id.eq(d.event_id),
                    alert_deliveries::contact_id.eq(d.contact_id),
                    alert_deliveries::kind.eq(&d.kind),
                    alert_deliveries::event_type.eq(&d.event_type),
                    alert_deliveries::payload.eq(&d.payload),
                    alert_deliveries::status.eq(status),
                    alert_deliveries::attempts.eq(1),
                    alert_deliveries::last_error.eq(&attempt.error),
                    alert_deliveries::next_attempt_at.eq(attempt.attempted_at),
                    alert_deliveries::delivered_at.eq(delivered_at),
                ))
                .execute(c)
                .await?;
            insert_attempt(c, d.id, &attempt).await?;
            Ok::<_, diesel::result::Error>(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(())
}

/// Stores the digest of a new verification token on the contact and queues
/// its verification email (`payload` carries the link). Earlier verification
/// emails still waiting are abandoned: their links no longer work.
pub async fn request_verification(
    conn: &mut AsyncPgConnection,
    contact_id: i64,
    token_sha256: &str,
    payload: &serde_json::Value,
) -> DbResult<Uuid> {
    let token_sha256 = token_sha256.to_string();
    let payload = payload.clone();
    let id = conn
        .transaction(|c| {
            async move {
                diesel::update(alert_contacts::table.find(contact_id))
                    .set((
                        alert_contacts::verification_token_sha256.eq(&token_sha256),
                        alert_contacts::updated_at.eq(Utc::now()),
                    ))
                    .execute(c)
                    .await?;
                diesel::update(alert_deliveries::table)
                    .filter(alert_deliveries::contact_id.eq(contact_id))
                    .filter(alert_deliveries::kind.eq(KIND_VERIFICATION))
                    .filter(alert_deliveries::status.eq(STATUS_PENDING))
                    .set((
                        alert_deliveries::status.eq(STATUS_FAILED),
                        alert_deliveries::last_error
                            .eq("superseded by a newer verification request"),
                    ))
                    .execute(c)
                    .await?;
                let id: Uuid = diesel::insert_into(alert_deliveries::table)
                    .values((
                        alert_deliveries::event_id.eq(Uuid::new_v4()),
                        alert_deliveries::contact_id.eq(contact_id),
                        alert_deliveries::kind.eq(KIND_VERIFICATION),
                        alert_deliveries::event_type.eq(KIND_VERIFICATION),
                        alert_deliveries::payload.eq(&payload),
                    ))
                    .returning(alert_deliveries::id)
                    .get_result(c)
                    .await?;
                Ok::<_, diesel::result::Error>(id)
            }
            .scope_boxed()
        })
        .await?;
    Ok(id)
}

/// Marks the contact holding this token digest verified and forgets the
/// token, so a link works once. Returns the contact's id.
pub async fn verify_token(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
    issued_after: Option<DateTime<Utc>>,
) -> DbResult<Option<i64>> {
    // Issuing a token sets `updated_at`, so a token whose contact was last
    // updated before `issued_after` has expired.
    let issued_after = issued_after.unwrap_or(DateTime::<Utc>::MIN_UTC);
    Ok(diesel::update(alert_contacts::table)
        .filter(alert_contacts::verification_token_sha256.eq(token_sha256))
        .filter(alert_contacts::updated_at.ge(issued_after))
        .set((
            alert_contacts::verified.eq(true),
            alert_contacts::verification_token_sha256.eq(None::<String>),
            alert_contacts::updated_at.eq(Utc::now()),
        ))
        .returning(alert_contacts::id)
        .get_result(conn)
        .await
        .optional()?)
}
