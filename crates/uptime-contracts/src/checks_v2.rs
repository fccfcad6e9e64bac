//! Version 2 of the check messages: version 1 plus what ties a check to the
//! monitor definition it was made for.
//!
//! A monitor's `definition_version` goes up whenever what its checks do
//! changes (type, target, timeout, expected status, keyword, heartbeat
//! period). A due check carries the version it was snapshotted from, its
//! result carries the same, and the recorder lets only results of the current
//! version move the monitor's state: a check in flight while its monitor was
//! edited is still stored, but cannot raise an alert about a target the
//! monitor no longer watches.
//!
//! Version 1 keeps flowing during a rolling upgrade: checkers answer a v1 due
//! check with a v1 result, and the recorder treats a v1 result (which has no
//! version) as current, as it always did.

use crate::{subjects, CheckDueV1, CheckOutcome, CheckResultV1, CheckSpecV1, Message, Trigger};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A check to run now. Published on [`subjects::CHECK_DUE_V2`] with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckDueV2 {
    /// Identifies this check everywhere: the result carries it, and the
    /// recorder stores at most one result per `check_id`.
    pub check_id: Uuid,
    pub monitor_id: i64,
    /// The monitor's definition version `spec` was taken from; the result
    /// must carry it back.
    #[schemars(range(min = 1))]
    pub definition_version: i64,
    /// The monitor's check interval. A scheduled check received more than
    /// one interval after `due_at` is stale (the next slot is already due)
    /// and is skipped; manual checks are never skipped.
    #[schemars(range(min = 1))]
    pub interval_secs: u32,
    pub trigger: Trigger,
    /// When the check was due (scheduled) or requested (manual).
    pub due_at: DateTime<Utc>,
    pub spec: CheckSpecV1,
}

impl Message for CheckDueV2 {
    const SUBJECT: &'static str = subjects::CHECK_DUE_V2;
    const SCHEMA: &'static str = "check-due.v2";
}

/// What version 2 of a due check adds to version 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueVersioning {
    pub definition_version: i64,
    pub interval_secs: u32,
}

impl CheckDueV2 {
    /// The version-1 fields and what version 2 adds, apart.
    pub fn into_parts(self) -> (CheckDueV1, DueVersioning) {
        let versioning = DueVersioning {
            definition_version: self.definition_version,
            interval_secs: self.interval_secs,
        };
        let due = CheckDueV1 {
            check_id: self.check_id,
            monitor_id: self.monitor_id,
            trigger: self.trigger,
            due_at: self.due_at,
            spec: self.spec,
        };
        (due, versioning)
    }
}

/// The outcome of one check. Published on [`subjects::CHECK_RESULT_V2`] with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResultV2 {
    pub check_id: Uuid,
    pub monitor_id: i64,
    /// The monitor's definition version the check was made for (from the
    /// due check; for heartbeats, the version when the ping arrived or the
    /// period was missed).
    #[schemars(range(min = 1))]
    pub definition_version: i64,
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

impl Message for CheckResultV2 {
    const SUBJECT: &'static str = subjects::CHECK_RESULT_V2;
    const SCHEMA: &'static str = "check-result.v2";
}

impl CheckResultV1 {
    /// This result as version 2, made for `definition_version`.
    pub fn with_definition_version(self, definition_version: i64) -> CheckResultV2 {
        CheckResultV2 {
            check_id: self.check_id,
            monitor_id: self.monitor_id,
            definition_version,
            trigger: self.trigger,
            due_at: self.due_at,
            checked_at: self.checked_at,
            outcome: self.outcome,
            latency_ms: self.latency_ms,
            http_status: self.http_status,
            error: self.error,
            ssl_expires_at: self.ssl_expires_at,
            reporter: self.reporter,
        }
    }
}

impl CheckResultV2 {
    /// The version-1 fields and the definition version, apart.
    pub fn into_parts(self) -> (CheckResultV1, i64) {
        let version = self.definition_version;
        let result = CheckResultV1 {
            check_id: self.check_id,
            monitor_id: self.monitor_id,
            trigger: self.trigger,
            due_at: self.due_at,
            checked_at: self.checked_at,
            outcome: self.outcome,
            latency_ms: self.latency_ms,
            http_status: self.http_status,
            error: self.error,
            ssl_expires_at: self.ssl_expires_at,
            reporter: self.reporter,
        };
        (result, version)
    }
}
