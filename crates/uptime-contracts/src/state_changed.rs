//! `state-changed`: a monitor's status changed, or its open incident needs
//! saying again (a reminder, a flapping notice, an alert released after a
//! hold). The recorder publishes one message per such event, with the round
//! that changed it for a monitor checked from several regions; the notifier
//! reads it and alerts unless the event says the alert is held.
//!
//! [`StateChange`] is the current version's message (`state-changed.v4`);
//! [`StateChangedV3`] is the previous one (no incident, every event an
//! alert of a transition), frozen as it was published, still read until it
//! is retired. [`decode`] reads both into a [`StateChange`], [`encode`]
//! writes the current one.

use crate::{subjects, CheckRef, DecodeError, Message, MonitorRef, MonitorStatus, Round};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uuid::Uuid;

/// What an event says to people.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AlertKind {
    /// The status changed (`previous_status` → `status`).
    #[default]
    Transition,
    /// The monitor is still down (`down_for_secs`); nobody acknowledged it.
    Reminder,
    /// The status changed too often within the monitor's flapping window:
    /// further transition alerts are held until it is stable again.
    Flapping,
    /// A down alert held earlier (behind a parent, flapping, maintenance)
    /// whose reason ended while the monitor is still down.
    Released,
}

impl AlertKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AlertKind::Transition => "transition",
            AlertKind::Reminder => "reminder",
            AlertKind::Flapping => "flapping",
            AlertKind::Released => "released",
        }
    }
}

/// Why an event raises no alert now.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HoldReason {
    /// A monitor it depends on is down (`blocked_by`).
    BlockedByParent,
    /// It is flapping.
    Flapping,
    /// It is in a maintenance window (`in_maintenance`).
    Maintenance,
}

impl HoldReason {
    pub fn as_str(self) -> &'static str {
        match self {
            HoldReason::BlockedByParent => "blocked_by_parent",
            HoldReason::Flapping => "flapping",
            HoldReason::Maintenance => "maintenance",
        }
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A monitor's status changed, or its open incident needs saying again,
/// with the incident and how the alert decision treated it. Published on
/// [`subjects::STATE_CHANGED_V4`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "StateChangedV4")]
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
    /// What the event says: a transition, a reminder, a flapping notice or
    /// a released hold.
    #[serde(default)]
    pub alert: AlertKind,
    /// The incident (a confirmed down period) the event belongs to: opened
    /// by a change to `down`, resolved by the change out of it. Absent for
    /// changes that touch no down period (`pending` → `up`, `up` →
    /// `degraded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub incident_id: Option<Uuid>,
    /// Reminders and released alerts: how long the monitor has been down.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub down_for_secs: Option<u64>,
    /// Set when no alert goes out for this event now (it is recorded, and
    /// the notifier makes no delivery): why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<HoldReason>,
    /// The monitors this one depends on that were down when it changed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub blocked_by: Vec<i64>,
    /// A parent's alert: how many monitors depending on it had their alerts
    /// held behind it.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub held_children: u32,
    /// The monitor's labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// The monitor was in a maintenance window.
    #[serde(default, skip_serializing_if = "is_false")]
    pub in_maintenance: bool,
}

impl StateChange {
    /// Whether the event asks for an alert (it is not held).
    pub fn alerts(&self) -> bool {
        self.held.is_none()
    }
}

impl Message for StateChange {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V4;
    const SCHEMA: &'static str = "state-changed.v4";
}

/// Reads a state change received on `subject`, of any live version.
pub fn decode(subject: &str, payload: &[u8]) -> Result<StateChange, DecodeError> {
    match subject {
        subjects::STATE_CHANGED_V4 => Ok(StateChange::from_bytes(payload)?),
        subjects::STATE_CHANGED_V3 => Ok(StateChangedV3::from_bytes(payload)?.into()),
        _ => Err(DecodeError::UnknownSubject(subject.to_string())),
    }
}

/// The current version of `change`: its subject and the payload.
pub fn encode(change: &StateChange) -> (&'static str, Bytes) {
    (StateChange::SUBJECT, change.to_bytes())
}

// The previous version, frozen as published (its doc comments are its
// schema's descriptions).
/// A monitor's status changed, with the round that changed it. Published on
/// [`subjects::STATE_CHANGED_V3`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateChangedV3 {
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

impl Message for StateChangedV3 {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V3;
    const SCHEMA: &'static str = "state-changed.v3";
}

impl From<StateChangedV3> for StateChange {
    /// Version 3 had no incidents: every event was an alert of a transition.
    fn from(v3: StateChangedV3) -> Self {
        StateChange {
            event_id: v3.event_id,
            monitor: v3.monitor,
            previous_status: v3.previous_status,
            status: v3.status,
            occurred_at: v3.occurred_at,
            previous_since: v3.previous_since,
            consecutive_failures: v3.consecutive_failures,
            check: v3.check,
            round: v3.round,
            alert: AlertKind::Transition,
            incident_id: None,
            down_for_secs: None,
            held: None,
            blocked_by: Vec::new(),
            held_children: 0,
            labels: BTreeMap::new(),
            in_maintenance: false,
        }
    }
}
