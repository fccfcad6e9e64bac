//! Where the escalation of each incident stands (`incident_escalations`,
//! migration 000034), for the notifier's escalation sweep. The intake
//! starts an escalation (`deliveries::intake`); the sweep, in one
//! transaction per batch: locks the due ones ([`lock_due`], `FOR UPDATE
//! SKIP LOCKED`, so sweeps of several notifiers share the work), reads their
//! policies' steps ([`policy_steps`]), and writes what its planner decided
//! ([`apply`]: the step's deliveries and the new position, two statements
//! for the whole batch). A crash before the commit leaves everything as it
//! was; deliveries are unique per (event, contact) and a step's event id is
//! derived from (incident, round, step), so a step is delivered once.

use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{
    Array, BigInt, Bool, Int4, Nullable, SmallInt, Text, Timestamptz, Uuid as SqlUuid,
};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::collections::HashMap;
use uuid::Uuid;

/// How far an escalation got: the columns the sweep and the API read alike.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct EscalationStage {
    /// `None` once the policy was deleted.
    #[diesel(sql_type = Nullable<BigInt>)]
    pub policy_id: Option<i64>,
    /// The step notified last and its run of the policy.
    #[diesel(sql_type = SmallInt)]
    pub position: i16,
    #[diesel(sql_type = SmallInt)]
    pub round: i16,
    #[diesel(sql_type = Timestamptz)]
    pub notified_at: DateTime<Utc>,
}

/// An escalation whose next step is due, with its incident's state.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct DueEscalation {
    #[diesel(sql_type = SqlUuid)]
    pub incident_id: Uuid,
    #[diesel(embed)]
    pub stage: EscalationStage,
    #[diesel(sql_type = Bool)]
    pub acknowledged: bool,
    #[diesel(sql_type = Bool)]
    pub resolved: bool,
}

/// Locks up to `limit` escalations due at `now`, oldest first, skipping
/// those another sweep holds. Call inside a transaction: the locks hold
/// until it ends.
pub async fn lock_due(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    limit: i64,
) -> DbResult<Vec<DueEscalation>> {
    Ok(diesel::sql_query(
        "SELECT ie.incident_id, ie.policy_id, ie.position, ie.round, ie.notified_at, \
                i.acknowledged_at IS NOT NULL AS acknowledged, \
                i.resolved_at IS NOT NULL AS resolved \
         FROM incident_escalations ie \
         JOIN incidents i ON i.id = ie.incident_id \
         WHERE ie.next_at <= $1 \
         ORDER BY ie.next_at \
         LIMIT $2 \
         FOR UPDATE OF ie SKIP LOCKED",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?)
}

/// A policy's shape: its steps' delays (by position) and how many times it
/// runs again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicySteps {
    pub repeat_count: i16,
    /// `delays_secs[p]`: how long an incident waits on step `p`.
    pub delays_secs: Vec<i32>,
}

#[derive(QueryableByName)]
struct StepRow {
    #[diesel(sql_type = BigInt)]
    policy_id: i64,
    #[diesel(sql_type = SmallInt)]
    repeat_count: i16,
    #[diesel(sql_type = Int4)]
    delay_secs: i32,
}

/// The shapes of `policy_ids`' policies (one statement).
pub async fn policy_steps(
    conn: &mut AsyncPgConnection,
    policy_ids: &[i64],
) -> DbResult<HashMap<i64, PolicySteps>> {
    let rows: Vec<StepRow> = diesel::sql_query(
        "SELECT p.id AS policy_id, p.repeat_count, s.delay_secs \
         FROM escalation_policies p \
         JOIN escalation_steps s ON s.policy_id = p.id \
         WHERE p.id = ANY($1) \
         ORDER BY p.id, s.position",
    )
    .bind::<Array<BigInt>, _>(policy_ids)
    .load(conn)
    .await?;
    let mut shapes: HashMap<i64, PolicySteps> = HashMap::new();
    for row in rows {
        shapes
            .entry(row.policy_id)
            .or_insert_with(|| PolicySteps {
                repeat_count: row.repeat_count,
                delays_secs: Vec::new(),
            })
            .delays_secs
            .push(row.delay_secs);
    }
    Ok(shapes)
}

