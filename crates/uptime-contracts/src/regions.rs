//! Regions and rounds (issue 13): checks from several places, decided by
//! quorum.
//!
//! A checker belongs to one region. For a monitor checked from several
//! regions, each slot is a *round*: the scheduler publishes one
//! [`CheckDueV4`] per region on that region's subject
//! ([`subjects::due_v4`]), each region's checkers consume only theirs, every
//! check's [`CheckResultV3`] names its region and round, and the recorder
//! decides the round (by quorum) once every region answered or the round's
//! deadline passed. The round's verdict, not each region's check, moves the
//! monitor's state; [`StateChangedV3`] carries the round, so alerts can say
//! which regions failed and what each saw.
//!
//! A monitor checked from one region has rounds of one check: its due
//! check's `check_id` is the round's id, as before regions existed.

use crate::{
    subjects, CheckOutcome, CheckRefV1, CheckSpecV2, Message, MonitorRefV2, MonitorStatus, Trigger,
};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The region of a deployment that names none: single-region installs.
pub const DEFAULT_REGION: &str = "default";

/// Longest region name.
pub const MAX_REGION_CHARS: usize = 32;

/// Whether `name` may name a region: 1 to 32 of `a-z`, `0-9` and `-`,
/// starting with a letter or digit (it becomes a subject token and a
/// consumer name).
pub fn is_valid_region(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_REGION_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
}

/// The `check_id` of `region`'s check in round `round_id`: the round's id
/// itself for a round of one region (so single-region ids are what they
/// always were), else a UUIDv5 of the round and the region, the same for
/// every publisher (a republished round is deduplicated by JetStream).
pub fn check_id_in_round(round_id: Uuid, region: &str, regions_in_round: usize) -> Uuid {
    if regions_in_round <= 1 {
        round_id
    } else {
        Uuid::new_v5(&round_id, region.as_bytes())
    }
}

/// A check to run now in one region. Published on
/// `uptime.checks.due.v4.<region>` ([`subjects::due_v4`]) with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckDueV4 {
    /// This region's check of the round ([`check_id_in_round`]).
    pub check_id: Uuid,
    pub monitor_id: i64,
    #[schemars(range(min = 1))]
    pub definition_version: i64,
    /// The monitor's check interval (a scheduled check received more than
    /// one interval late is skipped).
    #[schemars(range(min = 1))]
    pub interval_secs: u32,
    pub trigger: Trigger,
    /// When the round was due (scheduled) or requested (manual).
    pub due_at: DateTime<Utc>,
    pub spec: CheckSpecV2,
    /// The region whose checkers run this check.
    pub region: String,
    /// The round this check is part of (the slot's id).
    pub round_id: Uuid,
}

impl Message for CheckDueV4 {
    /// The subjects' common prefix; each region's due checks go to
    /// [`subjects::due_v4`]`(region)`.
    const SUBJECT: &'static str = subjects::CHECK_DUE_V4_PREFIX;
    const SCHEMA: &'static str = "check-due.v4";
}

impl CheckDueV4 {
    /// The subject this check is published on: its region's.
    pub fn subject(&self) -> String {
        subjects::due_v4(&self.region)
    }
}

/// The outcome of one check in one region. Published on
/// [`subjects::CHECK_RESULT_V3`] with `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckResultV3 {
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

impl Message for CheckResultV3 {
    const SUBJECT: &'static str = subjects::CHECK_RESULT_V3;
    const SCHEMA: &'static str = "check-result.v3";
}

/// What one region saw in a round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RegionSeen {
    Passed,
    Failed,
    /// No result by the round's deadline, while the region had live checkers.
    NoAnswer,
    /// No result, and no live checker in the region: not counted.
    Offline,
}

/// One region's part in a round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RegionOutcomeV1 {
    pub region: String,
    pub seen: RegionSeen,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check_id: Option<Uuid>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A decided round: how many failing regions make it fail, what each region
/// saw, and, when the decision needed explaining (regions offline or
/// silent, a quorum larger than the regions that answered), why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct RoundV1 {
    pub round_id: Uuid,
    #[schemars(range(min = 1))]
    pub quorum: u32,
    pub regions: Vec<RegionOutcomeV1>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// A monitor's status changed, with the round that changed it. Published on
/// [`subjects::STATE_CHANGED_V3`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateChangedV3 {
    pub event_id: Uuid,
    pub monitor: MonitorRefV2,
    pub previous_status: MonitorStatus,
    pub status: MonitorStatus,
    pub occurred_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    /// The check (for a round of several regions: the round's verdict, with
    /// the first failing region's check id, latency and error).
    pub check: CheckRefV1,
    /// The round, for monitors checked from several regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<RoundV1>,
}

impl Message for StateChangedV3 {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V3;
    const SCHEMA: &'static str = "state-changed.v3";
}

/// What a checker announces about itself (the value under
/// `<region>.<instance_id>` in the `uptime_checkers` key-value bucket, whose
/// entries expire when not renewed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckerPresenceV1 {
    pub instance_id: String,
    pub region: String,
    pub seen_at: DateTime<Utc>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_names_are_subject_tokens() {
        for ok in ["default", "eu", "us-east-1", "ap2"] {
            assert!(is_valid_region(ok), "{ok}");
        }
        for bad in [
            "",
            "EU",
            "eu.west",
            "eu west",
            "-eu",
            "eu*",
            &"a".repeat(33),
        ] {
            assert!(!is_valid_region(bad), "{bad}");
        }
    }

    #[test]
    fn a_round_of_one_keeps_its_id_and_several_get_one_each() {
        let round = Uuid::new_v4();
        assert_eq!(check_id_in_round(round, "default", 1), round);
        let eu = check_id_in_round(round, "eu", 3);
        let us = check_id_in_round(round, "us", 3);
        assert_ne!(eu, us);
        assert_ne!(eu, round);
        assert_eq!(eu, check_id_in_round(round, "eu", 3));
    }
}
