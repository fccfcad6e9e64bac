//! Incidents: every confirmed down period of a monitor (the recorder opens
//! and resolves them). `GET /api/v1/incidents` lists them newest first,
//! filtered by state and monitor; `GET /api/v1/incidents/{id}` reads one;
//! `POST /api/v1/incidents/{id}/acknowledge` acknowledges one with a key
//! (an audit entry in the same transaction). The signed link in alerts is
//! `incident_links`'.

use crate::access::auth::AuthUser;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, FieldError};
use crate::http::validation::{list_body, Keyset, ListBody, DEFAULT_PAGE_SIZE};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use uptime_db::incidents::{self as db, Acknowledged, Acknowledger, Incident, IncidentState};
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

pub fn routes() -> Routes {
    routes![list: READ, get: READ, acknowledge: WRITE]
}

/// Where an incident stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IncidentStateName {
    /// The monitor is down and nobody acknowledged it.
    Open,
    /// The monitor is down and someone acknowledged it.
    Acknowledged,
    /// The monitor is no longer down.
    Resolved,
}

impl From<IncidentStateName> for IncidentState {
    fn from(s: IncidentStateName) -> Self {
        match s {
            IncidentStateName::Open => IncidentState::Open,
            IncidentStateName::Acknowledged => IncidentState::Acknowledged,
            IncidentStateName::Resolved => IncidentState::Resolved,
        }
    }
}

/// The filters and the page of `GET /api/v1/incidents`; they combine (AND).
#[derive(Debug, Default, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct IncidentQuery {
    /// Incidents per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the first page.
    pub cursor: Option<String>,
    /// Only incidents in this state. Read as text, so an unknown value is
    /// a 400 naming `state` (serde's message would name the query).
    #[param(value_type = Option<IncidentStateName>)]
    pub state: Option<String>,
    /// Only incidents of this monitor.
    #[param(minimum = 1)]
    pub monitor_id: Option<i64>,
}

/// How an incident was acknowledged.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AcknowledgedVia {
    /// With an API key.
    Api,
    /// With the signed link of an alert.
    Link,
}

/// What an incident's event said.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum IncidentAlertKind {
    Transition,
    Reminder,
    Flapping,
    Released,
}

/// Why an incident's event raised no alert.
#[derive(Debug, Clone, Copy, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum HeldReason {
    BlockedByParent,
    Flapping,
    Maintenance,
}

/// Who acknowledged an incident, and how.
#[derive(Debug, Serialize, ToSchema)]
pub struct AcknowledgementResponse {
    pub at: DateTime<Utc>,
    /// `api` (with a key) or `link` (the signed link of an alert).
    #[schema(value_type = AcknowledgedVia)]
    pub via: String,
    /// `api`: the key's holder.
    pub user_id: Option<i64>,
    /// `api`: the first characters of the key used.
    pub key_prefix: Option<String>,
    /// `link`: the alert contact the link was sent to.
    pub contact_id: Option<i64>,
}

/// One event of the incident: the alert that went out, or was held.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncidentAlertResponse {
    pub event_id: Uuid,
    /// `transition`, `reminder`, `flapping` or `released`.
    #[schema(value_type = IncidentAlertKind)]
    pub kind: String,
    /// The status the event reported.
    #[schema(value_type = crate::routes::monitors::MonitorStatus)]
    pub status: String,
    pub at: DateTime<Utc>,
    /// Why no alert went out, when it was held (`blocked_by_parent`,
    /// `flapping`, `maintenance`).
    #[schema(value_type = Option<HeldReason>)]
    pub held: Option<String>,
}

/// A confirmed down period of a monitor.
#[derive(Debug, Serialize, ToSchema)]
pub struct IncidentResponse {
    pub id: Uuid,
    pub monitor_id: i64,
    pub state: IncidentStateName,
    /// When the outage was confirmed (the monitor turned `down`).
    pub started_at: DateTime<Utc>,
    /// When the monitor turned `up` or `degraded` again.
    pub resolved_at: Option<DateTime<Utc>>,
    /// The error of the check that confirmed the outage.
    pub cause: Option<String>,
    pub acknowledged: Option<AcknowledgementResponse>,
    /// The incident's events, oldest first.
    pub alerts: Vec<IncidentAlertResponse>,
    /// Why its down alert is held now (`null`: it went out, or was
    /// released): `blocked_by_parent`, `flapping` or `maintenance`.
    #[schema(value_type = Option<HeldReason>)]
    pub alert_held: Option<String>,
    /// The monitors it depends on that were down (or failing) when it went
    /// down: its alerts waited for them.
    pub blocked_by: Vec<i64>,
    /// How many monitors depending on this one had their alerts held
    /// behind it when it went down.
    pub held_children: i32,
    /// Reminders sent so far (the monitor's `reminder_interval_secs`).
    pub reminders_sent: i32,
    /// When the next reminder is due (`null`: none will be sent: no
    /// reminders, the last one went, acknowledged, resolved or held).
    pub next_reminder_at: Option<DateTime<Utc>>,
}

