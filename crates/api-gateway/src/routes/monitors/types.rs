//! The request and response bodies of `/api/v1/monitors`, as the OpenAPI
//! document shows them, and their conversions from the typed rows.

use super::options::{
    Assertion, AssertionInput, BasicAuthInput, BasicAuthView, DnsRecordType, HttpMethod,
    RequestHeader,
};
use crate::error::ApiError;
use crate::validation::double_option;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_db::models::Monitor;
use utoipa::ToSchema;

/// The kind of check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorType {
    /// Passes when the target answers with `expected_status` within `timeout_secs`.
    Http,
    /// An http check that also needs `keyword` present (`contains`) or absent (`not_contains`).
    Keyword,
    /// Passes when pinged at `/api/v1/heartbeat/{heartbeat_token}` at least every
    /// `interval_secs` (plus `timeout_secs` of grace).
    Heartbeat,
    /// Passes when a TCP connection to `target` (`host:port`) opens within `timeout_secs`.
    Tcp,
    /// Passes when a TLS handshake with `target` (`host:port` or an `https://` URL)
    /// succeeds with a valid, unexpired certificate for the name.
    Tls,
    /// Passes when a DNS query for `target` is answered (with `dns_expected`, if set).
    Dns,
    /// Passes when `target` answers ICMP echo requests within `timeout_secs`.
    Icmp,
}

// The API's own enums mirror the contracts' (their documentation is the
// API's); rows come typed from uptime-db, so these conversions cannot fail.
impl From<uptime_contracts::MonitorKind> for MonitorType {
    fn from(kind: uptime_contracts::MonitorKind) -> Self {
        use uptime_contracts::MonitorKind;
        match kind {
            MonitorKind::Http => Self::Http,
            MonitorKind::Keyword => Self::Keyword,
            MonitorKind::Heartbeat => Self::Heartbeat,
            MonitorKind::Tcp => Self::Tcp,
            MonitorKind::Tls => Self::Tls,
            MonitorKind::Dns => Self::Dns,
            MonitorKind::Icmp => Self::Icmp,
        }
    }
}

impl From<MonitorType> for uptime_contracts::MonitorKind {
    fn from(t: MonitorType) -> Self {
        match t {
            MonitorType::Http => Self::Http,
            MonitorType::Keyword => Self::Keyword,
            MonitorType::Heartbeat => Self::Heartbeat,
            MonitorType::Tcp => Self::Tcp,
            MonitorType::Tls => Self::Tls,
            MonitorType::Dns => Self::Dns,
            MonitorType::Icmp => Self::Icmp,
        }
    }
}

/// Whether the keyword must appear in the response body or must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeywordType {
    Contains,
    NotContains,
}

impl KeywordType {
    pub(super) fn as_str(self) -> &'static str {
        match self {
            KeywordType::Contains => uptime_contracts::KeywordType::Contains.as_str(),
            KeywordType::NotContains => uptime_contracts::KeywordType::NotContains.as_str(),
        }
    }

    pub(super) fn from_db(s: &str) -> Result<Self, ApiError> {
        match uptime_contracts::KeywordType::parse(s) {
            Some(uptime_contracts::KeywordType::Contains) => Ok(Self::Contains),
            Some(uptime_contracts::KeywordType::NotContains) => Ok(Self::NotContains),
            None => Err(ApiError::Internal(format!(
                "keyword type {s:?} in the database"
            ))),
        }
    }
}

/// The monitor's current status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
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

