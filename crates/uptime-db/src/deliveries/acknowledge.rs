//! Telling on-call providers about an acknowledgement: when an incident is
//! acknowledged (in the API or by an alert's signed link), one delivery of
//! kind `acknowledge` per PagerDuty or Opsgenie contact the incident was
//! sent to, written in the acknowledging transaction (so an acknowledgement
//! that commits is told, and one that does not is not). Its event id is
//! derived from the incident, so each such contact is told once.

use crate::DbResult;
use diesel::sql_types::Uuid as SqlUuid;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// `alert_deliveries.kind` of an acknowledgement told to a provider.
pub const KIND_ACKNOWLEDGE: &str = "acknowledge";
/// Its `event_type`.
pub const EVENT_TYPE: &str = "incident.acknowledged";

/// Writes the `acknowledge` deliveries of open incident `incident_id`, just
/// acknowledged: to every PagerDuty and Opsgenie contact that has an alert
/// delivery of one of the incident's events (`incidents.alerts`, served by
/// the unique (event, contact) index) or that a step of its escalation
/// notified. The payload is `uptime_alerts::AcknowledgeRequest`. A resolved
/// incident is closed at the provider already: nothing is written. Returns
/// the deliveries written.
pub async fn create_for_incident(conn: &mut AsyncPgConnection, incident_id: Uuid) -> DbResult<u64> {
    let n = diesel::sql_query(
        "INSERT INTO alert_deliveries (event_id, contact_id, monitor_id, kind, event_type, payload) \
         SELECT md5('acknowledge:' || i.id::text)::uuid, c.id, i.monitor_id, 'acknowledge', \
                'incident.acknowledged', \
                jsonb_build_object('incident_id', i.id, 'monitor_id', i.monitor_id, \
                                   'acknowledged_at', i.acknowledged_at, \
                                   'acknowledged_via', i.acknowledged_via) \
         FROM incidents i \
         JOIN alert_contacts c ON c.id IN ( \
           SELECT d.contact_id FROM alert_deliveries d \
           WHERE d.kind = 'alert' AND d.event_id IN ( \
             SELECT (a ->> 'event_id')::uuid FROM jsonb_array_elements(i.alerts) AS a) \
           UNION \
           SELECT unnest(ie.notified_contact_ids) FROM incident_escalations ie \
           WHERE ie.incident_id = i.id) \
         WHERE i.id = $1 AND i.resolved_at IS NULL AND i.acknowledged_at IS NOT NULL \
           AND c.type IN ('pagerduty', 'opsgenie') \
         ORDER BY c.id \
         ON CONFLICT (event_id, contact_id) DO NOTHING",
    )
    .bind::<SqlUuid, _>(incident_id)
    .execute(conn)
    .await?;
    Ok(n as u64)
}
