//! The fields every monitor has, in its request and response bodies (each
//! kind's own fields are in [`super::kinds`], the regions in
//! [`super::placement`]). They come in two groups because the keyword
//! kind's fields have always sat between them in the bodies' order.

use super::monitor_type::MonitorType;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_db::models::Monitor;
use utoipa::ToSchema;

mirror! {
    /// The monitor's current status.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
    #[serde(rename_all = "snake_case")]
    pub enum MonitorStatus = uptime_contracts::MonitorStatus {
        /// Not checked yet (or what it watches changed since).
        Pending,
        Up,
        /// Passing, but slower than `latency_warn_ms`.
        Degraded,
        /// `confirmation_count` consecutive checks failed.
        Down,
    }
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

crate::routes::monitors::fields::api_fields! {
    /// The first fields of a create request.
    #[derive(Debug, Deserialize, ToSchema)]
    pub struct CreateFirst;
    /// The first fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct UpdateFirst;
    /// The first fields of every monitor in responses.
    #[derive(Debug, Serialize, ToSchema)]
    pub struct ShownFirst;

    shown id: i64;
    shown /// The organisation that owns the monitor.
    org_id: i64;
    shown /// Deprecated: the owning organisation's id (`org_id`), which is its
    /// first owner's user id for accounts from before organisations.
    #[schema(deprecated)]
    user_id: i64;
    /// 1 to 200 characters, not only whitespace.
    name: req String [min_length = 1, max_length = 200], kept => String;
    #[serde(rename = "type")]
    kind: req MonitorType,
        kept #[serde(rename = "type")]
        => #[serde(rename = "type")] MonitorType;
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
    target: opt String [min_length = 1, max_length = 2048],
        clear /// `null` clears it (heartbeat monitors only). The rules per type are
        /// those of the create request.
        => Option<String>;
    /// Seconds between checks, 10 to 86400 (default 300).
    interval_secs: opt i64, kept => i32;
    /// Seconds before a check counts as failed, 1 to 120 and at most
    /// `interval_secs` (default 30, or `interval_secs` if that is smaller).
    /// For heartbeat monitors: the grace period after a missed ping.
    timeout_secs: opt i64, kept => i32;
}

crate::routes::monitors::fields::api_fields! {
    /// The other fields every create request may give.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct CreateRest;
    /// The other fields every PATCH may give.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct UpdateRest;
    /// The other columns of every monitor in responses.
    #[derive(Debug, Serialize, ToSchema)]
    pub struct ShownRest;

    /// 100 to 599 (default 200).
    expected_status: opt i64, kept => i32;
    /// Consecutive failed checks before the monitor is `down`, 1 to 10 (default 1).
    confirmation_count: opt i64, kept => i32;
    shown /// Heartbeat monitors only: `hb_` and 32 lowercase hex characters.
    heartbeat_token: Option<String>;
    /// Warn when the certificate expires within this many days, 0 to 365 (default 30).
    ssl_warn_days: opt i64, kept => i32;
    /// A passing check slower than this many milliseconds makes the monitor
    /// `degraded`, 1 to 600000 (default: none).
    latency_warn_ms: opt i64,
        clear /// `null` removes the latency threshold.
        => Option<i32>;
    /// The caller's alert contacts to notify on status changes.
    alert_contact_ids: opt Vec<i64>,
        kept /// Replaces the linked contacts; `[]` unlinks all.
        ;
    shown /// Failed checks in a row so far.
    consecutive_failures: i32;
    shown last_heartbeat_at: Option<DateTime<Utc>>;
    shown /// `notAfter` of the target's certificate, for https targets once checked.
    ssl_expires_at: Option<DateTime<Utc>>;
    /// `false` creates the monitor paused (default `true`).
    active: opt bool,
        kept /// `false` pauses checks and alerts, `true` resumes them; status is kept.
        => /// `false` while paused.
        bool;
    shown status: MonitorStatus;
    shown last_checked_at: Option<DateTime<Utc>>;
    shown created_at: DateTime<Utc>;
    shown updated_at: DateTime<Utc>;
    shown /// Goes up by one whenever a change alters what a check does (type,
    /// target, timeout, expected status, keyword, request, assertions, dns
    /// query, pinned certificate, a heartbeat's period or schedule).
    /// Each result records the version it was made for; only results of the
    /// current version move `status`.
    #[schema(minimum = 1)]
    definition_version: i64;
    shown /// Ascending.
    alert_contact_ids: Vec<i64>;
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
