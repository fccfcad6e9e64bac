//! Limits on verification emails (`verification_mail_log`): they go to
//! addresses nobody has confirmed yet, so the service must not become a
//! relay. A contact gets at most one per `per_contact_interval` (the email
//! sent when it is created does not count, so a mistyped address can be
//! corrected at once), and an organisation at most `daily_cap_per_user` (the
//! setting kept its name from when a user owned contacts) in any 24 hours
//! (every email counts).
//!
//! [`try_record`] decides and logs in one transaction with the
//! organisation's row locked, so concurrent requests of one organisation
//! (every contact belongs to one) are decided one after the other: two can
//! never both pass the last free place. Call it in the transaction that queues the email, so that a
//! failure to queue takes the log row back with it.

use crate::DbResult;
use diesel::sql_types::{BigInt, Bool, Double, Nullable};
use diesel::QueryableByName;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use std::time::Duration;

/// The window of the per-organisation cap.
pub const DAY: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Zero: no per-contact limit.
    pub per_contact_interval: Duration,
    /// Emails per organisation in any 24 hours; zero or less: no cap.
    pub daily_cap_per_user: i64,
}

/// Why an email may not be sent now, and when it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The contact was sent one less than `per_contact_interval` ago.
    ContactInterval { retry_after: Duration },
    /// The organisation was sent `daily_cap_per_user` in the last 24 hours.
    DailyCap { retry_after: Duration },
}

impl Refusal {
    pub fn retry_after(&self) -> Duration {
        match *self {
            Refusal::ContactInterval { retry_after } | Refusal::DailyCap { retry_after } => {
                retry_after
            }
        }
    }
}

#[derive(QueryableByName)]
struct Waits {
    /// Seconds until the contact's interval ends (NULL: it has ended).
    #[diesel(sql_type = Nullable<Double>)]
    contact_wait: Option<f64>,
    /// Seconds until a place under the organisation's cap frees (NULL: one is free).
    #[diesel(sql_type = Nullable<Double>)]
    cap_wait: Option<f64>,
}

/// Logs an email to `contact_id` of `org_id` if the limits allow one now
/// (`Ok(Ok(()))`), or says which limit holds and for how long (`Ok(Err(_))`,
/// nothing logged). `on_create`: the email sent when the contact is created.
pub async fn try_record(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    contact_id: i64,
    on_create: bool,
    limits: Limits,
) -> DbResult<Result<(), Refusal>> {
    conn.transaction(|c| {
        async move {
            // Serialises the decisions of one organisation. Each statement below
            // then reads with a fresh snapshot (READ COMMITTED), so it sees
            // what a transaction that held the lock before committed.
            crate::quotas::lock_organisation(c, org_id).await?;
            let cap = limits.daily_cap_per_user;
            let waits: Waits = diesel::sql_query(
                "SELECT
                   (SELECT EXTRACT(EPOCH FROM max(sent_at) + make_interval(secs => $3) - now())::float8
                      FROM verification_mail_log
                     WHERE contact_id = $2 AND NOT on_create
                       AND sent_at > now() - make_interval(secs => $3)) AS contact_wait,
                   (SELECT EXTRACT(EPOCH FROM sent_at + make_interval(secs => $5) - now())::float8
                      FROM verification_mail_log
                     WHERE org_id = $1 AND $4 > 0
                       AND sent_at > now() - make_interval(secs => $5)
                     ORDER BY sent_at DESC
                     OFFSET greatest($4 - 1, 0) LIMIT 1) AS cap_wait",
            )
            .bind::<BigInt, _>(org_id)
            .bind::<BigInt, _>(contact_id)
            .bind::<Double, _>(limits.per_contact_interval.as_secs_f64())
            .bind::<BigInt, _>(cap)
            .bind::<Double, _>(DAY.as_secs_f64())
            .get_result(c)
            .await?;
            let wait = |secs: f64| Duration::from_secs_f64(secs.max(0.0));
            if let Some(secs) = waits.contact_wait {
                return Ok(Err(Refusal::ContactInterval {
                    retry_after: wait(secs),
                }));
            }
            if let Some(secs) = waits.cap_wait {
                return Ok(Err(Refusal::DailyCap {
                    retry_after: wait(secs),
                }));
            }
            // The log's retention: rows older than both windows decide
            // nothing any more. Pruned here, under the organisation's lock, so an
            // organisation's log never holds more than its windows' worth of rows.
            diesel::sql_query(
                "DELETE FROM verification_mail_log
                  WHERE org_id = $1 AND sent_at < now() - make_interval(secs => greatest($2, $3))",
            )
            .bind::<BigInt, _>(org_id)
            .bind::<Double, _>(limits.per_contact_interval.as_secs_f64())
            .bind::<Double, _>(DAY.as_secs_f64())
            .execute(c)
            .await?;
            diesel::sql_query(
                "INSERT INTO verification_mail_log (org_id, contact_id, on_create)
                 VALUES ($1, $2, $3)",
            )
            .bind::<BigInt, _>(org_id)
            .bind::<BigInt, _>(contact_id)
            .bind::<Bool, _>(on_create)
            .execute(c)
            .await?;
            Ok::<_, crate::DbError>(Ok(()))
        }
        .scope_boxed()
    })
    .await
}