/// A new monitor. Only `name` and `type` are required (and `target` for
/// every type but heartbeat, `keyword` for keyword monitors); the rest have
/// defaults. Options of another type than the monitor's (e.g. `headers` on a
/// tcp monitor) are refused.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMonitor {
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
    #[schema(minimum = 10, maximum = 86400)]
    pub interval_secs: Option<i64>,
    /// Seconds before a check counts as failed, 1 to 120 and at most
    /// `interval_secs` (default 30, or `interval_secs` if that is smaller).
    /// For heartbeat monitors: the grace period after a missed ping.
    #[schema(minimum = 1, maximum = 120)]
    pub timeout_secs: Option<i64>,
    /// Keyword monitors only (required there): 1 to 1024 bytes of UTF-8.
    #[schema(min_length = 1, max_length = 1024)]
    pub keyword: Option<String>,
    /// Keyword monitors only: `contains` (default) or `not_contains`.
    pub keyword_type: Option<KeywordType>,
    /// 100 to 599 (default 200).
    #[schema(minimum = 100, maximum = 599)]
    pub expected_status: Option<i64>,
    /// Consecutive failed checks before the monitor is `down`, 1 to 10 (default 1).
    #[schema(minimum = 1, maximum = 10)]
    pub confirmation_count: Option<i64>,
    /// Warn when the certificate expires within this many days, 0 to 365 (default 30).
    #[schema(minimum = 0, maximum = 365)]
    pub ssl_warn_days: Option<i64>,
    /// A passing check slower than this many milliseconds makes the monitor
    /// `degraded`, 1 to 600000 (default: none).
    #[schema(minimum = 1, maximum = 600000)]
    pub latency_warn_ms: Option<i64>,
    /// The caller's alert contacts to notify on status changes.
    pub alert_contact_ids: Option<Vec<i64>>,
    /// `false` creates the monitor paused (default `true`).
    pub active: Option<bool>,
    /// http and keyword monitors: the request's method (default `GET`).
    pub method: Option<HttpMethod>,
    /// http and keyword monitors: request headers, in order, at most 20
    /// (default none).
    #[schema(max_items = 20)]
    pub headers: Option<Vec<RequestHeader>>,
    /// http and keyword monitors: the request body, sent as it is, 1 to 16384
    /// bytes (default none; set a matching `Content-Type` header).
    #[schema(min_length = 1, max_length = 16384)]
    pub body: Option<String>,
    /// http and keyword monitors: basic authentication (default none). The
    /// password is write-only.
    pub basic_auth: Option<BasicAuthInput>,
    /// http and keyword monitors: conditions on the response that must all
    /// hold, at most 20 (default none). `expected_status` (and the keyword)
    /// still apply.
    #[schema(max_items = 20)]
    pub assertions: Option<Vec<AssertionInput>>,
    /// dns monitors: the record type asked for (default `A`).
    pub dns_record_type: Option<DnsRecordType>,
    /// dns monitors: values that must all be in the answer, at most 20 of 1
    /// to 255 characters (an address, a name, `10 mail.example.com.` for MX,
    /// a TXT record's text). Default none: any answer passes.
    #[schema(max_items = 20)]
    pub dns_expected: Option<Vec<String>>,
    /// dns monitors: the server to ask, `ip`, `ip:port` or `[ipv6]:port`
    /// (port 53 unless given), under the same address rules as targets.
    /// Default: the checker's system resolver.
    #[schema(min_length = 1, max_length = 64)]
    pub dns_server: Option<String>,
    /// tls monitors: the SHA-256 fingerprint of the leaf certificate (64 hex
    /// digits, or 32 colon-separated pairs; any case), stored as 64
    /// lowercase hex digits. Any other certificate fails the check.
    #[schema(pattern = "^(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){31})$")]
    pub tls_fingerprint_sha256: Option<String>,
    /// heartbeat monitors: a five-field cron expression (minute hour
    /// day-of-month month day-of-week, as crontab reads it) after each of
    /// whose times a ping is expected, within `timeout_secs` of grace;
    /// instead of `interval_secs` (give one or the other). At most 255
    /// characters. Default none: the interval.
    #[schema(min_length = 1, max_length = 255)]
    pub schedule: Option<String>,
    /// heartbeat monitors with a `schedule`: the IANA time zone its times
    /// are read in, e.g. `Europe/Berlin` (default `UTC`).
    #[schema(min_length = 1, max_length = 64)]
    pub timezone: Option<String>,
    /// Every monitor but heartbeats: the regions it is checked from, 1 to
    /// 16 distinct names of the deployment's regions (`GET /api/v1/regions`);
    /// stored sorted. Default (or `null`): the deployment's default regions,
    /// whatever they are at the time of each check.
    #[schema(min_items = 1, max_items = 16)]
    pub regions: Option<Vec<String>>,
    /// Every monitor but heartbeats: how many regions must see a check fail
    /// for the round to fail, 1 to the number of regions. Default (or
    /// `null`): a majority of the regions (more than half). Fewer failing
    /// regions are a regional problem: recorded, not counted towards
    /// `confirmation_count`.
    #[schema(minimum = 1, maximum = 16)]
    pub quorum: Option<i64>,
}

