//! The notifier's intake: events in, one pending `alert` delivery per
//! (event, verified contact of its active monitor) out, for a whole batch of
//! events in one statement.
//!
//! Most events have nobody to tell (a monitor without contacts, such as the
//! million `pending → up` events of a bulk import), so the statement starts
//! from the events' monitors' links to contacts: an event without any costs
//! one probe of `monitor_alert_contacts`' primary key (its monitor's row is
//! not read), and its payload is never parsed (it travels as text and
//! becomes JSONB only for a delivery).

use crate::DbResult;
use diesel::sql_types::{Array, BigInt, SmallInt, Text, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// One event to turn into deliveries.
#[derive(Debug, Clone)]
pub struct IntakeEvent {
    pub event_id: Uuid,
    /// The monitor whose contacts are told.
    pub monitor_id: i64,
    /// `alert_deliveries.event_type`, e.g. `monitor.up`.
    pub event_type: String,
    /// The deliveries' payload, as JSON text.
    pub payload: String,
    /// 0 info, 1 warning, 2 critical: contacts with a higher
    /// `min_severity` are not told.
    pub severity: i16,
}

/// What a batch of events became.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, QueryableByName)]
pub struct IntakeOutcome {
    /// Events that have at least one contact to tell (their deliveries may
    /// exist already, for a redelivered event).
    #[diesel(sql_type = BigInt)]
    pub with_contacts: i64,
    /// Deliveries written now; pairs that existed already are not counted.
    #[diesel(sql_type = BigInt)]
    pub created: i64,
}

/// Writes one `alert` delivery per (event, verified contact attached to the
/// event's active monitor that wants the event's kind and severity) for
/// every event of `events`, in one statement;
/// pairs that exist already are left alone, so a redelivered batch adds
/// nothing.
///
/// Deliveries are numbered (`seq`, which the worker sends a contact's
/// deliveries in) in the order of `events`, then by contact: pass one
/// monitor's events in stream order and its contacts get them in that order.
pub async fn create_for_events(
    conn: &mut AsyncPgConnection,
    events: &[IntakeEvent],
) -> DbResult<IntakeOutcome> {
    if events.is_empty() {
        return Ok(IntakeOutcome::default());
    }
    let event_ids: Vec<Uuid> = events.iter().map(|e| e.event_id).collect();
    let monitor_ids: Vec<i64> = events.iter().map(|e| e.monitor_id).collect();
    let event_types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    let payloads: Vec<&str> = events.iter().map(|e| e.payload.as_str()).collect();
    let severities: Vec<i16> = events.iter().map(|e| e.severity).collect();
    // One statement: the contact selection and the insert see the same
    // snapshot. `linked` is materialized so that the events are first
    // matched against `monitor_alert_contacts` (its primary key leads with
    // `monitor_id`) whatever the planner estimates: only events with a link
    // go on to read their monitor and contacts. The insert's source is sorted
    // (a sorted subquery is never flattened), and `seq`'s default is
    // evaluated above the sort, row by row in that order.
    let outcome = diesel::sql_query(
        "WITH events AS ( \
           SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::smallint[]) \
             WITH ORDINALITY AS e(event_id, monitor_id, event_type, payload, severity, ord)), \
         linked AS MATERIALIZED ( \
           SELECT e.ord, e.event_id, e.monitor_id, mac.contact_id, e.event_type, e.payload, \
                  e.severity \
           FROM events e \
           JOIN monitor_alert_contacts mac ON mac.monitor_id = e.monitor_id), \
         targets AS ( \
           SELECT l.ord, l.event_id, c.id AS contact_id, m.id AS monitor_id, \
                  l.event_type, l.payload \
           FROM linked l \
           JOIN monitors m ON m.id = l.monitor_id \
           JOIN alert_contacts c ON c.id = l.contact_id \
           WHERE m.active AND c.verified AND c.org_id = m.org_id \
             AND (c.event_kinds IS NULL OR l.event_type = ANY(c.event_kinds)) \
             AND l.severity >= c.min_severity), \
         created AS ( \
           INSERT INTO alert_deliveries (event_id, contact_id, monitor_id, kind, event_type, payload) \
           SELECT event_id, contact_id, monitor_id, 'alert', event_type, payload::jsonb \
           FROM targets ORDER BY ord, contact_id \
           ON CONFLICT (event_id, contact_id) DO NOTHING \
           RETURNING 1) \
         SELECT (SELECT count(DISTINCT event_id) FROM targets) AS with_contacts, \
                (SELECT count(*) FROM created) AS created",
    )
    .bind::<Array<SqlUuid>, _>(&event_ids)
    .bind::<Array<BigInt>, _>(&monitor_ids)
    .bind::<Array<Text>, _>(&event_types)
    .bind::<Array<Text>, _>(&payloads)
    .bind::<Array<SmallInt>, _>(&severities)
    .get_result::<IntakeOutcome>(conn)
    .await?;
    Ok(outcome)
}
