//! Version 2 of the events: version 1 with a monitor reference whose `kind`
//! can be every monitor kind ([`MonitorKind`]); version 1's is frozen at
//! http, keyword and heartbeat. The recorder publishes version 2 only; the
//! notifier reads both (version 1 may still sit in the stream after an
//! upgrade).

use crate::{
    subjects, CheckRefV1, Message, MonitorKind, MonitorRefV1, MonitorStatus, SslExpiringV1,
    StateChangedV1,
};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// The monitor an event is about, as it was when the event happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct MonitorRefV2 {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub kind: MonitorKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

impl From<MonitorRefV1> for MonitorRefV2 {
    fn from(v1: MonitorRefV1) -> Self {
        Self {
            id: v1.id,
            user_id: v1.user_id,
            name: v1.name,
            kind: v1.kind.into(),
            target: v1.target,
        }
    }
}

/// A monitor's status changed. Published on [`subjects::STATE_CHANGED_V2`]
/// with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StateChangedV2 {
    pub event_id: Uuid,
    pub monitor: MonitorRefV2,
    pub previous_status: MonitorStatus,
    pub status: MonitorStatus,
    /// When the monitor entered `status`.
    pub occurred_at: DateTime<Utc>,
    /// When the monitor had entered `previous_status` (absent if never checked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    pub check: CheckRefV1,
}

impl Message for StateChangedV2 {
    const SUBJECT: &'static str = subjects::STATE_CHANGED_V2;
    const SCHEMA: &'static str = "state-changed.v2";
}

impl From<StateChangedV1> for StateChangedV2 {
    fn from(v1: StateChangedV1) -> Self {
        Self {
            event_id: v1.event_id,
            monitor: v1.monitor.into(),
            previous_status: v1.previous_status,
            status: v1.status,
            occurred_at: v1.occurred_at,
            previous_since: v1.previous_since,
            consecutive_failures: v1.consecutive_failures,
            check: v1.check,
        }
    }
}

/// A monitor's TLS certificate entered its `ssl_warn_days` window. Published
/// on [`subjects::SSL_EXPIRING_V2`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SslExpiringV2 {
    pub event_id: Uuid,
    pub monitor: MonitorRefV2,
    pub ssl_expires_at: DateTime<Utc>,
    pub days_left: i64,
    pub warn_days: u32,
    pub occurred_at: DateTime<Utc>,
    pub check: CheckRefV1,
}

impl Message for SslExpiringV2 {
    const SUBJECT: &'static str = subjects::SSL_EXPIRING_V2;
    const SCHEMA: &'static str = "ssl-expiring.v2";
}

impl From<SslExpiringV1> for SslExpiringV2 {
    fn from(v1: SslExpiringV1) -> Self {
        Self {
            event_id: v1.event_id,
            monitor: v1.monitor.into(),
            ssl_expires_at: v1.ssl_expires_at,
            days_left: v1.days_left,
            warn_days: v1.warn_days,
            occurred_at: v1.occurred_at,
            check: v1.check,
        }
    }
}
