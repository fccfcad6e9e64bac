//! Version 2 of the check result: what ties a result to the monitor
//! definition it was made for. (Versions 1 to 3 of the due check and
//! version 1 of the result were retired in issue 20.)
//!
//! A monitor's `definition_version` goes up whenever what its checks do
//! changes (type, target, timeout, expected status, keyword, heartbeat
//! period). A due check carries the version it was snapshotted from, its
//! result carries the same, and the recorder lets only results of the current
//! version move the monitor's state: a check in flight while its monitor was
//! edited is still stored, but cannot raise an alert about a target the
//! monitor no longer watches.
//!
//! Checkers answer with `check-result.v3`; heartbeat pings (api-gateway) and
//! missed heartbeats (scheduler) still go out as this version.

use crate::{subjects, CheckOutcome, Message, Trigger};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
