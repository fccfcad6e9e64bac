//! The public interface between services: NATS subjects, JetStream streams and
//! consumers, and the JSON messages that travel on them.
//!
//! Everything here is also a public interface for people: operators tap these
//! subjects with `nats sub 'uptime.>'`, and `proto-schemas/` holds a JSON Schema
//! per message, generated from these types and pinned by a test. A published
//! message version is never changed in place: a change adds `...V2` with a new
//! subject suffix, and at most the current and the previous version of each
//! family live ([`versions`] lists every version and its status).

pub mod api_keys;
pub mod audit;
pub mod bus;
pub mod checks_v2;
pub mod checks_v3;
pub mod checks_v5;
pub mod events_v2;
pub mod messages;
pub mod presence;
pub mod regions;
pub mod streams;
pub mod subjects;
pub mod versions;

pub use api_keys::*;
pub use checks_v2::*;
pub use checks_v3::*;
pub use checks_v5::*;
pub use events_v2::*;
pub use messages::*;
pub use regions::*;

use bytes::Bytes;
use serde::{de::DeserializeOwned, Serialize};

/// A message type with its one subject.
pub trait Message: Serialize + DeserializeOwned + schemars::JsonSchema {
    /// The subject the message is published on.
    const SUBJECT: &'static str;
    /// The file name of its schema under `proto-schemas/` (without `.json`).
    const SCHEMA: &'static str;

    fn to_bytes(&self) -> Bytes {
        // Serialising plain data structs into a Vec cannot fail.
        Bytes::from(serde_json::to_vec(self).expect("message serialises"))
    }

    fn from_bytes(payload: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(payload)
    }
}

/// The header JetStream deduplicates publishes on.
pub const MSG_ID_HEADER: &str = "Nats-Msg-Id";

/// The JSON Schema of `M`, as committed under `proto-schemas/`.
pub fn schema_of<M: Message>() -> serde_json::Value {
    serde_json::to_value(schemars::schema_for!(M)).expect("schema serialises")
}

/// Name and schema of every message version, for the files in `proto-schemas/`.
pub fn all_schemas() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    fn entry<M: Message>() -> (&'static str, &'static str, serde_json::Value) {
        (M::SCHEMA, M::SUBJECT, schema_of::<M>())
    }
    vec![
        entry::<CheckResultV2>(),
        entry::<CheckDueV4>(),
        entry::<CheckDueV5>(),
        entry::<CheckResultV3>(),
        entry::<MonitorChangedV1>(),
        entry::<StateChangedV2>(),
        entry::<SslExpiringV2>(),
        entry::<StateChangedV3>(),
        entry::<ApiKeyRevokedV1>(),
        entry::<audit::AuditRecordedV1>(),
    ]
}
