//! `monitor-changed`: a monitor's definition changed, so the scheduler
//! reads it again. One version.

use crate::{subjects, Message};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What happened to a monitor's definition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorChange {
    /// Created or changed (including paused and resumed): read it again.
    Upserted,
    Deleted,
}

/// A monitor's definition changed. The scheduler re-reads the monitor from the
/// database, so the message carries only the id. Published on
/// [`subjects::MONITOR_CHANGED_V1`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorChangedV1 {
    pub monitor_id: i64,
    pub change: MonitorChange,
    pub changed_at: DateTime<Utc>,
}

impl Message for MonitorChangedV1 {
    const SUBJECT: &'static str = subjects::MONITOR_CHANGED_V1;
    const SCHEMA: &'static str = "monitor-changed.v1";
}
