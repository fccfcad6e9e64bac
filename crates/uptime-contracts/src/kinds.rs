//! The enums every message family shares: a monitor's kind and status, what
//! caused a check and how it came out. Field names are snake_case JSON;
//! timestamps in the messages are RFC 3339 UTC.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The doc comment below is part of the published schemas (check-due.v5 and
// the events): it stays as it was published, though the versions and the
// type it names are gone (a published schema is never changed in place).
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
