//! What responses show of a monitor beyond its columns: the check options
//! with their defaults filled in for the types they belong to, and when a
//! heartbeat expects its next ping.

use super::options::{Assertion, BasicAuthView, DnsRecordType, HttpMethod, RequestHeader};
use crate::error::ApiError;
use chrono::{DateTime, Utc};
use uptime_db::models::Monitor;

/// When an active heartbeat monitor expects its next ping at `now`
/// (uptime-heartbeats, as the scheduler computes its deadlines).
pub(super) fn next_expected_at(m: &Monitor, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
    if m.kind != uptime_contracts::MonitorKind::Heartbeat || !m.active {
        return None;
    }
    let period = uptime_heartbeats::Period::of(
        m.interval_secs,
        m.heartbeat_schedule.as_deref(),
        m.heartbeat_timezone.as_deref(),
    );
    let period = match period {
        Ok(period) => period,
        Err(error) => {
            // The API validated the schedule it stored; a row it cannot read
            // shows no time rather than failing the whole response.
            tracing::warn!(monitor_id = m.id, %error, "heartbeat schedule unreadable");
            return None;
        }
    };
    uptime_heartbeats::Heartbeat {
        period,
        grace_secs: m.timeout_secs.max(0).unsigned_abs(),
        since: m.created_at.max(m.updated_at),
        last_ping_at: m.last_heartbeat_at,
        started_at: m.heartbeat_started_at,
    }
    .next_expected_at(now)
}

/// The options of a row as responses show them: each field of the kinds it
/// belongs to with its default filled in, `null` on the others.
#[derive(Default)]
pub(super) struct ShownOptions {
    pub(super) method: Option<HttpMethod>,
    pub(super) headers: Option<Vec<RequestHeader>>,
    pub(super) body: Option<String>,
    pub(super) basic_auth: Option<BasicAuthView>,
    pub(super) assertions: Option<Vec<Assertion>>,
    pub(super) dns_record_type: Option<DnsRecordType>,
    pub(super) dns_expected: Option<Vec<String>>,
    pub(super) dns_server: Option<String>,
    pub(super) tls_fingerprint_sha256: Option<String>,
}

impl ShownOptions {
    pub(super) fn of(m: &Monitor) -> Result<Self, ApiError> {
        use uptime_contracts::MonitorKind;
        let options = m.options().map_err(|e| {
            ApiError::Internal(format!(
                "monitor {} has unreadable check_options: {e}",
                m.id
            ))
        })?;
        let mut shown = Self::default();
        match m.kind {
            MonitorKind::Http | MonitorKind::Keyword => {
                let http = options.http.unwrap_or_default();
                shown.method = Some(http.method.into());
                shown.headers = Some(http.headers.into_iter().map(Into::into).collect());
                shown.body = http.body;
                shown.basic_auth = http.basic_auth.map(|a| BasicAuthView {
                    username: a.username,
                    password_set: m.http_password_sealed.is_some(),
                });
                shown.assertions = Some(options.assertions.into_iter().map(Into::into).collect());
            }
            MonitorKind::Dns => {
                let dns = options.dns.unwrap_or_default();
                shown.dns_record_type = Some(dns.record_type.into());
                shown.dns_expected = Some(dns.expected);
                shown.dns_server = dns.server;
            }
            MonitorKind::Tls => {
                shown.tls_fingerprint_sha256 = options.tls.and_then(|t| t.fingerprint_sha256);
            }
            MonitorKind::Heartbeat | MonitorKind::Tcp | MonitorKind::Icmp => {}
        }
        Ok(shown)
    }
}
