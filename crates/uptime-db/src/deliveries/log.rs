//! The delivery log users read: a contact's deliveries, or one event's,
//! each with its attempts.

use super::{AlertDelivery, DeliveryAttempt};
use crate::schema::{alert_deliveries, alert_delivery_attempts};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// The contact's deliveries, newest first, each with its attempts (oldest first).
pub async fn list_for_contact(
    conn: &mut AsyncPgConnection,
    contact_id: i64,
    limit: i64,
) -> DbResult<Vec<(AlertDelivery, Vec<DeliveryAttempt>)>> {
    page_for_contact(conn, contact_id, None, None, limit).await
}

/// At most `limit` of the contact's deliveries, newest first (by
/// `created_at`, then `id`), those after `after` (a delivery's `created_at`
/// and `id`) in that order; each with its attempts (oldest first). With
/// `reach`, only those about no monitor (tests, verification emails) or
/// about a monitor it covers.
pub async fn page_for_contact(
    conn: &mut AsyncPgConnection,
    contact_id: i64,
    reach: Option<crate::reach::Reach<'_>>,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> DbResult<Vec<(AlertDelivery, Vec<DeliveryAttempt>)>> {
    let mut query = alert_deliveries::table
        .filter(alert_deliveries::contact_id.eq(contact_id))
        .into_boxed();
    if let Some(reach) = reach.filter(|r| r.is_limited()) {
        query = query.filter(
            alert_deliveries::monitor_id
                .is_null()
                .or(alert_deliveries::monitor_id
                    .assume_not_null()
                    .eq_any(reach.monitor_ids())),
        );
    }
    if let Some((at, id)) = after {
        query = query.filter(
            alert_deliveries::created_at
                .lt(at)
                .or(alert_deliveries::created_at
                    .eq(at)
                    .and(alert_deliveries::id.lt(id))),
        );
    }
    let deliveries: Vec<AlertDelivery> = query
        .order((
            alert_deliveries::created_at.desc(),
            alert_deliveries::id.desc(),
        ))
        .limit(limit)
        .select(AlertDelivery::as_select())
        .load(conn)
        .await?;
    with_attempts(conn, deliveries).await
}

/// Every delivery of one event (any contact), oldest first, with attempts.
pub async fn list_for_event(
    conn: &mut AsyncPgConnection,
    event_id: Uuid,
) -> DbResult<Vec<(AlertDelivery, Vec<DeliveryAttempt>)>> {
    let deliveries: Vec<AlertDelivery> = alert_deliveries::table
        .filter(alert_deliveries::event_id.eq(event_id))
        .order(alert_deliveries::created_at.asc())
        .select(AlertDelivery::as_select())
        .load(conn)
        .await?;
    with_attempts(conn, deliveries).await
}

async fn with_attempts(
    conn: &mut AsyncPgConnection,
    deliveries: Vec<AlertDelivery>,
) -> DbResult<Vec<(AlertDelivery, Vec<DeliveryAttempt>)>> {
    let ids: Vec<Uuid> = deliveries.iter().map(|d| d.id).collect();
    let attempts: Vec<DeliveryAttempt> = alert_delivery_attempts::table
        .filter(alert_delivery_attempts::delivery_id.eq_any(ids))
        .order(alert_delivery_attempts::id.asc())
        .select(DeliveryAttempt::as_select())
        .load(conn)
        .await?;
    Ok(deliveries
        .into_iter()
        .map(|d| {
            let mine = attempts
                .iter()
                .filter(|a| a.delivery_id == d.id)
                .cloned()
                .collect();
            (d, mine)
        })
        .collect())
}
