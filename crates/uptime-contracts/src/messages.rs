//! Version 1 of every message. Field names are snake_case JSON; timestamps are
//! RFC 3339 UTC. Optional fields are omitted when empty.

use crate::{subjects, Message};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The kind of a monitor, every kind there is. Messages from version 3 of
/// due checks and version 2 of events carry it; the older versions carry
/// [`MonitorKindV1`], the three kinds they were published with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorKind {
    /// An HTTP(S) request; up on the expected status and passing assertions.
    Http,
    /// An HTTP(S) request whose body must (not) contain a keyword.
    Keyword,
    /// Pings from a job, checked by their arrival, never by a checker.
    Heartbeat,
    /// A TCP connection to `host:port`.
    Tcp,
    /// A TLS handshake with `host:port`, with a valid certificate.
    Tls,
    /// A DNS query for a name.
    Dns,
    /// ICMP echo requests to a host.
    Icmp,
}

impl MonitorKind {
    pub const ALL: [MonitorKind; 7] = [
        MonitorKind::Http,
        MonitorKind::Keyword,
        MonitorKind::Heartbeat,
        MonitorKind::Tcp,
        MonitorKind::Tls,
        MonitorKind::Dns,
        MonitorKind::Icmp,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            MonitorKind::Http => "http",
            MonitorKind::Keyword => "keyword",
            MonitorKind::Heartbeat => "heartbeat",
            MonitorKind::Tcp => "tcp",
            MonitorKind::Tls => "tls",
            MonitorKind::Dns => "dns",
            MonitorKind::Icmp => "icmp",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// Whether a check of this kind is an HTTP request (http, keyword).
    pub fn is_http(self) -> bool {
        matches!(self, MonitorKind::Http | MonitorKind::Keyword)
    }
}

// The three kinds the version-1 messages (`check-due.v1`, `check-due.v2`,
// `state-changed.v1`, `ssl-expiring.v1`) were published with, frozen with
// them. Its schema keeps the name and the description it was published under
// (the doc comment below is part of the schema: leave it as it is).
/// The kind of a monitor.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(rename = "MonitorKind")]
pub enum MonitorKindV1 {
    Http,
    Keyword,
    Heartbeat,
}

impl From<MonitorKindV1> for MonitorKind {
    fn from(kind: MonitorKindV1) -> Self {
        match kind {
            MonitorKindV1::Http => MonitorKind::Http,
            MonitorKindV1::Keyword => MonitorKind::Keyword,
            MonitorKindV1::Heartbeat => MonitorKind::Heartbeat,
        }
    }
}

impl TryFrom<MonitorKind> for MonitorKindV1 {
    /// The kind, which the version-1 messages cannot carry.
    type Error = MonitorKind;

    fn try_from(kind: MonitorKind) -> Result<Self, MonitorKind> {
        match kind {
            MonitorKind::Http => Ok(MonitorKindV1::Http),
            MonitorKind::Keyword => Ok(MonitorKindV1::Keyword),
            MonitorKind::Heartbeat => Ok(MonitorKindV1::Heartbeat),
            other => Err(other),
        }
    }
}

/// Whether a keyword must appear in the response body or must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeywordType {
    Contains,
    NotContains,
}

impl KeywordType {
    pub fn as_str(self) -> &'static str {
        match self {
            KeywordType::Contains => "contains",
            KeywordType::NotContains => "not_contains",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "contains" => Some(KeywordType::Contains),
            "not_contains" => Some(KeywordType::NotContains),
            _ => None,
        }
    }
}

/// What caused a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Trigger {
    /// The scheduler, on the monitor's interval.
    Scheduled,
    /// `POST /api/v1/monitors/{id}/check`.
    Manual,
    /// A heartbeat ping, an explicit heartbeat failure or a missed heartbeat.
    Heartbeat,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Scheduled => "scheduled",
            Trigger::Manual => "manual",
            Trigger::Heartbeat => "heartbeat",
        }
    }
}

/// A monitor's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorStatus {
    /// Not checked yet.
    Pending,
    Up,
    /// Passing, but slower than the monitor's `latency_warn_ms`.
    Degraded,
    Down,
}

