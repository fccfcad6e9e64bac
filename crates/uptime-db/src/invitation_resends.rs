//! Resending an invitation's email: a new token replaces the old one (only
//! its digest is stored, so the old token cannot be sent again), within
//! limits like those of verification emails, since both go to addresses
//! nobody has confirmed: at most one resend per invitation per `interval`,
//! and at most `daily_cap` per organisation in any 24 hours. Resends are
//! counted from the audit log (every resend writes one `resend` entry on
//! the invitation in the same transaction), so no table of their own is
//! needed and the audit log's retention (longer than a day) bounds them.

use crate::invitations::Invitation;
use crate::schema::invitations;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Double, Nullable};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::time::Duration;

/// The audit action a resend writes (and the limits count).
pub const RESEND_ACTION: &str = "resend";

/// Why a resend may not happen now, and when it may.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResendRefusal {
    /// The invitation was resent less than `interval` ago.
    Interval { retry_after: Duration },
    /// The organisation resent `daily_cap` in the last 24 hours.
    DailyCap { retry_after: Duration },
}

impl ResendRefusal {
    pub fn retry_after(&self) -> Duration {
        match *self {
            ResendRefusal::Interval { retry_after } | ResendRefusal::DailyCap { retry_after } => {
                retry_after
            }
        }
    }
}

#[derive(QueryableByName)]
struct Waits {
    #[diesel(sql_type = Nullable<Double>)]
    interval_wait: Option<f64>,
    #[diesel(sql_type = Nullable<Double>)]
    cap_wait: Option<f64>,
}

/// Whether invitation `id` of `org_id` may be resent now. Call it in the
/// transaction that reissues the token and writes the `resend` entry: it
/// locks the organisation's row, so concurrent resends are decided one
/// after the other and cannot both take the last place.
pub async fn check_limits(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    interval: Duration,
    daily_cap: i64,
) -> DbResult<Result<(), ResendRefusal>> {
    crate::quotas::lock_organisation(conn, org_id).await?;
    let waits: Waits = diesel::sql_query(
        "SELECT
           (SELECT EXTRACT(EPOCH FROM max(at) + make_interval(secs => $4) - now())::float8
              FROM audit_log
             WHERE org_id = $1 AND resource_kind = 'invitation' AND resource_id = $2
               AND action = $3 AND at > now() - make_interval(secs => $4)) AS interval_wait,
           (SELECT EXTRACT(EPOCH FROM at + interval '24 hours' - now())::float8
              FROM audit_log
             WHERE org_id = $1 AND resource_kind = 'invitation' AND action = $3 AND $5 > 0
               AND at > now() - interval '24 hours'
             ORDER BY at DESC
             OFFSET greatest($5 - 1, 0) LIMIT 1) AS cap_wait",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(id)
    .bind::<diesel::sql_types::Text, _>(RESEND_ACTION)
    .bind::<Double, _>(interval.as_secs_f64())
    .bind::<BigInt, _>(daily_cap)
    .get_result(conn)
    .await?;
    let wait = |secs: f64| Duration::from_secs_f64(secs.max(0.0));
    if let Some(secs) = waits.interval_wait {
        return Ok(Err(ResendRefusal::Interval {
            retry_after: wait(secs),
        }));
    }
    if let Some(secs) = waits.cap_wait {
        return Ok(Err(ResendRefusal::DailyCap {
            retry_after: wait(secs),
        }));
    }
    Ok(Ok(()))
}

/// Replaces the token of the organisation's open invitation `id` (the old
/// one stops working); `None` when there is no such open one at `now`.
pub async fn reissue_token(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    token_sha256: &str,
    now: DateTime<Utc>,
) -> DbResult<Option<Invitation>> {
    Ok(diesel::update(invitations::table)
        .filter(invitations::id.eq(id))
        .filter(invitations::org_id.eq(org_id))
        .filter(crate::invitations::open_at(now))
        .set(invitations::token_sha256.eq(token_sha256))
        .returning(Invitation::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}