/// A partial update: fields left out keep their value. See the field
/// descriptions of the create request for the bounds.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMonitor {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 200)]
    pub name: Option<Option<String>>,
    #[serde(default, rename = "type", deserialize_with = "double_option")]
    #[schema(value_type = MonitorType, required = false)]
    pub kind: Option<Option<MonitorType>>,
    /// `null` clears it (heartbeat monitors only). The rules per type are
    /// those of the create request.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 2048)]
    pub target: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 10, maximum = 86400)]
    pub interval_secs: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 1, maximum = 120)]
    pub timeout_secs: Option<Option<i64>>,
    /// `null` clears it (not allowed on keyword monitors).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 1024)]
    pub keyword: Option<Option<String>>,
    /// `null` resets it to `contains` on keyword monitors.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<KeywordType>, nullable)]
    pub keyword_type: Option<Option<KeywordType>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 100, maximum = 599)]
    pub expected_status: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 1, maximum = 10)]
    pub confirmation_count: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 0, maximum = 365)]
    pub ssl_warn_days: Option<Option<i64>>,
    /// `null` removes the latency threshold.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i64>, nullable, minimum = 1, maximum = 600000)]
    pub latency_warn_ms: Option<Option<i64>>,
    /// Replaces the linked contacts; `[]` unlinks all.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Vec<i64>, required = false)]
    pub alert_contact_ids: Option<Option<Vec<i64>>>,
    /// `false` pauses checks and alerts, `true` resumes them; status is kept.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = bool, required = false)]
    pub active: Option<Option<bool>>,
    /// `null` resets it to `GET`.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<HttpMethod>, nullable)]
    pub method: Option<Option<HttpMethod>>,
    /// Replaces the headers; `null` or `[]` removes them.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Vec<RequestHeader>>, nullable, max_items = 20)]
    pub headers: Option<Option<Vec<RequestHeader>>>,
    /// `null` removes the body.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 16384)]
    pub body: Option<Option<String>>,
    /// `null` removes user name and password. A new user name without a
    /// password keeps the stored password. A stored password was given for
    /// the target's origin (scheme, host and port): a PATCH that moves the
    /// target to another origin must restate `basic_auth.password` (or
    /// remove it, or `basic_auth`), else it is refused with `400` naming
    /// `basic_auth.password`, so a password never follows a monitor to a
    /// host it was not given for.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<BasicAuthInput>, nullable)]
    pub basic_auth: Option<Option<BasicAuthInput>>,
    /// Replaces the assertions; `null` or `[]` removes them.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Vec<AssertionInput>>, nullable, max_items = 20)]
    pub assertions: Option<Option<Vec<AssertionInput>>>,
    /// `null` resets it to `A`.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<DnsRecordType>, nullable)]
    pub dns_record_type: Option<Option<DnsRecordType>>,
    /// Replaces the values; `null` or `[]` removes them.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Vec<String>>, nullable, max_items = 20)]
    pub dns_expected: Option<Option<Vec<String>>>,
    /// `null`: the system resolver.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 64)]
    pub dns_server: Option<Option<String>>,
    /// `null` unpins the certificate.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(
        value_type = Option<String>,
        nullable,
        pattern = "^(?:[0-9A-Fa-f]{64}|[0-9A-Fa-f]{2}(?::[0-9A-Fa-f]{2}){31})$"
    )]
    pub tls_fingerprint_sha256: Option<Option<String>>,
    /// `null` goes back to `interval_secs` (and drops the time zone).
    /// Giving `interval_secs` while a schedule stays is a 400.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 255)]
    pub schedule: Option<Option<String>>,
    /// `null` resets it to `UTC`.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 64)]
    pub timezone: Option<Option<String>>,
    /// Replaces the regions; `null`: the deployment's default regions.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<Vec<String>>, nullable, min_items = 1, max_items = 16)]
    pub regions: Option<Option<Vec<String>>>,
    /// `null`: a majority of the regions. Must stay within the number of
    /// regions when `regions` changes.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i64>, nullable, minimum = 1, maximum = 16)]
    pub quorum: Option<Option<i64>>,
}

