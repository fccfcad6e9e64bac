//! Incidents (migration 2026-11-27-000022): every confirmed down period of a
//! monitor. The recorder opens and resolves them in the transaction of the
//! state change ([`open`], [`resolve`]: one set-based statement each, run
//! only by a batch that has such changes); the api-gateway lists them,
//! reads one and acknowledges ([`list_page`], [`get`], [`acknowledge`]);
//! retention prunes resolved ones ([`delete_resolved_before`]).

use crate::reach::Reach;
use crate::schema::incidents;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = incidents)]
pub struct Incident {
    pub id: Uuid,
    pub org_id: i64,
    pub monitor_id: i64,
    pub started_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub cause: Option<String>,
    pub acknowledged_at: Option<DateTime<Utc>>,
    pub acknowledged_via: Option<String>,
    pub acknowledged_by_user_id: Option<i64>,
    pub acknowledged_by_key_prefix: Option<String>,
    pub acknowledged_by_contact_id: Option<i64>,
    /// [`IncidentAlert`]s, oldest first.
    pub alerts: serde_json::Value,
    /// Why its down alert is held now (`None`: it went out, or was released).
    pub alert_held: Option<String>,
    /// The monitors it depends on that were down (or failing) when it went down.
    pub blocked_by: Vec<i64>,
    /// How many dependents' alerts were held behind it when it went down.
    pub held_children: i32,
    pub reminders_sent: i32,
    /// When the next reminder is due (`None`: none will be sent).
    pub next_reminder_at: Option<DateTime<Utc>>,
}