impl MonitorStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            MonitorStatus::Pending => "pending",
            MonitorStatus::Up => "up",
            MonitorStatus::Degraded => "degraded",
            MonitorStatus::Down => "down",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "pending" => Some(MonitorStatus::Pending),
            "up" => Some(MonitorStatus::Up),
            "degraded" => Some(MonitorStatus::Degraded),
            "down" => Some(MonitorStatus::Down),
            _ => None,
        }
    }
}

/// The pass or fail verdict of a single check, before latency is weighed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    Pass,
    Fail,
}

/// What a checker needs to know to check a monitor: a snapshot taken when the
/// check was scheduled, so checkers never read the database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckSpecV1 {
    pub kind: MonitorKindV1,
    /// Absolute `http://` or `https://` URL.
    pub target: String,
    pub timeout_secs: u32,
    pub expected_status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_type: Option<KeywordType>,
}

/// A check to run now. Published on [`subjects::CHECK_DUE_V1`] with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckDueV1 {
    /// Identifies this check everywhere: the result carries it, and the
    /// recorder stores at most one result per `check_id`.
    pub check_id: Uuid,
    pub monitor_id: i64,
    pub trigger: Trigger,
    /// When the check was due (scheduled) or requested (manual).
    pub due_at: DateTime<Utc>,
    pub spec: CheckSpecV1,
}

impl Message for CheckDueV1 {
    const SUBJECT: &'static str = subjects::CHECK_DUE_V1;
    const SCHEMA: &'static str = "check-due.v1";
}

/// The outcome of one check. Published on [`subjects::CHECK_RESULT_V1`] with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResultV1 {
    pub check_id: Uuid,
    pub monitor_id: i64,
    pub trigger: Trigger,
    /// When the check was due; absent for heartbeat pings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// When the check started (for a heartbeat: when the ping arrived or was missed).
    pub checked_at: DateTime<Utc>,
    pub outcome: CheckOutcome,
    /// Time from sending the request to reading the whole response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    /// Why the check failed, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// `notAfter` of the target's TLS certificate, for https targets.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// Which process produced the result (a checker's instance id, `api-gateway` or `scheduler`).
    pub reporter: String,
}

impl Message for CheckResultV1 {
    const SUBJECT: &'static str = subjects::CHECK_RESULT_V1;
    const SCHEMA: &'static str = "check-result.v1";
}

/// What happened to a monitor's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorChange {
    /// Created or changed (including paused and resumed): read it again.
    Upserted,
    Deleted,
}

/// A monitor's definition changed. The scheduler re-reads the monitor from the
/// database, so the message carries only the id. Published on
/// [`subjects::MONITOR_CHANGED_V1`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorChangedV1 {
    pub monitor_id: i64,
    pub change: MonitorChange,
    pub changed_at: DateTime<Utc>,
}

impl Message for MonitorChangedV1 {
    const SUBJECT: &'static str = subjects::MONITOR_CHANGED_V1;
    const SCHEMA: &'static str = "monitor-changed.v1";
}

/// The monitor an event is about, as it was when the event happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorRefV1 {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub kind: MonitorKindV1,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The check that caused an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckRefV1 {
    pub check_id: Uuid,
    pub trigger: Trigger,
    pub checked_at: DateTime<Utc>,
    pub status: MonitorStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A monitor's status changed. Published on [`subjects::STATE_CHANGED_V1`]
/// with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateChangedV1 {
    pub event_id: Uuid,
    pub monitor: MonitorRefV1,
    pub previous_status: MonitorStatus,
    pub status: MonitorStatus,
    /// When the monitor entered `status`.
    pub occurred_at: DateTime<Utc>,
    /// When the monitor had entered `previous_status` (absent if never checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    pub check: CheckRefV1,
}

impl Message for StateChangedV1 {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V1;
    const SCHEMA: &'static str = "state-changed.v1";
}

/// A monitor's TLS certificate entered its `ssl_warn_days` window. Published on
/// [`subjects::SSL_EXPIRING_V1`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SslExpiringV1 {
    pub event_id: Uuid,
    pub monitor: MonitorRefV1,
    pub ssl_expires_at: DateTime<Utc>,
    pub days_left: i64,
    pub warn_days: u32,
    pub occurred_at: DateTime<Utc>,
    pub check: CheckRefV1,
}

impl Message for SslExpiringV1 {
    const SUBJECT: &'static str = subjects::SSL_EXPIRING_V1;
    const SCHEMA: &'static str = "ssl-expiring.v1";
}
