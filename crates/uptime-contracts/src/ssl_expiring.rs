//! `ssl-expiring`: a monitor's TLS certificate entered its warning window.
//! The recorder publishes one message per warning; the notifier reads it.
//! One live version: [`SslWarning`] is its message (`ssl-expiring.v2`).

use crate::{subjects, CheckRef, DecodeError, Message, MonitorRef};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A monitor's TLS certificate entered its `ssl_warn_days` window. Published
/// on [`subjects::SSL_EXPIRING_V2`] with `Nats-Msg-Id` = `event_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "SslExpiringV2")]
pub struct SslWarning {
    pub event_id: Uuid,
    pub monitor: MonitorRef,
    pub ssl_expires_at: DateTime<Utc>,
    pub days_left: i64,
    pub warn_days: u32,
    pub occurred_at: DateTime<Utc>,
    pub check: CheckRef,
}

impl Message for SslWarning {
    const SUBJECT: &'static str = subjects::SSL_EXPIRING_V2;
    const SCHEMA: &'static str = "ssl-expiring.v2";
}

/// Reads a certificate warning received on `subject`.
pub fn decode(subject: &str, payload: &[u8]) -> Result<SslWarning, DecodeError> {
    match subject {
        subjects::SSL_EXPIRING_V2 => Ok(SslWarning::from_bytes(payload)?),
        _ => Err(DecodeError::UnknownSubject(subject.to_string())),
    }
}

/// The current version of `warning`: its subject and the payload.
pub fn encode(warning: &SslWarning) -> (&'static str, Bytes) {
    (SslWarning::SUBJECT, warning.to_bytes())
}
