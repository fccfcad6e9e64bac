//! Shard leases in a NATS KV bucket: which replica schedules which monitors.
//!
//! Monitors are hashed into `scheduler.shards` shards ([`crate::shards`]);
//! each is scheduled by the one replica holding its lease. Nothing here needs
//! PostgreSQL, so a database restart or failover takes no lease away: the
//! replicas go on publishing from their timelines and the results wait in
//! JetStream for the recorder.
//!
//! - [`replica`]: the protocol, with no I/O and the clock a parameter.
//! - [`driver`]: runs it against the bucket in a task of its own (so a slow
//!   database never delays a renewal) and hands the engine its [`Grants`].
//!
//! The bucket, [`BUCKET`]: one key per shard (`shard.<n>`) and one per
//! running replica (`member.<uuid>`), history 1, replicated like the streams
//! (`nats.stream_replicas`). Its size is bounded: shard keys are fixed in
//! number, a replica deletes its member key when it stops, and the member
//! keys of replicas that vanished are deleted by the others after
//! [`LeaseTiming::forget_after_ms`]; `max_age` (a day) is the backstop for a
//! deployment whose last replica vanished.

pub mod driver;
mod protocol;
pub mod replica;
#[cfg(test)]
mod tests;

pub use replica::{EngineProgress, Grant, Grants, Key, LeaseTiming, Op, Outcome, Replica, Stopped};

use async_nats::jetstream::kv;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The KV bucket holding the scheduler's leases.
pub const BUCKET: &str = "uptime_scheduler_leases";
/// Keys not rewritten for this long are dropped by the server. Live keys are
/// rewritten every few seconds; this only clears the bucket of a deployment
/// whose replicas all vanished.
pub const BUCKET_MAX_AGE: Duration = Duration::from_secs(24 * 3600);
/// The bucket's size bound (it holds a few thousand small keys at most).
pub const BUCKET_MAX_BYTES: i64 = 16 * 1024 * 1024;

/// The value of a shard's key.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ShardValue {
    /// The replica holding the lease; `None` once released.
    pub holder: Option<String>,
    /// Every slot of the shard due before this instant (epoch ms) has been
    /// published; the next holder resumes here.
    pub published_through_ms: i64,
}

/// The value of a replica's member key (its revision is what counts).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct MemberValue {}

/// The bucket's configuration for `replicas` copies.
pub fn bucket_config(replicas: usize) -> kv::Config {
    kv::Config {
        bucket: BUCKET.to_string(),
        description: "Scheduler shard leases and replica membership".to_string(),
        history: 1,
        max_age: BUCKET_MAX_AGE,
        max_bytes: BUCKET_MAX_BYTES,
        max_value_size: 1024,
        storage: async_nats::jetstream::stream::StorageType::File,
        num_replicas: replicas.max(1),
        ..Default::default()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LeaseError {
    #[error("creating the lease bucket: {0}")]
    Bucket(#[from] async_nats::jetstream::context::CreateKeyValueError),
    #[error("watching the lease bucket: {0}")]
    Watch(#[from] kv::WatchError),
}
