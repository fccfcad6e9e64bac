//! The fields every monitor has, in its request and response bodies (each
//! kind's own fields are in [`super::kinds`], the regions in
//! [`super::placement`]). They come in two groups because the keyword
//! kind's fields have always sat between them in the bodies' order.

use super::monitor_type::MonitorType;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_db::models::Monitor;
use utoipa::ToSchema;

/// The monitor's current status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorStatus {
    /// Not checked yet (or what it watches changed since).
    Pending,
    Up,
    /// Passing, but slower than `latency_warn_ms`.
    Degraded,
    /// `confirmation_count` consecutive checks failed.
    Down,
}

impl MonitorStatus {
    /// As stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Up => "up",
            Self::Degraded => "degraded",
            Self::Down => "down",
        }
    }
}

impl From<uptime_contracts::MonitorStatus> for MonitorStatus {
    fn from(status: uptime_contracts::MonitorStatus) -> Self {
        use uptime_contracts::MonitorStatus as S;
        match status {
            S::Pending => Self::Pending,
            S::Up => Self::Up,
            S::Degraded => Self::Degraded,
            S::Down => Self::Down,
        }
    }
}

/// The first fields of a create request.
#[derive(Debug, Deserialize, ToSchema)]
pub struct CreateFirst {
    /// 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[serde(rename = "type")]
    pub kind: MonitorType,
    /// Required for every type but heartbeat. http/keyword: an absolute
    /// `http://` or `https://` URL without credentials. tcp: `host:port`
    /// (IPv6 in brackets: `[2001:db8::1]:22`). tls: `host:port` or an
    /// `https://` URL (port 443 unless it names one). dns: the domain name to
    /// query. icmp: a host name or an IP address (IPv6 without brackets).
    /// Host names are ASCII (international names in their `xn--` form);
    /// literal private, loopback, link-local and metadata addresses are
    /// refused unless the deployment allows private targets (names are
    /// screened after resolution, at check time). heartbeat: an optional
    /// label, never contacted. At most 2048 characters.
    #[schema(min_length = 1, max_length = 2048)]
    pub target: Option<String>,
    /// Seconds between checks, 10 to 86400 (default 300).
    pub interval_secs: Option<i64>,
    /// Seconds before a check counts as failed, 1 to 120 and at most
    /// `interval_secs` (default 30, or `interval_secs` if that is smaller).
    /// For heartbeat monitors: the grace period after a missed ping.
    pub timeout_secs: Option<i64>,
}

/// The other fields every create request may give.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct CreateRest {
    /// 100 to 599 (default 200).
    pub expected_status: Option<i64>,
    /// Consecutive failed checks before the monitor is `down`, 1 to 10 (default 1).
    pub confirmation_count: Option<i64>,
    /// Warn when the certificate expires within this many days, 0 to 365 (default 30).
    pub ssl_warn_days: Option<i64>,
    /// A passing check slower than this many milliseconds makes the monitor
    /// `degraded`, 1 to 600000 (default: none).
    pub latency_warn_ms: Option<i64>,
    /// The caller's alert contacts to notify on status changes.
    pub alert_contact_ids: Option<Vec<i64>>,
    /// `false` creates the monitor paused (default `true`).
    pub active: Option<bool>,
}

/// The first fields of a PATCH.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct UpdateFirst {
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 200)]
    pub name: Option<Option<String>>,
    #[serde(
        default,
        rename = "type",
        deserialize_with = "crate::routes::monitors::fields::given"
    )]
    #[schema(value_type = MonitorType, required = false)]
    pub kind: Option<Option<MonitorType>>,
    /// `null` clears it (heartbeat monitors only). The rules per type are
    /// those of the create request.
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 2048)]
    pub target: Option<Option<String>>,
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = i64, required = false)]
    pub interval_secs: Option<Option<i64>>,
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = i64, required = false)]
    pub timeout_secs: Option<Option<i64>>,
}

/// The other fields every PATCH may give.
#[derive(Debug, Default, Deserialize, ToSchema)]
pub struct UpdateRest {
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = i64, required = false)]
    pub expected_status: Option<Option<i64>>,
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = i64, required = false)]
    pub confirmation_count: Option<Option<i64>>,
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = i64, required = false)]
    pub ssl_warn_days: Option<Option<i64>>,
    /// `null` removes the latency threshold.
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = Option<i64>, nullable)]
    pub latency_warn_ms: Option<Option<i64>>,
    /// Replaces the linked contacts; `[]` unlinks all.
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = Vec<i64>, required = false)]
    pub alert_contact_ids: Option<Option<Vec<i64>>>,
    /// `false` pauses checks and alerts, `true` resumes them; status is kept.
    #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
    #[schema(value_type = bool, required = false)]
    pub active: Option<Option<bool>>,
}

/// The first fields of every monitor in responses.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShownFirst {
    pub id: i64,
    /// The organisation that owns the monitor.
    pub org_id: i64,
    /// Deprecated: the owning organisation's id (`org_id`), which is its
    /// first owner's user id for accounts from before organisations.
    #[schema(deprecated)]
    pub user_id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: MonitorType,
    pub target: Option<String>,
    pub interval_secs: i32,
    pub timeout_secs: i32,
}

/// The other columns of every monitor in responses.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShownRest {
    pub expected_status: i32,
    pub confirmation_count: i32,
    /// Heartbeat monitors only: `hb_` and 32 lowercase hex characters.
    pub heartbeat_token: Option<String>,
    pub ssl_warn_days: i32,
    pub latency_warn_ms: Option<i32>,
    /// Failed checks in a row so far.
    pub consecutive_failures: i32,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// `notAfter` of the target's certificate, for https targets once checked.
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// `false` while paused.
    pub active: bool,
    pub status: MonitorStatus,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Goes up by one whenever a change alters what a check does (type,
    /// target, timeout, expected status, keyword, request, assertions, dns
    /// query, pinned certificate, a heartbeat's period or schedule).
    /// Each result records the version it was made for; only results of the
    /// current version move `status`.
    #[schema(minimum = 1)]
    pub definition_version: i64,
    /// Ascending.
    pub alert_contact_ids: Vec<i64>,
}

/// What a response shows of the fields every monitor has.
pub(super) fn shown(m: &Monitor, alert_contact_ids: Vec<i64>) -> (ShownFirst, ShownRest) {
    let first = ShownFirst {
        id: m.id,
        org_id: m.org_id,
        user_id: m.org_id,
        name: m.name.clone(),
        kind: m.kind.into(),
        target: m.target.clone(),
        interval_secs: m.interval_secs,
        timeout_secs: m.timeout_secs,
    };
    let rest = ShownRest {
        expected_status: m.expected_status,
        confirmation_count: m.confirmation_count,
        heartbeat_token: m.heartbeat_token.clone(),
        ssl_warn_days: m.ssl_warn_days,
        latency_warn_ms: m.latency_warn_ms,
        consecutive_failures: m.consecutive_failures,
        last_heartbeat_at: m.last_heartbeat_at,
        ssl_expires_at: m.ssl_expires_at,
        active: m.active,
        status: m.status.into(),
        last_checked_at: m.last_checked_at,
        created_at: m.created_at,
        updated_at: m.updated_at,
        definition_version: m.definition_version,
        alert_contact_ids,
    };
    (first, rest)
}
