//! The parts every event carries: the monitor it is about and the check
//! that caused it. Their published schema names keep their versions
//! (`MonitorRefV2`, `CheckRefV1`).

use crate::{MonitorKind, MonitorStatus, Trigger};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The monitor an event is about, as it was when the event happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "MonitorRefV2")]
pub struct MonitorRef {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub kind: MonitorKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// The check that caused an event.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckRefV1")]
pub struct CheckRef {
    pub check_id: Uuid,
    pub trigger: Trigger,
    pub checked_at: DateTime<Utc>,
    pub status: MonitorStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}
