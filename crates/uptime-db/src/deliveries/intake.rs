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
//!
//! Escalation policies (migration 000034): a monitor with a policy has its
//! policy's first step as its contacts (one more primary-key probe per
//! event, of `monitor_escalation_policies`); an event that opens an
//! incident of such a monitor also starts the incident's escalation
//! (`incident_escalations`, advanced by the notifier's sweep), and an event
//! naming an incident (the recovery, a reminder) also reaches every contact
//! a later step notified.

use crate::DbResult;
use diesel::sql_types::{Array, BigInt, Bool, Nullable, SmallInt, Text, Uuid as SqlUuid};
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
    /// The incident the event opens or ends (state-changed v4).
    pub incident_id: Option<Uuid>,
    /// The event asks for the incident to be acknowledged (a down alert):
    /// with a policy, it starts the escalation.
    pub escalates: bool,
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
    /// Incidents whose escalation started now.
    #[diesel(sql_type = BigInt)]
    pub escalations_started: i64,
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
    let incident_ids: Vec<Option<Uuid>> = events.iter().map(|e| e.incident_id).collect();
    let escalates: Vec<bool> = events.iter().map(|e| e.escalates).collect();
    // One statement: the contact selection and the insert see the same
    // snapshot. `linked` is materialized so that the events are first
    // matched against `monitor_alert_contacts` (its primary key leads with
    // `monitor_id`) whatever the planner estimates: only events with a link
    // go on to read their monitor and contacts. The insert's source is sorted
    // (a sorted subquery is never flattened), and `seq`'s default is
    // evaluated above the sort, row by row in that order.
    //
    // Contacts come from three links, each probed by a primary key: the
    // monitor's own contacts, the first step of its escalation policy, and
    // (events naming an incident) the contacts later steps notified. An
    // escalating event of a policy monitor starts its incident's escalation
    // in the same statement: step 0 is notified now, step 1 is due after
    // step 0's delay (the sweep reads the delays again when it is due). The
    // incident is joined so an event whose incident is gone (its monitor
    // deleted) starts nothing instead of failing for ever.
    let outcome = diesel::sql_query(
        "WITH events AS ( \
           SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::smallint[], \
                                $6::uuid[], $7::bool[]) \
             WITH ORDINALITY AS e(event_id, monitor_id, event_type, payload, severity, \
                                  incident_id, escalates, ord)), \
         linked AS MATERIALIZED ( \
           SELECT e.ord, e.event_id, e.monitor_id, mac.contact_id, e.event_type, e.payload, \
                  e.severity \
           FROM events e \
           JOIN monitor_alert_contacts mac ON mac.monitor_id = e.monitor_id \
           UNION \
           SELECT e.ord, e.event_id, e.monitor_id, sc.contact_id, e.event_type, e.payload, \
                  e.severity \
           FROM events e \
           JOIN monitor_escalation_policies mep ON mep.monitor_id = e.monitor_id \
           JOIN escalation_step_contacts sc ON sc.policy_id = mep.policy_id AND sc.position = 0 \
           UNION \
           SELECT e.ord, e.event_id, e.monitor_id, n.contact_id, e.event_type, e.payload, \
                  e.severity \
           FROM events e \
           JOIN incident_escalations ie ON ie.incident_id = e.incident_id \
           CROSS JOIN LATERAL unnest(ie.notified_contact_ids) AS n(contact_id)), \
         targets AS ( \
           SELECT l.ord, l.event_id, c.id AS contact_id, m.id AS monitor_id, \
                  l.event_type, l.payload \
           FROM linked l \
           JOIN monitors m ON m.id = l.monitor_id \
           JOIN alert_contacts c ON c.id = l.contact_id \
           WHERE m.active AND c.verified AND c.org_id = m.org_id \
             AND (c.event_kinds IS NULL OR l.event_type = ANY(c.event_kinds)) \
             AND l.severity >= c.min_severity), \
         escalations AS ( \
           INSERT INTO incident_escalations \
             (incident_id, policy_id, monitor_id, payload, position, round, notified_at, \
              next_at, notified_contact_ids) \
           SELECT i.id, mep.policy_id, e.monitor_id, e.payload::jsonb, 0, 0, opened.at, \
                  opened.at + make_interval(secs => s.delay_secs), \
                  ARRAY(SELECT sc.contact_id FROM escalation_step_contacts sc \
                        WHERE sc.policy_id = mep.policy_id AND sc.position = 0) \
           FROM events e \
           JOIN monitor_escalation_policies mep ON mep.monitor_id = e.monitor_id \
           JOIN incidents i ON i.id = e.incident_id \
           JOIN escalation_steps s ON s.policy_id = mep.policy_id AND s.position = 0 \
           CROSS JOIN LATERAL (SELECT COALESCE((e.payload::jsonb ->> 'occurred_at')::timestamptz, \
                                               now()) AS at) opened \
           WHERE e.escalates \
           ON CONFLICT (incident_id) DO NOTHING \
           RETURNING 1), \
         created AS ( \
           INSERT INTO alert_deliveries (event_id, contact_id, monitor_id, kind, event_type, payload) \
           SELECT event_id, contact_id, monitor_id, 'alert', event_type, payload::jsonb \
           FROM targets ORDER BY ord, contact_id \
           ON CONFLICT (event_id, contact_id) DO NOTHING \
           RETURNING 1) \
         SELECT (SELECT count(DISTINCT event_id) FROM targets) AS with_contacts, \
                (SELECT count(*) FROM created) AS created, \
                (SELECT count(*) FROM escalations) AS escalations_started",
    )
    .bind::<Array<SqlUuid>, _>(&event_ids)
    .bind::<Array<BigInt>, _>(&monitor_ids)
    .bind::<Array<Text>, _>(&event_types)
    .bind::<Array<Text>, _>(&payloads)
    .bind::<Array<SmallInt>, _>(&severities)
    .bind::<Array<Nullable<SqlUuid>>, _>(&incident_ids)
    .bind::<Array<Bool>, _>(&escalates)
    .get_result::<IntakeOutcome>(conn)
    .await?;
    Ok(outcome)
}