impl From<Incident> for IncidentResponse {
    fn from(i: Incident) -> Self {
        let state = if i.resolved_at.is_some() {
            IncidentStateName::Resolved
        } else if i.acknowledged_at.is_some() {
            IncidentStateName::Acknowledged
        } else {
            IncidentStateName::Open
        };
        let alerts = i
            .alert_list()
            .into_iter()
            .map(|a| IncidentAlertResponse {
                event_id: a.event_id,
                kind: a.kind,
                status: a.status,
                at: a.at,
                held: a.held,
            })
            .collect();
        Self {
            id: i.id,
            monitor_id: i.monitor_id,
            state,
            started_at: i.started_at,
            resolved_at: i.resolved_at,
            cause: i.cause,
            acknowledged: i.acknowledged_at.map(|at| AcknowledgementResponse {
                at,
                via: i.acknowledged_via.unwrap_or_default(),
                user_id: i.acknowledged_by_user_id,
                key_prefix: i.acknowledged_by_key_prefix,
                contact_id: i.acknowledged_by_contact_id,
            }),
            alerts,
            alert_held: i.alert_held,
            blocked_by: i.blocked_by,
            held_children: i.held_children,
            reminders_sent: i.reminders_sent,
            // Acknowledged or resolved: no more are sent, whatever is stored.
            next_reminder_at: i
                .next_reminder_at
                .filter(|_| i.acknowledged_at.is_none() && i.resolved_at.is_none()),
        }
    }
}

list_body!(older IncidentList, incidents: IncidentResponse);

/// `incidents` as the caller is shown them: `blocked_by` names only the
/// monitors the caller reaches (a monitor it reaches may depend on one a
/// key without a selector linked it to).
async fn shown(
    conn: &mut diesel_async::AsyncPgConnection,
    user: &AuthUser,
    mut incidents: Vec<Incident>,
) -> Result<Vec<IncidentResponse>, ApiError> {
    let reach = user.reach();
    if reach.is_limited() {
        let named: Vec<i64> = incidents
            .iter()
            .flat_map(|i| i.blocked_by.clone())
            .collect();
        let reached = reach.reached_among(conn, &named).await?;
        for incident in &mut incidents {
            incident.blocked_by.retain(|id| reached.contains(id));
        }
    }
    Ok(incidents.into_iter().map(Into::into).collect())
}

/// The incident id in a path: one that is not a UUID names no incident.
pub fn incident_id(text: &str) -> Result<Uuid, ApiError> {
    Uuid::parse_str(text).map_err(|_| ApiError::NotFound)
}

/// The organisation's incidents, newest first.
#[utoipa::path(get, path = "/api/v1/incidents", operation_id = "listIncidents", tag = "incidents",
    params(IncidentQuery), responses((status = 200, body = IncidentList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<IncidentQuery>,
) -> Result<HttpResponse, ApiError> {
    let query = query.into_inner();
    let page = Keyset::parse(query.limit, query.cursor.as_deref(), DEFAULT_PAGE_SIZE)?;
    if query.monitor_id.is_some_and(|id| id < 1) {
        return Err(ApiError::InvalidQuery(vec![FieldError::new(
            "monitor_id",
            "must be a monitor id (at least 1)",
        )]));
    }
    let state_filter = match query.state.as_deref() {
        None => None,
        Some(text) => Some(
            serde_json::from_value::<IncidentStateName>(serde_json::Value::from(text)).map_err(
                |_| {
                    ApiError::InvalidQuery(vec![FieldError::new(
                        "state",
                        "must be open, acknowledged or resolved",
                    )])
                },
            )?,
        ),
    };
    let filter = db::IncidentFilter {
        state: state_filter.map(Into::into),
        monitor_id: query.monitor_id,
    };
    let mut conn = state.conn().await?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| db::list_page(&mut conn, user.reach(), &filter, after, n),
            |i| (i.started_at, i.id),
        )
        .await?;
    let incidents = shown(&mut conn, &user, rows).await?;
    Ok(HttpResponse::Ok().json(IncidentList::of(incidents, next_cursor)))
}

/// One incident of the organisation.
#[utoipa::path(get, path = "/api/v1/incidents/{id}", operation_id = "getIncident", tag = "incidents",
    params(("id" = Uuid, Path, description = "Incident id")),
    responses((status = 200, body = IncidentResponse)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = incident_id(&id)?;
    let mut conn = state.conn().await?;
    let incident = db::get(&mut conn, Some(user.reach()), id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let shown = shown(&mut conn, &user, vec![incident]).await?;
    Ok(HttpResponse::Ok().json(&shown[0]))
}

/// Acknowledge an incident: someone is on it. Reminders stop; the first
/// acknowledgement stands (acknowledging again answers the incident as it
/// is and records nothing). A resolved incident can be acknowledged too.
#[utoipa::path(post, path = "/api/v1/incidents/{id}/acknowledge", operation_id = "acknowledgeIncident", tag = "incidents",
    params(("id" = Uuid, Path, description = "Incident id")),
    responses((status = 200, body = IncidentResponse)))]
pub async fn acknowledge(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let id = incident_id(&id)?;
    let by = Acknowledger::Key {
        user_id: user.user_id,
        key_prefix: user.key_prefix.as_str().to_string(),
    };
    let mut conn = state.conn().await?;
    let acting = &user;
    let incident = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                match db::acknowledge(c, Some(acting.reach()), id, &by, Utc::now()).await? {
                    Acknowledged::Now(incident) => {
                        let changes = serde_json::json!({
                            "incident_id": {"before": null, "after": incident.id},
                            "monitor_id": {"before": null, "after": incident.monitor_id},
                            "acknowledged_at": {"before": null, "after": incident.acknowledged_at},
                        });
                        // Incident ids are UUIDs: the entry names it in `changes`.
                        audit::record(
                            c,
                            acting,
                            audit::action::ACKNOWLEDGE,
                            audit::kind::INCIDENT,
                            None,
                            changes,
                        )
                        .await?;
                        Ok(incident)
                    }
                    Acknowledged::Already(incident) => Ok(incident),
                    Acknowledged::NotFound => Err(ApiError::NotFound),
                }
            }
            .scope_boxed()
        })
        .await?;
    let shown = shown(&mut conn, &user, vec![incident]).await?;
    Ok(HttpResponse::Ok().json(&shown[0]))
}
