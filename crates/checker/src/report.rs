//! The verdict of one check of any kind, before it becomes a result message.

use chrono::{DateTime, Utc};
use uptime_contracts::CheckOutcome;

/// The verdict of one check, before it becomes a `CheckResult`.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    pub outcome: CheckOutcome,
    /// What the kind measures: http, the request to the whole body; tcp, the
    /// connect; tls, connect and handshake; dns, the query; icmp, the round
    /// trip. Absent when nothing was measured.
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    /// `notAfter` of the target's certificate (https and tls).
    pub ssl_expires_at: Option<DateTime<Utc>>,
}

impl CheckReport {
    /// A failed check with its reason and nothing measured.
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some(error.into()),
            ssl_expires_at: None,
        }
    }

    /// A passing check that took `latency_ms`.
    pub fn passed(latency_ms: u32) -> Self {
        Self {
            outcome: CheckOutcome::Pass,
            latency_ms: Some(latency_ms),
            http_status: None,
            error: None,
            ssl_expires_at: None,
        }
    }
}

/// Milliseconds of `elapsed`, saturating.
pub fn millis(elapsed: std::time::Duration) -> u32 {
    u32::try_from(elapsed.as_millis()).unwrap_or(u32::MAX)
}
