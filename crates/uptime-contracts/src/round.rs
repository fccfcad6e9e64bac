//! Rounds: a monitor checked from several regions is checked in rounds,
//! one check per region for each slot, decided by quorum. A decided round
//! says how many failing regions make it fail and what each region saw;
//! state changes carry it. Their published schema names keep their versions
//! (`RoundV1`, `RegionOutcomeV1`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

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
#[schemars(rename = "RegionOutcomeV1")]
pub struct RegionOutcome {
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
#[schemars(rename = "RoundV1")]
pub struct Round {
    pub round_id: Uuid,
    #[schemars(range(min = 1))]
    pub quorum: u32,
    pub regions: Vec<RegionOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}
