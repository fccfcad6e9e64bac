//! What an alert says: [`AlertEvent`] is the webhook body, and the facts the
//! email and Slack renderings are made of. It is stored as a delivery's
//! payload, so a retry sends exactly what the first attempt sent.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_contracts::{AlertKind, CheckRef, MonitorKind, MonitorStatus, Trigger};
use uptime_contracts::{MonitorRef, RegionOutcome, RegionSeen, Round, SslWarning, StateChange};
use uptime_labels::Labels;
use uuid::Uuid;

/// The `event` of an alert.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EventType {
    #[serde(rename = "monitor.down")]
    MonitorDown,
    #[serde(rename = "monitor.up")]
    MonitorUp,
    #[serde(rename = "monitor.degraded")]
    MonitorDegraded,
    #[serde(rename = "ssl.expiring")]
    SslExpiring,
    #[serde(rename = "test")]
    Test,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::MonitorDown => "monitor.down",
            EventType::MonitorUp => "monitor.up",
            EventType::MonitorDegraded => "monitor.degraded",
            EventType::SslExpiring => "ssl.expiring",
            EventType::Test => "test",
        }
    }

    /// The event a change to `status` raises; `None` for `pending`, which no
    /// check ever yields.
    pub fn for_status(status: MonitorStatus) -> Option<Self> {
        match status {
            MonitorStatus::Down => Some(EventType::MonitorDown),
            MonitorStatus::Up => Some(EventType::MonitorUp),
            MonitorStatus::Degraded => Some(EventType::MonitorDegraded),
            MonitorStatus::Pending => None,
        }
    }
}

/// The monitor an alert is about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MonitorInfo {
    pub id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: MonitorKind,
    pub target: Option<String>,
    /// The monitor's labels; absent when it has none (as in every alert
    /// from before labels), so receivers see the shape they always saw.
    #[serde(default, skip_serializing_if = "Labels::is_empty")]
    pub labels: Labels,
}

/// The check that caused an alert. Every field is present (null when unknown)
/// so receivers can rely on the shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckInfo {
    pub check_id: Uuid,
    pub trigger: Trigger,
    pub checked_at: DateTime<Utc>,
    pub status: MonitorStatus,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

/// The round of several regions that changed a monitor's status: how many
/// failing regions make it fail, what each region saw, and why it was
/// decided so when that needs saying.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RoundInfo {
    pub round_id: Uuid,
    pub quorum: u32,
    pub regions: Vec<RegionInfo>,
    pub note: Option<String>,
}

/// What one region saw in a round. Every field is present (null when
/// unknown), like [`CheckInfo`]'s.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RegionInfo {
    pub region: String,
    /// `passed`, `failed`, `no_answer` (live checkers, no result by the
    /// deadline) or `offline` (no live checker: not counted).
    pub seen: RegionSeen,
    pub check_id: Option<Uuid>,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
}

impl From<&RegionOutcome> for RegionInfo {
    fn from(r: &RegionOutcome) -> Self {
        Self {
            region: r.region.clone(),
            seen: r.seen,
            check_id: r.check_id,
            latency_ms: r.latency_ms,
            http_status: r.http_status,
            error: r.error.clone(),
        }
    }
}

impl From<&Round> for RoundInfo {
    fn from(r: &Round) -> Self {
        Self {
            round_id: r.round_id,
            quorum: r.quorum,
            regions: r.regions.iter().map(Into::into).collect(),
            note: r.note.clone(),
        }
    }
}

/// The incident an alert belongs to, and what kind of alert it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IncidentInfo {
    pub id: Uuid,
    /// `transition`, `reminder`, `flapping` or `released`.
    pub alert: AlertKind,
    /// Reminders and released alerts: how long the monitor has been down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_for_secs: Option<u64>,
    /// A parent's alert: how many dependent monitors' alerts it held.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held_children: u32,
    /// The monitors this one depends on that were down.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<i64>,
    /// The signed link that acknowledges the incident, made for the contact
    /// at send time (never stored: it is a credential). Absent when the
    /// deployment has no `ack_links.secret`, and on recoveries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub acknowledge_url: Option<String>,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// An alert: the JSON body of a webhook delivery.
///
/// - `round` (monitors checked from several regions only; absent
///   otherwise): the round that changed the status, with what each region
///   saw.
/// - `monitor.*` events: `previous_status` → `status` at `occurred_at`;
///   `previous_since` is when the monitor entered `previous_status`.
/// - `ssl.expiring`: adds `ssl_expires_at`, `days_left` and `warn_days`;
///   `previous_status` and `status` are both the status of the causing check.
/// - `test`: `monitor`, `previous_status`, `status` and `check` are null, and
///   `message` says it is a test.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertEvent {
    pub event: EventType,
    pub event_id: Uuid,
    pub monitor: Option<MonitorInfo>,
    pub previous_status: Option<MonitorStatus>,
    pub status: Option<MonitorStatus>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub occurred_at: DateTime<Utc>,
    pub check: Option<CheckInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_expires_at: Option<DateTime<Utc>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days_left: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warn_days: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<RoundInfo>,
    /// The incident (a confirmed down period) of a `monitor.*` alert that
    /// opens, repeats or ends one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident: Option<IncidentInfo>,
}

