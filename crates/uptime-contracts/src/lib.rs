//! The public interface between services: NATS subjects, JetStream streams and
//! consumers, and the JSON messages that travel on them.
//!
//! Everything here is also a public interface for people: operators tap these
//! subjects with `uptimectl tap 'uptime.>'`, and `proto-schemas/` holds a JSON Schema
//! per message, generated from these types and pinned by a test. A published
//! message version is never changed in place: a change adds `...V2` with a new
//! subject suffix, and at most the current and the previous version of each
//! family live ([`versions`] lists every version and its status).
//!
//! One module per message family (`check_due`, `check_result`,
//! `state_changed`, `ssl_expiring`, `monitor_changed`, `api_key_revoked`),
//! the parts they share beside them (`spec`, `kinds`, `events`, `round`).
//! Services work on the unversioned types ([`DueCheck`], [`CheckResult`],
//! [`StateChange`], [`SslWarning`], [`CheckSpec`], [`Round`]): a family's
//! `decode(subject, payload)` reads every live version into its type (one
//! `From` per previous version), and its `encode` writes the current
//! version. The current version's message is the unversioned type itself,
//! under its published schema name (`#[schemars(rename = "CheckResultV3")]`),
//! so the schema test fails on any change that would alter a published
//! schema: such a change needs a new version, and the old one is then frozen
//! as its own struct with a `From` (as [`CheckResultV2`] is).
//!
//! Beside the families: [`bounds`] (the bounded numbers of a monitor
//! definition, each range stated once), [`placement`] and [`regions`]
//! (where a monitor is checked from, and quorum), [`presence`] (live
//! checkers per region), [`audit`] (the published audit entry), [`bus`]
//! (connecting and publishing), [`streams`], [`subjects`].

pub mod api_key_revoked;
pub mod audit;
pub mod bounds;
pub mod bus;
pub mod check_due;
pub mod check_result;
pub mod events;
pub mod kinds;
pub mod monitor_changed;
pub mod placement;
pub mod presence;
pub mod regions;
pub mod round;
pub mod spec;
pub mod ssl_expiring;
pub mod state_changed;
pub mod streams;
pub mod subjects;
pub mod versions;

pub use api_key_revoked::*;
pub use bounds::{
    Bounded, ConfirmationCount, ExpectedStatus, IntervalSecs, LatencyWarnMs, SslWarnDays,
    TimeoutSecs,
};
pub use check_due::DueCheck;
pub use check_result::{CheckResult, CheckResultV2};
pub use events::*;
pub use kinds::*;
pub use monitor_changed::*;
pub use placement::Placement;
pub use presence::CheckerPresenceV1;
pub use regions::*;
pub use round::*;
pub use spec::*;
pub use ssl_expiring::SslWarning;
pub use state_changed::{AlertKind, HoldReason, StateChange, StateChangedV3};

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

/// Why a received message cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum DecodeError {
    /// A subject of no live version of the family.
    #[error("no live message version on subject {0}")]
    UnknownSubject(String),
    #[error("malformed message: {0}")]
    Json(#[from] serde_json::Error),
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
        entry::<DueCheck>(),
        entry::<CheckResult>(),
        entry::<MonitorChangedV1>(),
        entry::<StateChangedV3>(),
        entry::<SslWarning>(),
        entry::<StateChange>(),
        entry::<ApiKeyRevokedV1>(),
        entry::<audit::AuditRecordedV1>(),
    ]
}
