//! A check result as the recorder works with it: the fields every result
//! version on the wire carries (`check-result.v2` and `.v3`; what `.v3` adds,
//! the region and the round, travels beside it in `store::Incoming`), and the
//! verdict a round of several regions comes to.

use chrono::{DateTime, Utc};
use uptime_contracts::{CheckOutcome, CheckResultV2, CheckResultV3, Trigger};
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq)]
pub struct CheckResult {
    pub check_id: Uuid,
    pub monitor_id: i64,
    pub trigger: Trigger,
    /// When the check was due; absent for heartbeat pings.
    pub due_at: Option<DateTime<Utc>>,
    pub checked_at: DateTime<Utc>,
    pub outcome: CheckOutcome,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub reporter: String,
}

impl From<CheckResultV2> for CheckResult {
    fn from(r: CheckResultV2) -> Self {
        Self {
            check_id: r.check_id,
            monitor_id: r.monitor_id,
            trigger: r.trigger,
            due_at: r.due_at,
            checked_at: r.checked_at,
            outcome: r.outcome,
            latency_ms: r.latency_ms,
            http_status: r.http_status,
            error: r.error,
            ssl_expires_at: r.ssl_expires_at,
            reporter: r.reporter,
        }
    }
}

impl From<CheckResultV3> for CheckResult {
    fn from(r: CheckResultV3) -> Self {
        Self {
            check_id: r.check_id,
            monitor_id: r.monitor_id,
            trigger: r.trigger,
            due_at: r.due_at,
            checked_at: r.checked_at,
            outcome: r.outcome,
            latency_ms: r.latency_ms,
            http_status: r.http_status,
            error: r.error,
            ssl_expires_at: r.ssl_expires_at,
            reporter: r.reporter,
        }
    }
}
