//! Version 2 of the events: a monitor reference whose `kind` can be every
//! monitor kind ([`MonitorKind`]). The recorder publishes `ssl-expiring.v2`
//! and `state-changed.v3` (one version per event since issue 20);
//! `state-changed.v2` stays readable by the notifier as the previous
//! version. Version 1 of both was retired in issue 20.

use crate::{subjects, CheckRefV1, Message, MonitorKind, MonitorStatus};
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
