//! The audit log, published for people who ship it elsewhere (a SIEM).
//!
//! Every write through the API leaves an audit entry in PostgreSQL
//! (`audit_log`) and, in the same transaction, an outbox row that the
//! recorder's relay publishes as [`AuditRecordedV1`]: an entry is published
//! at least once (`Nats-Msg-Id` is its `event_id`, so JetStream drops
//! copies) and a crash between the commit and the publish loses none.
//!
//! The subject lives under `uptime.events.` so the events stream
//! (`UPTIME_EVENTS`, kept a week) captures it; the notifier's consumer
//! filters its own subjects and never sees it.

use crate::{subjects, Message};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// One audit entry: who did what to which resource, when and from where.
/// Secrets never appear: a changed password, signing secret or token is
/// shown as `"[changed]"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditRecordedV1 {
    /// Unique per entry; the `Nats-Msg-Id`.
    pub event_id: Uuid,
    /// The entry's id in `GET /api/v1/audit-log`.
    pub id: i64,
    pub org_id: i64,
    /// The user who acted (the key's holder).
    pub actor_user_id: i64,
    /// The first 8 characters of the key used.
    pub key_prefix: String,
    /// The caller's address as the gateway saw it, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    pub at: DateTime<Utc>,
    /// `create`, `update`, `delete`, `revoke`, ...
    pub action: String,
    /// `monitor`, `alert_contact`, `api_key`, ...
    pub resource_kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_id: Option<i64>,
    /// The changed fields: `{"field": {"before": ..., "after": ...}}`.
    pub changes: serde_json::Value,
}

impl Message for AuditRecordedV1 {
    const SUBJECT: &'static str = subjects::AUDIT_RECORDED_V1;
    const SCHEMA: &'static str = "audit-recorded.v1";
}
