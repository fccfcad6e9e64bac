//! The one on-demand check a monitor may have in flight (`manual_checks`).
//! A check is in flight from the moment the api-gateway queues it until its
//! result is in `check_results` (for a round of several regions: until the
//! round is decided in `check_rounds`), or until `window` has passed (a lost check
//! must not block the monitor forever).

use crate::DbResult;
use chrono::{DateTime, TimeDelta, Utc};
use diesel::sql_types::{BigInt, Double, Timestamptz, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

#[derive(QueryableByName)]
struct Holder {
    #[diesel(sql_type = SqlUuid)]
    check_id: Uuid,
}

/// How much earlier than `window` ago a result of the holding check may be
/// slotted: its `slot_at` is the api-gateway's clock when it published the
/// check, its `queued_at` the database's when it claimed the slot.
const CLOCK_SKEW: TimeDelta = TimeDelta::hours(1);

/// Takes the monitor's slot for `check_id` unless another check holds it.
/// Returns the check that holds the slot afterwards: `check_id` when taken,
/// the earlier check's id otherwise. Safe against concurrent callers (the
/// conditional upsert locks the row; a loser re-reads the winner).
pub async fn claim(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    check_id: Uuid,
    window: std::time::Duration,
) -> DbResult<Uuid> {
    // The holder's result matters only while the holder is younger than
    // `window`, and a manual check's result is slotted when it was queued.
    // Bounding slot_at with a value lets PostgreSQL plan and probe only the
    // newest partitions of check_results instead of every one of them.
    let recent = TimeDelta::from_std(window)
        .ok()
        .and_then(|w| w.checked_add(&CLOCK_SKEW))
        .and_then(|w| Utc::now().checked_sub_signed(w))
        .unwrap_or(DateTime::UNIX_EPOCH);
    let taken: Vec<Holder> = diesel::sql_query(
        "INSERT INTO manual_checks (monitor_id, check_id, queued_at) VALUES ($1, $2, now())
         ON CONFLICT (monitor_id) DO UPDATE
            SET check_id = excluded.check_id, queued_at = excluded.queued_at
          WHERE manual_checks.queued_at < now() - make_interval(secs => $3)
             OR EXISTS (SELECT 1 FROM check_results r
                         WHERE r.check_id = manual_checks.check_id AND r.slot_at >= $4)
             -- A round of several regions (its id holds the slot, its
             -- checks have ids of their own) is done once decided.
             OR EXISTS (SELECT 1 FROM check_rounds cr
                         WHERE cr.round_id = manual_checks.check_id
                           AND cr.decided_at IS NOT NULL)
         RETURNING check_id",
    )
    .bind::<BigInt, _>(monitor_id)
    .bind::<SqlUuid, _>(check_id)
    .bind::<Double, _>(window.as_secs_f64())
    .bind::<Timestamptz, _>(recent)
    .load(conn)
    .await?;
    if let Some(holder) = taken.into_iter().next() {
        return Ok(holder.check_id);
    }
    let holder: Vec<Holder> =
        diesel::sql_query("SELECT check_id FROM manual_checks WHERE monitor_id = $1")
            .bind::<BigInt, _>(monitor_id)
            .load(conn)
            .await?;
    // Gone in between (the monitor was deleted): the caller's check stands.
    Ok(holder.into_iter().next().map_or(check_id, |h| h.check_id))
}

/// Frees the slot if `check_id` still holds it (its publish failed).
pub async fn release(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    check_id: Uuid,
) -> DbResult<()> {
    diesel::sql_query("DELETE FROM manual_checks WHERE monitor_id = $1 AND check_id = $2")
        .bind::<BigInt, _>(monitor_id)
        .bind::<SqlUuid, _>(check_id)
        .execute(conn)
        .await?;
    Ok(())
}