/// What happens to one escalation.
#[derive(Debug, Clone, PartialEq)]
pub struct EscalationUpdate {
    pub incident_id: Uuid,
    /// Notify step `position` of run `round` now, as event `event_id`.
    pub notify: Option<StepNotice>,
    /// The step notified last, its run and when (unchanged unless notifying).
    pub position: i16,
    pub round: i16,
    pub notified_at: DateTime<Utc>,
    /// When to look again; `None`: stopped, for `stopped`.
    pub next_at: Option<DateTime<Utc>>,
    pub stopped: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepNotice {
    pub event_id: Uuid,
}

/// The event type and severity (critical) of a step's deliveries: the step
/// is sent the alert that opened the incident, a down alert.
const STEP_EVENT_TYPE: &str = "monitor.down";
const STEP_SEVERITY: i16 = 2;

/// Writes `updates` (two statements): the deliveries of every step notified
/// (to its verified contacts of the monitor's organisation that want down
/// alerts; unique per (event, contact), so never twice), then the new
/// positions, adding the notified contacts to `notified_contact_ids`. Run in
/// the transaction of [`lock_due`]. Returns the deliveries written.
pub async fn apply(conn: &mut AsyncPgConnection, updates: &[EscalationUpdate]) -> DbResult<u64> {
    if updates.is_empty() {
        return Ok(0);
    }
    let notices: Vec<&EscalationUpdate> = updates.iter().filter(|u| u.notify.is_some()).collect();
    let mut created = 0;
    if !notices.is_empty() {
        let incident_ids: Vec<Uuid> = notices.iter().map(|u| u.incident_id).collect();
        let event_ids: Vec<Uuid> = notices
            .iter()
            .filter_map(|u| u.notify.map(|n| n.event_id))
            .collect();
        let positions: Vec<i16> = notices.iter().map(|u| u.position).collect();
        created = diesel::sql_query(
            "INSERT INTO alert_deliveries (event_id, contact_id, monitor_id, kind, event_type, payload) \
             SELECT n.event_id, c.id, ie.monitor_id, 'alert', $4, ie.payload \
             FROM unnest($1::uuid[], $2::uuid[], $3::smallint[]) WITH ORDINALITY \
                  AS n(incident_id, event_id, position, ord) \
             JOIN incident_escalations ie ON ie.incident_id = n.incident_id \
             JOIN escalation_step_contacts sc \
               ON sc.policy_id = ie.policy_id AND sc.position = n.position \
             JOIN alert_contacts c ON c.id = sc.contact_id \
             JOIN monitors m ON m.id = ie.monitor_id \
             WHERE c.verified AND c.org_id = m.org_id \
               AND (c.event_kinds IS NULL OR $4 = ANY(c.event_kinds)) \
               AND c.min_severity <= $5 \
             ORDER BY n.ord, c.id \
             ON CONFLICT (event_id, contact_id) DO NOTHING",
        )
        .bind::<Array<SqlUuid>, _>(&incident_ids)
        .bind::<Array<SqlUuid>, _>(&event_ids)
        .bind::<Array<SmallInt>, _>(&positions)
        .bind::<Text, _>(STEP_EVENT_TYPE)
        .bind::<SmallInt, _>(STEP_SEVERITY)
        .execute(conn)
        .await? as u64;
    }
    let incident_ids: Vec<Uuid> = updates.iter().map(|u| u.incident_id).collect();
    let notify: Vec<bool> = updates.iter().map(|u| u.notify.is_some()).collect();
    let positions: Vec<i16> = updates.iter().map(|u| u.position).collect();
    let rounds: Vec<i16> = updates.iter().map(|u| u.round).collect();
    let notified_at: Vec<DateTime<Utc>> = updates.iter().map(|u| u.notified_at).collect();
    let next_at: Vec<Option<DateTime<Utc>>> = updates.iter().map(|u| u.next_at).collect();
    let stopped: Vec<Option<&str>> = updates.iter().map(|u| u.stopped).collect();
    diesel::sql_query(
        "UPDATE incident_escalations ie \
         SET position = u.position, round = u.round, notified_at = u.notified_at, \
             next_at = u.next_at, stopped = u.stopped, \
             notified_contact_ids = CASE WHEN u.notify THEN ARRAY( \
               SELECT DISTINCT x FROM unnest(ie.notified_contact_ids || ARRAY( \
                 SELECT sc.contact_id FROM escalation_step_contacts sc \
                 WHERE sc.policy_id = ie.policy_id AND sc.position = u.position)) AS x ORDER BY x) \
               ELSE ie.notified_contact_ids END \
         FROM unnest($1::uuid[], $2::bool[], $3::smallint[], $4::smallint[], \
                     $5::timestamptz[], $6::timestamptz[], $7::text[]) \
              AS u(incident_id, notify, position, round, notified_at, next_at, stopped) \
         WHERE ie.incident_id = u.incident_id",
    )
    .bind::<Array<SqlUuid>, _>(&incident_ids)
    .bind::<Array<Bool>, _>(&notify)
    .bind::<Array<SmallInt>, _>(&positions)
    .bind::<Array<SmallInt>, _>(&rounds)
    .bind::<Array<Timestamptz>, _>(&notified_at)
    .bind::<Array<Nullable<Timestamptz>>, _>(&next_at)
    .bind::<Array<Nullable<Text>>, _>(&stopped)
    .execute(conn)
    .await?;
    Ok(created)
}

/// An incident's escalation as the API shows it.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct EscalationState {
    #[diesel(embed)]
    pub stage: EscalationStage,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub next_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Text>)]
    pub stopped: Option<String>,
    #[diesel(sql_type = Array<BigInt>)]
    pub notified_contact_ids: Vec<i64>,
}

/// Where incident `incident_id`'s escalation stands, if it has one.
pub async fn state_of(
    conn: &mut AsyncPgConnection,
    incident_id: Uuid,
) -> DbResult<Option<EscalationState>> {
    use diesel::OptionalExtension;
    Ok(diesel::sql_query(
        "SELECT policy_id, position, round, notified_at, next_at, stopped, notified_contact_ids \
         FROM incident_escalations WHERE incident_id = $1",
    )
    .bind::<SqlUuid, _>(incident_id)
    .get_result(conn)
    .await
    .optional()?)
}
