//! API key revocations, announced to every api-gateway replica.
//!
//! Gateways keep recently authenticated keys in memory for a short while
//! (`auth.positive_cache_secs`), so that a request with a known key costs no
//! database query. When a key stops being valid, the gateway that revoked it
//! publishes [`ApiKeyRevokedV1`] on core NATS (no stream: it is a signal to
//! the replicas running now, worth nothing to one started later, which has
//! nothing cached) and every gateway drops the key from its memory at once.
//! Core NATS may lose a message sent while a gateway is disconnected; the
//! cache's time to live bounds how long such a gateway can still accept the
//! key, and a gateway empties its cache when it reconnects.

use crate::{subjects, Message};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An API key was revoked: no gateway may accept it any more. Published on
/// [`subjects::API_KEY_REVOKED_V1`] with core NATS (no stream captures it),
/// received by every gateway replica (no queue group).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ApiKeyRevokedV1 {
    pub key_id: i64,
    pub user_id: i64,
    /// Hex SHA-256 of the raw key, what gateways remember keys by. It is
    /// what the database stores, never the key itself, and it authenticates
    /// nothing.
    #[schemars(length(equal = 64), regex(pattern = r"^[0-9a-f]{64}$"))]
    pub key_sha256: String,
    pub revoked_at: DateTime<Utc>,
}

/// Subjects published with core NATS only: signals to the services running
/// now, which no stream may capture (a stream would keep them and make every
/// publish wait for its ack).
pub const CORE_NATS_SUBJECTS: &[&str] = &[subjects::API_KEY_REVOKED_V1];

impl Message for ApiKeyRevokedV1 {
    const SUBJECT: &'static str = subjects::API_KEY_REVOKED_V1;
    const SCHEMA: &'static str = "api-key-revoked.v1";
}