impl From<&MonitorRef> for MonitorInfo {
    fn from(m: &MonitorRef) -> Self {
        Self {
            id: m.id,
            name: m.name.clone(),
            kind: m.kind,
            target: m.target.clone(),
            // Not in the state-changed event yet: set by whoever has them
            // (see `AlertEvent::with_labels`).
            labels: Labels::default(),
        }
    }
}

impl From<&CheckRef> for CheckInfo {
    fn from(c: &CheckRef) -> Self {
        Self {
            check_id: c.check_id,
            trigger: c.trigger,
            checked_at: c.checked_at,
            status: c.status,
            latency_ms: c.latency_ms,
            http_status: c.http_status,
            error: c.error.clone(),
        }
    }
}

impl AlertEvent {
    /// The alert with its monitor's `labels`: shown in every rendering (a
    /// `Labels` line in email and Slack, `monitor.labels` in the webhook).
    /// A state change (v4) carries them and [`Self::from_state_change`]
    /// takes them from there; certificate warnings carry none.
    pub fn with_labels(mut self, labels: Labels) -> Self {
        if let Some(monitor) = self.monitor.as_mut() {
            monitor.labels = labels;
        }
        self
    }

    /// The alert for a status change (with its round, for a monitor
    /// checked from several regions, and its incident); `None` for a change
    /// to `pending` and for an event whose alert is held.
    pub fn from_state_change(e: &StateChange) -> Option<Self> {
        if !e.alerts() {
            return None;
        }
        let alert = Self {
            event: EventType::for_status(e.status)?,
            event_id: e.event_id,
            monitor: Some((&e.monitor).into()),
            previous_status: Some(e.previous_status),
            status: Some(e.status),
            previous_since: e.previous_since,
            occurred_at: e.occurred_at,
            check: Some((&e.check).into()),
            ssl_expires_at: None,
            days_left: None,
            warn_days: None,
            message: None,
            round: e.round.as_ref().map(Into::into),
            incident: e.incident_id.map(|id| IncidentInfo {
                id,
                alert: e.alert,
                down_for_secs: e.down_for_secs,
                held_children: e.held_children,
                blocked_by: e.blocked_by.clone(),
                acknowledge_url: None,
            }),
        };
        Some(alert.with_labels(Labels(e.labels.clone())))
    }

    /// The incident this alert asks someone to acknowledge: a down alert's
    /// (a recovery's incident is over).
    pub fn incident_to_acknowledge(&self) -> Option<Uuid> {
        let incident = self.incident.as_ref()?;
        (self.status == Some(MonitorStatus::Down)).then_some(incident.id)
    }

    pub fn from_ssl_expiring(e: &SslWarning) -> Self {
        Self {
            event: EventType::SslExpiring,
            event_id: e.event_id,
            monitor: Some((&e.monitor).into()),
            previous_status: Some(e.check.status),
            status: Some(e.check.status),
            previous_since: None,
            occurred_at: e.occurred_at,
            check: Some((&e.check).into()),
            ssl_expires_at: Some(e.ssl_expires_at),
            days_left: Some(e.days_left),
            warn_days: Some(e.warn_days),
            message: None,
            round: None,
            incident: None,
        }
    }

    /// A test alert: no monitor, and a message saying what it is.
    pub fn test(now: DateTime<Utc>) -> Self {
        Self {
            event: EventType::Test,
            event_id: Uuid::new_v4(),
            monitor: None,
            previous_status: None,
            status: None,
            previous_since: None,
            occurred_at: now,
            check: None,
            ssl_expires_at: None,
            days_left: None,
            warn_days: None,
            message: Some(
                "This is a test alert. Alerts for your monitors will arrive here like this one."
                    .into(),
            ),
            round: None,
            incident: None,
        }
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("an AlertEvent always serialises")
    }
}

/// The payload of an `acknowledge` delivery: incident `incident_id` was
/// acknowledged in our API or through an alert's signed link, and the
/// on-call providers that were paged for it (PagerDuty, Opsgenie) are told
/// so under the incident's key, which stops their own escalation. Written by
/// the api-gateway in the acknowledging transaction (uptime-db builds it in
/// SQL: keep the field names in step with `deliveries::acknowledge`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AcknowledgeRequest {
    pub incident_id: Uuid,
    pub monitor_id: i64,
    pub acknowledged_at: DateTime<Utc>,
    /// `api` (an API key) or `link` (the signed link in an alert).
    pub acknowledged_via: String,
}

/// The payload of a `verification` delivery: the email that verifies an
/// email contact.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerificationRequest {
    pub contact_name: String,
    /// The link that verifies the contact. It is a credential, removed from
    /// the stored payload once the email is sent.
    pub verify_url: String,
}

/// An invitation to join an organisation, as its email says it. Not stored:
/// the api-gateway sends it at once. `token` is a credential: it must never
/// be logged. It is not put in a URL (URLs end up in access logs); the
/// email says to POST it to `accept_url`.
#[derive(Debug, Clone, PartialEq)]
pub struct InvitationRequest {
    /// User-supplied: made inert when rendered.
    pub organisation_name: String,
    /// User-supplied: made inert when rendered.
    pub inviter_name: String,
    /// `owner`, `admin`, `editor` or `viewer`.
    pub role: String,
    pub expires_at: chrono::DateTime<chrono::Utc>,
    /// `{public_base_url}/api/v1/invitations/accept`.
    pub accept_url: String,
    /// The token itself, for `POST /api/v1/invitations/accept`.
    pub token: String,
}