impl Incident {
    /// The alerts as typed values (an entry that is not one is left out).
    pub fn alert_list(&self) -> Vec<IncidentAlert> {
        self.alerts
            .as_array()
            .map(|items| {
                items
                    .iter()
                    .filter_map(|v| serde_json::from_value(v.clone()).ok())
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// One event of an incident, as kept in `incidents.alerts`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentAlert {
    pub event_id: Uuid,
    /// `transition`, `reminder`, `flapping` or `released`.
    pub kind: String,
    /// The status the event reports (`down`, `up`, `degraded`).
    pub status: String,
    pub at: DateTime<Utc>,
    /// Why no alert went out for it, when it was held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
}

/// An incident the recorder opens. `resolved_at` is set when the same batch
/// also ended it (a statement cannot insert and then update one row).
#[derive(Debug, Clone, PartialEq)]
pub struct NewIncident {
    pub id: Uuid,
    pub org_id: i64,
    pub monitor_id: i64,
    pub started_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
    pub cause: Option<String>,
    pub alerts: Vec<IncidentAlert>,
}

/// An incident the recorder ends, with the alerts to add to it.
#[derive(Debug, Clone, PartialEq)]
pub struct IncidentEnd {
    pub id: Uuid,
    pub monitor_id: i64,
    pub resolved_at: DateTime<Utc>,
    pub alerts: Vec<IncidentAlert>,
}

fn alerts_json(alerts: &[IncidentAlert]) -> serde_json::Value {
    // Plain data always serialises.
    serde_json::to_value(alerts).expect("alerts serialise")
}

/// Opens `new` incidents (a redelivered batch's are there already: kept).
/// A monitor's open incident left from before (its state was reset, or the
/// change out of `down` was never recorded) is resolved first, at the new
/// one's start: at most one incident of a monitor is open.
pub async fn open(conn: &mut AsyncPgConnection, new: &[NewIncident]) -> DbResult<()> {
    if new.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = new.iter().map(|n| n.id).collect();
    let monitors: Vec<i64> = new.iter().map(|n| n.monitor_id).collect();
    let started: Vec<DateTime<Utc>> = new.iter().map(|n| n.started_at).collect();
    diesel::sql_query(
        "UPDATE incidents i SET resolved_at = GREATEST(i.started_at, n.started_at) \
         FROM UNNEST($1::uuid[], $2::bigint[], $3::timestamptz[]) AS n(id, monitor_id, started_at) \
         WHERE i.monitor_id = n.monitor_id AND i.resolved_at IS NULL AND i.id <> n.id",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(&ids)
    .bind::<Array<BigInt>, _>(&monitors)
    .bind::<Array<Timestamptz>, _>(&started)
    .execute(conn)
    .await?;
    let orgs: Vec<i64> = new.iter().map(|n| n.org_id).collect();
    let resolved: Vec<Option<DateTime<Utc>>> = new.iter().map(|n| n.resolved_at).collect();
    let causes: Vec<Option<String>> = new.iter().map(|n| n.cause.clone()).collect();
    let alerts: Vec<serde_json::Value> = new.iter().map(|n| alerts_json(&n.alerts)).collect();
    diesel::sql_query(
        "INSERT INTO incidents (id, org_id, monitor_id, started_at, resolved_at, cause, alerts) \
         SELECT * FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::timestamptz[], \
             $5::timestamptz[], $6::text[], $7::jsonb[]) \
         ON CONFLICT (id) DO NOTHING",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(&ids)
    .bind::<Array<BigInt>, _>(&orgs)
    .bind::<Array<BigInt>, _>(&monitors)
    .bind::<Array<Timestamptz>, _>(&started)
    .bind::<Array<Nullable<Timestamptz>>, _>(&resolved)
    .bind::<Array<Nullable<Text>>, _>(&causes)
    .bind::<Array<Jsonb>, _>(&alerts)
    .execute(conn)
    .await?;
    Ok(())
}

/// Resolves `ends` and adds their alerts. An incident resolved already (a
/// redelivered batch) is left alone.
pub async fn resolve(conn: &mut AsyncPgConnection, ends: &[IncidentEnd]) -> DbResult<()> {
    if ends.is_empty() {
        return Ok(());
    }
    let ids: Vec<Uuid> = ends.iter().map(|e| e.id).collect();
    let at: Vec<DateTime<Utc>> = ends.iter().map(|e| e.resolved_at).collect();
    let alerts: Vec<serde_json::Value> = ends.iter().map(|e| alerts_json(&e.alerts)).collect();
    diesel::sql_query(
        "UPDATE incidents i SET resolved_at = e.resolved_at, alerts = i.alerts || e.alerts \
         FROM UNNEST($1::uuid[], $2::timestamptz[], $3::jsonb[]) AS e(id, resolved_at, alerts) \
         WHERE i.id = e.id AND i.resolved_at IS NULL",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(&ids)
    .bind::<Array<Timestamptz>, _>(&at)
    .bind::<Array<Jsonb>, _>(&alerts)
    .execute(conn)
    .await?;
    Ok(())
}

/// Which incidents a list keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncidentState {
    /// Open and not acknowledged.
    Open,
    /// Open and acknowledged.
    Acknowledged,
    Resolved,
}

/// What [`list_page`] keeps; `None` keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IncidentFilter {
    pub state: Option<IncidentState>,
    pub monitor_id: Option<i64>,
}

/// The incidents of the monitors `reach` covers (`None`: every
/// organisation's, for a signed link, which names the incident itself).
fn reached(reach: Option<Reach<'_>>) -> incidents::BoxedQuery<'_, diesel::pg::Pg> {
    let mut query = incidents::table.into_boxed();
    if let Some(reach) = reach {
        query = query.filter(incidents::org_id.eq(reach.org_id));
        if reach.is_limited() {
            query = query.filter(incidents::monitor_id.eq_any(reach.monitor_ids()));
        }
    }
    query
}

/// Up to `limit` of the incidents of the monitors the caller reaches
/// matching `filter`, newest first by start (then id), those after the
/// cursor `after` (the last item of the previous page) when given.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    filter: &IncidentFilter,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> DbResult<Vec<Incident>> {
    let mut query = reached(Some(reach));
    if let Some((started, id)) = after {
        query = query.filter(
            incidents::started_at
                .lt(started)
                .or(incidents::started_at.eq(started).and(incidents::id.lt(id))),
        );
    }
    if let Some(monitor) = filter.monitor_id {
        query = query.filter(incidents::monitor_id.eq(monitor));
    }
    match filter.state {
        None => {}
        Some(IncidentState::Open) => {
            query = query
                .filter(incidents::resolved_at.is_null())
                .filter(incidents::acknowledged_at.is_null());
        }
        Some(IncidentState::Acknowledged) => {
            query = query
                .filter(incidents::resolved_at.is_null())
                .filter(incidents::acknowledged_at.is_not_null());
        }
        Some(IncidentState::Resolved) => {
            query = query.filter(incidents::resolved_at.is_not_null());
        }
    }
    Ok(query
        .order((incidents::started_at.desc(), incidents::id.desc()))
        .limit(limit)
        .select(Incident::as_select())
        .load(conn)
        .await?)
}

/// Incident `id`, if the caller reaches its monitor (`None`: any
/// organisation's, for a signed link).
pub async fn get(
    conn: &mut AsyncPgConnection,
    reach: Option<Reach<'_>>,
    id: Uuid,
) -> DbResult<Option<Incident>> {
    Ok(reached(reach)
        .filter(incidents::id.eq(id))
        .select(Incident::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Who acknowledges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Acknowledger {
    /// An API key: its holder and prefix.
    Key { user_id: i64, key_prefix: String },
    /// The signed link in an alert sent to this contact.
    Link { contact_id: i64 },
}

/// How [`acknowledge`] ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Acknowledged {
    /// Acknowledged now.
    Now(Incident),
    /// Acknowledged before (kept as it was: the first acknowledgement
    /// stands).
    Already(Incident),
    /// No such incident (of this organisation, when one is given).
    NotFound,
}

/// Acknowledges incident `id` if the caller reaches its monitor (`None`:
/// any organisation's, for a signed link, which names the incident itself)
/// at `at`. Resolved
/// incidents can be acknowledged too (someone looked at it). The first
/// acknowledgement of an open incident also writes the deliveries that tell
/// its PagerDuty and Opsgenie contacts ([`crate::deliveries::acknowledge`]):
/// call it inside a transaction.
pub async fn acknowledge(
    conn: &mut AsyncPgConnection,
    reach: Option<Reach<'_>>,
    id: Uuid,
    by: &Acknowledger,
    at: DateTime<Utc>,
) -> DbResult<Acknowledged> {
    let (via, user, prefix, contact) = match by {
        Acknowledger::Key {
            user_id,
            key_prefix,
        } => ("api", Some(*user_id), Some(key_prefix.clone()), None),
        Acknowledger::Link { contact_id } => ("link", None, None, Some(*contact_id)),
    };
    let values = (
        incidents::acknowledged_at.eq(at),
        incidents::acknowledged_via.eq(via),
        incidents::acknowledged_by_user_id.eq(user),
        incidents::acknowledged_by_key_prefix.eq(prefix),
        incidents::acknowledged_by_contact_id.eq(contact),
    );
    // An update cannot take a boxed query: the row is picked by a subquery.
    let picked = reached(reach)
        .filter(incidents::id.eq(id))
        .filter(incidents::acknowledged_at.is_null())
        .select(incidents::id);
    let updated: Option<Incident> = diesel::update(incidents::table)
        .filter(incidents::id.eq_any(picked))
        .set(values)
        .returning(Incident::as_returning())
        .get_result(conn)
        .await
        .optional()?;
    if let Some(incident) = updated {
        // In the caller's transaction: the providers are told exactly when
        // the acknowledgement commits.
        crate::deliveries::acknowledge::create_for_incident(conn, incident.id).await?;
        return Ok(Acknowledged::Now(incident));
    }
    Ok(match get(conn, reach, id).await? {
        Some(incident) => Acknowledged::Already(incident),
        None => Acknowledged::NotFound,
    })
}

crate::retention::delete_batch_fn! {
    /// Deletes up to `limit` incidents resolved before `before`; how many went.
    pub fn delete_resolved_before(before): "incidents" where "resolved_at < $1"
}
