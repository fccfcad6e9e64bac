//! `check-result`: the outcome of one check, in one region. Checkers
//! publish one per due check; heartbeat pings (api-gateway) and missed
//! heartbeats (scheduler) publish one in the `default` region, without a
//! round. The recorder reads them.
//!
//! A result carries the monitor's `definition_version` its check was made
//! for (from the due check; for heartbeats, the version when the ping
//! arrived or the period was missed): the recorder stores every result, but
//! lets only results of the monitor's current version move its state.
//!
//! [`CheckResult`] is the current version's message (`check-result.v3`);
//! [`CheckResultV2`] is the previous one, frozen as it was published, still
//! read during a rolling upgrade. [`decode`] reads both into a
//! [`CheckResult`] (a v2 result: region `default`, no round), [`encode`]
//! writes the current one.

use crate::{subjects, CheckOutcome, DecodeError, Message, Trigger, DEFAULT_REGION};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The outcome of one check in one region. Published on
/// [`subjects::CHECK_RESULT_V3`] with `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckResultV3")]
pub struct CheckResult {
    pub check_id: Uuid,
    pub monitor_id: i64,
    #[schemars(range(min = 1))]
    pub definition_version: i64,
    pub trigger: Trigger,
    /// When the check was due; absent for heartbeat pings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_at: Option<DateTime<Utc>>,
    /// When the check started (for a heartbeat: when the ping arrived or was missed).
    pub checked_at: DateTime<Utc>,
    pub outcome: CheckOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// Which process produced the result.
    pub reporter: String,
    /// Where the check ran (`default` for heartbeats and single-region installs).
    pub region: String,
    /// The round the check was part of; absent for heartbeats.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round_id: Option<Uuid>,
}

impl Message for CheckResult {
    const SUBJECT: &'static str = subjects::CHECK_RESULT_V3;
    const SCHEMA: &'static str = "check-result.v3";
}

/// Reads a result received on `subject`, of any live version.
pub fn decode(subject: &str, payload: &[u8]) -> Result<CheckResult, DecodeError> {
    match subject {
        subjects::CHECK_RESULT_V3 => Ok(CheckResult::from_bytes(payload)?),
        subjects::CHECK_RESULT_V2 => Ok(CheckResultV2::from_bytes(payload)?.into()),
        _ => Err(DecodeError::UnknownSubject(subject.to_string())),
    }
}

/// The current version of `result`: its subject and the payload.
pub fn encode(result: &CheckResult) -> (&'static str, Bytes) {
    (CheckResult::SUBJECT, result.to_bytes())
}

// The previous version, frozen as published (its doc comments are its
// schema's descriptions).
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

impl From<CheckResultV2> for CheckResult {
    /// A version-2 result ran where version 2 was published: the default
    /// region, outside any round.
    fn from(v2: CheckResultV2) -> Self {
        CheckResult {
            check_id: v2.check_id,
            monitor_id: v2.monitor_id,
            definition_version: v2.definition_version,
            trigger: v2.trigger,
            due_at: v2.due_at,
            checked_at: v2.checked_at,
            outcome: v2.outcome,
            latency_ms: v2.latency_ms,
            http_status: v2.http_status,
            error: v2.error,
            ssl_expires_at: v2.ssl_expires_at,
            reporter: v2.reporter,
            region: DEFAULT_REGION.to_string(),
            round_id: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2() -> CheckResultV2 {
        CheckResultV2 {
            check_id: Uuid::new_v4(),
            monitor_id: 3,
            definition_version: 2,
            trigger: Trigger::Heartbeat,
            due_at: None,
            checked_at: Utc::now(),
            outcome: CheckOutcome::Pass,
            latency_ms: Some(12),
            http_status: None,
            error: None,
            ssl_expires_at: None,
            reporter: "api-gateway".into(),
        }
    }

    #[test]
    fn a_previous_version_result_reads_as_the_default_regions_without_a_round() {
        let old = v2();
        let read = decode(subjects::CHECK_RESULT_V2, &old.to_bytes()).unwrap();
        assert_eq!(read.region, DEFAULT_REGION);
        assert_eq!(read.round_id, None);
        assert_eq!(
            (read.check_id, read.definition_version, read.latency_ms),
            (old.check_id, 2, Some(12))
        );
        let (subject, payload) = encode(&read);
        assert_eq!(subject, subjects::CHECK_RESULT_V3);
        assert_eq!(decode(subject, &payload).unwrap(), read);
    }

    #[test]
    fn other_subjects_are_undecodable() {
        let payload = v2().to_bytes();
        for subject in ["uptime.checks.result.v4", "uptime.checks.due.v5.eu"] {
            assert!(matches!(
                decode(subject, &payload),
                Err(DecodeError::UnknownSubject(_))
            ));
        }
    }
}