/// A monitor, with its definition and its runtime state.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonitorResponse {
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
    /// Keyword monitors only.
    pub keyword: Option<String>,
    /// Keyword monitors only.
    pub keyword_type: Option<KeywordType>,
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
    /// http and keyword monitors: the request's method; `null` for other types.
    pub method: Option<HttpMethod>,
    /// http and keyword monitors: the request headers (`[]` for none);
    /// `null` for other types.
    pub headers: Option<Vec<RequestHeader>>,
    /// http and keyword monitors: the request body, if any.
    pub body: Option<String>,
    /// http and keyword monitors: the user name and whether a password is
    /// set (the password itself is never shown).
    pub basic_auth: Option<BasicAuthView>,
    /// http and keyword monitors: the assertions (`[]` for none); `null` for
    /// other types.
    pub assertions: Option<Vec<Assertion>>,
    /// dns monitors: the record type asked for; `null` for other types.
    pub dns_record_type: Option<DnsRecordType>,
    /// dns monitors: the values that must be in the answer (`[]` for none);
    /// `null` for other types.
    pub dns_expected: Option<Vec<String>>,
    /// dns monitors: the server asked; `null`: the system resolver.
    pub dns_server: Option<String>,
    /// tls monitors: the pinned certificate's SHA-256, 64 lowercase hex digits.
    pub tls_fingerprint_sha256: Option<String>,
    /// heartbeat monitors: the cron schedule (fields separated by single
    /// spaces), if any; `interval_secs` is unused while one is set.
    pub schedule: Option<String>,
    /// The schedule's IANA time zone (`UTC` unless one was given); `null`
    /// without a schedule.
    pub timezone: Option<String>,
    /// Active heartbeat monitors: when the next ping is expected (before the
    /// grace of `timeout_secs`), computed when the response is made; once a
    /// period's deadline has passed, the next period's. `null` for other
    /// types and paused monitors.
    pub next_expected_at: Option<DateTime<Utc>>,
    /// The regions the monitor is checked from: its own, or the
    /// deployment's default ones. `null` for heartbeat monitors.
    pub regions: Option<Vec<String>>,
    /// How many regions must see a check fail for a round to fail: its own,
    /// or a majority of `regions`. `null` for heartbeat monitors.
    pub quorum: Option<i32>,
}

impl MonitorResponse {
    pub(super) fn from_row(
        m: Monitor,
        alert_contact_ids: Vec<i64>,
        regions: &uptime_config::RegionsSettings,
    ) -> Result<Self, ApiError> {
        let options = super::shown::ShownOptions::of(&m)?;
        let (regions, quorum) =
            super::placement::shown(m.kind, m.regions.as_deref(), m.quorum, regions);
        let next_expected_at = super::shown::next_expected_at(&m, Utc::now());
        let timezone = m
            .heartbeat_schedule
            .as_ref()
            .map(|_| m.heartbeat_timezone.clone().unwrap_or_else(|| "UTC".into()));
        Ok(Self {
            schedule: m.heartbeat_schedule.clone(),
            timezone,
            next_expected_at,
            kind: m.kind.into(),
            keyword_type: m
                .keyword_type
                .as_deref()
                .map(KeywordType::from_db)
                .transpose()?,
            status: m.status.into(),
            id: m.id,
            org_id: m.org_id,
            user_id: m.org_id,
            name: m.name,
            target: m.target,
            interval_secs: m.interval_secs,
            timeout_secs: m.timeout_secs,
            keyword: m.keyword,
            expected_status: m.expected_status,
            confirmation_count: m.confirmation_count,
            heartbeat_token: m.heartbeat_token,
            ssl_warn_days: m.ssl_warn_days,
            latency_warn_ms: m.latency_warn_ms,
            consecutive_failures: m.consecutive_failures,
            last_heartbeat_at: m.last_heartbeat_at,
            ssl_expires_at: m.ssl_expires_at,
            active: m.active,
            last_checked_at: m.last_checked_at,
            created_at: m.created_at,
            updated_at: m.updated_at,
            definition_version: m.definition_version,
            alert_contact_ids,
            method: options.method,
            headers: options.headers,
            body: options.body,
            basic_auth: options.basic_auth,
            assertions: options.assertions,
            dns_record_type: options.dns_record_type,
            dns_expected: options.dns_expected,
            dns_server: options.dns_server,
            tls_fingerprint_sha256: options.tls_fingerprint_sha256,
            regions,
            quorum,
        })
    }
}

/// One page of monitors.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonitorList {
    pub monitors: Vec<MonitorResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}
