//! `state-changed`: a monitor's status changed. The recorder publishes one
//! message per change, with the round that changed it for a monitor checked
//! from several regions; the notifier reads it.
//!
//! [`StateChange`] is the current version's message (`state-changed.v3`);
//! [`StateChangedV2`] is the previous one (no round), frozen as it was
//! published, still read until it is retired. [`decode`] reads both into a
//! [`StateChange`], [`encode`] writes the current one.

use crate::{subjects, CheckRef, DecodeError, Message, MonitorRef, MonitorStatus, Round};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A monitor's status changed, with the round that changed it. Published on
/// [`subjects::STATE_CHANGED_V3`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "StateChangedV3")]
pub struct StateChange {
    pub event_id: Uuid,
    pub monitor: MonitorRef,
    pub previous_status: MonitorStatus,
    pub status: MonitorStatus,
    pub occurred_at: DateTime<Utc>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    /// The check (for a round of several regions: the round's verdict, with
    /// the first failing region's check id, latency and error).
    pub check: CheckRef,
    /// The round, for monitors checked from several regions.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub round: Option<Round>,
}

impl Message for StateChange {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V3;
    const SCHEMA: &'static str = "state-changed.v3";
}

/// Reads a state change received on `subject`, of any live version.
pub fn decode(subject: &str, payload: &[u8]) -> Result<StateChange, DecodeError> {
    match subject {
        subjects::STATE_CHANGED_V3 => Ok(StateChange::from_bytes(payload)?),
        subjects::STATE_CHANGED_V2 => Ok(StateChangedV2::from_bytes(payload)?.into()),
        _ => Err(DecodeError::UnknownSubject(subject.to_string())),
    }
}

/// The current version of `change`: its subject and the payload.
pub fn encode(change: &StateChange) -> (&'static str, Bytes) {
    (StateChange::SUBJECT, change.to_bytes())
}

// The previous version, frozen as published (its doc comments are its
// schema's descriptions).
/// A monitor's status changed. Published on [`subjects::STATE_CHANGED_V2`]
/// with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateChangedV2 {
    pub event_id: Uuid,
    pub monitor: MonitorRef,
    pub previous_status: MonitorStatus,
    pub status: MonitorStatus,
    /// When the monitor entered `status`.
    pub occurred_at: DateTime<Utc>,
    /// When the monitor had entered `previous_status` (absent if never checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    pub check: CheckRef,
}

impl Message for StateChangedV2 {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V2;
    const SCHEMA: &'static str = "state-changed.v2";
}

impl From<StateChangedV2> for StateChange {
    /// Version 2 had no rounds.
    fn from(v2: StateChangedV2) -> Self {
        StateChange {
            event_id: v2.event_id,
            monitor: v2.monitor,
            previous_status: v2.previous_status,
            status: v2.status,
            occurred_at: v2.occurred_at,
            previous_since: v2.previous_since,
            consecutive_failures: v2.consecutive_failures,
            check: v2.check,
            round: None,
        }
    }
}
