//! Which checkers are alive, per region: the `uptime_checkers` key-value
//! bucket.
//!
//! Every checker puts a [`CheckerPresenceV1`] under `<region>.<instance_id>`
//! at start and again every third of the presence TTL, and deletes it on a
//! graceful shutdown. The bucket's `max_age` is the TTL, so the entry of a
//! checker that died without saying goodbye expires on the server: a region
//! with no live entry is offline. Checker, recorder and api-gateway all open
//! the bucket through [`open_or_create`], so whoever starts first creates it
//! identically.

use async_nats::jetstream::{self, kv, stream};
use chrono::{DateTime, Utc};
use futures::TryStreamExt;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The bucket's name (its stream is `KV_uptime_checkers`, its subjects
/// `$KV.uptime_checkers.>`).
pub const BUCKET: &str = "uptime_checkers";

/// The bucket's size bound: an entry is ~150 bytes and only the last one per
/// checker is kept, so this holds ~100,000 checkers. Like every stream, it
/// is bounded (a KV bucket refuses puts once full).
pub const MAX_BYTES: i64 = 16 << 20;

/// Largest value a checker may put (an entry is a short JSON object).
pub const MAX_VALUE_BYTES: i32 = 4096;

/// What a checker announces about itself (the value under
/// `<region>.<instance_id>` in the `uptime_checkers` key-value bucket, whose
/// entries expire when not renewed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckerPresenceV1 {
    pub instance_id: String,
    pub region: String,
    pub seen_at: DateTime<Utc>,
}

/// The bucket could not be opened or used.
#[derive(Debug, thiserror::Error)]
pub enum PresenceError {
    #[error("presence TTL must be at least one second, got {0:?}")]
    Ttl(Duration),
    #[error("opening the {BUCKET} key-value bucket: {0}")]
    Open(String),
    #[error("announcing checker {key} in {BUCKET}: {source}")]
    Announce {
        key: String,
        #[source]
        source: kv::PutError,
    },
    #[error("withdrawing checker {key} from {BUCKET}: {source}")]
    Withdraw {
        key: String,
        #[source]
        source: kv::DeleteError,
    },
    #[error("listing the live checkers in {BUCKET}: {0}")]
    List(String),
}

/// The bucket's configuration for entries living `ttl`, stored on
/// `replicas` servers.
pub fn config(ttl: Duration, replicas: usize) -> kv::Config {
    kv::Config {
        bucket: BUCKET.to_string(),
        description: "live checkers per region (expire unless renewed)".to_string(),
        history: 1,
        max_age: ttl,
        max_bytes: MAX_BYTES,
        max_value_size: MAX_VALUE_BYTES,
        storage: stream::StorageType::File,
        num_replicas: replicas.max(1),
        ..Default::default()
    }
}

/// Opens the bucket, creating it (on one server) when missing.
pub async fn open_or_create(
    js: &jetstream::Context,
    ttl: Duration,
) -> Result<kv::Store, PresenceError> {
    open_or_create_replicated(js, ttl, 1).await
}

/// Opens the bucket, creating it on `replicas` servers when missing
/// (`nats.stream_replicas`). An existing bucket keeps its replicas (services
/// that pass different counts must not flip it back and forth) and is
/// brought to `ttl` and the size bound when they differ.
pub async fn open_or_create_replicated(
    js: &jetstream::Context,
    ttl: Duration,
    replicas: usize,
) -> Result<kv::Store, PresenceError> {
    if ttl < Duration::from_secs(1) {
        return Err(PresenceError::Ttl(ttl));
    }
    let existing = match js.get_stream(format!("KV_{BUCKET}")).await {
        Ok(stream) => Some(stream.cached_info().config.clone()),
        Err(e) => match e.kind() {
            jetstream::context::GetStreamErrorKind::JetStream(err)
                if err.error_code() == jetstream::ErrorCode::STREAM_NOT_FOUND =>
            {
                None
            }
            _ => return Err(PresenceError::Open(e.to_string())),
        },
    };
    match existing {
        None => match js.create_key_value(config(ttl, replicas)).await {
            Ok(store) => Ok(store),
            // Another service created it in the meantime: use theirs.
            Err(create) => js
                .get_key_value(BUCKET)
                .await
                .map_err(|_| PresenceError::Open(create.to_string())),
        },
        Some(current)
            if current.max_age == ttl
                && current.max_bytes == MAX_BYTES
                && current.max_messages_per_subject == 1 =>
        {
            js.get_key_value(BUCKET)
                .await
                .map_err(|e| PresenceError::Open(e.to_string()))
        }
        Some(current) => {
            tracing::info!(
                bucket = BUCKET,
                from_secs = current.max_age.as_secs_f64(),
                to_secs = ttl.as_secs_f64(),
                "updating the presence bucket's TTL and bounds"
            );
            js.update_key_value(config(ttl, current.num_replicas))
                .await
                .map_err(|e| PresenceError::Open(e.to_string()))
        }
    }
}

/// The key of a checker's entry: `<region>.<instance id>`, the instance id
/// made a valid key token (letters, digits, `-`, `_`, `=`). An id that had to
/// be changed gets a hash of the original appended, so two ids that differ
/// only in such characters keep apart.
pub fn key_of(region: &str, instance_id: &str) -> String {
    let token: String = instance_id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if token == instance_id && !token.is_empty() {
        format!("{region}.{token}")
    } else {
        format!("{region}.{token}-{:016x}", fnv1a(instance_id.as_bytes()))
    }
}

/// FNV-1a: stable across builds and platforms (unlike `DefaultHasher`), so
/// every checker build computes the same key for the same id.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, b| {
        (hash ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Puts (or renews) a checker's entry.
pub async fn announce(
    store: &kv::Store,
    presence: &CheckerPresenceV1,
) -> Result<(), PresenceError> {
    let key = key_of(&presence.region, &presence.instance_id);
    // Serialising a plain data struct cannot fail.
    let value = serde_json::to_vec(presence).expect("presence serialises");
    store
        .put(&key, value.into())
        .await
        .map(|_| ())
        .map_err(|source| PresenceError::Announce { key, source })
}

/// Deletes a checker's entry (a graceful shutdown: its region may be
/// offline at once rather than after the TTL).
pub async fn withdraw(
    store: &kv::Store,
    region: &str,
    instance_id: &str,
) -> Result<(), PresenceError> {
    let key = key_of(region, instance_id);
    store
        .delete(&key)
        .await
        .map_err(|source| PresenceError::Withdraw { key, source })
}

/// Every live checker, ordered by region and instance id. Deleted and
/// expired entries are not live; an entry that is not a
/// [`CheckerPresenceV1`] (someone's hand-made key) is skipped with a warning.
///
/// The keys come from the stream's per-subject counts, then each entry is
/// read directly. (The client's `keys()` listing follows an ordered consumer
/// that waits for as many messages as were pending when it started: an
/// entry expiring meanwhile left it waiting forever.)
pub async fn live(store: &kv::Store) -> Result<Vec<CheckerPresenceV1>, PresenceError> {
    let list_error = |e: &dyn std::fmt::Display| PresenceError::List(e.to_string());
    let subjects: Vec<(String, usize)> = store
        .stream
        .info_with_subjects(format!("{}>", store.prefix))
        .await
        .map_err(|e| list_error(&e))?
        .try_collect()
        .await
        .map_err(|e| list_error(&e))?;
    let mut live = Vec::with_capacity(subjects.len());
    for (subject, _) in subjects {
        let Some(key) = subject.strip_prefix(store.prefix.as_str()) else {
            continue;
        };
        // None: a delete or purge marker, or gone since the listing
        // (withdrawn or expired). Not live either way.
        let Some(value) = store.get(key).await.map_err(|e| list_error(&e))? else {
            continue;
        };
        match serde_json::from_slice::<CheckerPresenceV1>(&value) {
            Ok(presence) => live.push(presence),
            Err(e) => tracing::warn!(bucket = BUCKET, %key, error = %e, "not a checker presence"),
        }
    }
    live.sort_by(|a, b| (&a.region, &a.instance_id).cmp(&(&b.region, &b.instance_id)));
    Ok(live)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_valid_kv_keys_and_distinct() {
        assert_eq!(key_of("eu", "checker-7f9c"), "eu.checker-7f9c");
        let dotted = key_of("eu", "pod.ns.svc");
        let slashed = key_of("eu", "pod_ns_svc");
        assert!(dotted.starts_with("eu.pod_ns_svc-"), "{dotted}");
        assert_ne!(dotted, slashed);
        for id in ["a b", "é", "", "x.y*>", "host:1234"] {
            let key = key_of("us", id);
            let (region, token) = key.split_once('.').unwrap();
            assert_eq!(region, "us");
            assert!(
                !token.is_empty()
                    && token
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "-_=".contains(c)),
                "{id:?} -> {key}"
            );
        }
        assert_eq!(key_of("us", "a b"), key_of("us", "a b"), "stable");
    }

    #[test]
    fn the_bucket_is_bounded_and_keeps_one_entry_per_checker() {
        let config = config(Duration::from_secs(30), 3);
        assert_eq!(config.history, 1);
        assert_eq!(config.max_age, Duration::from_secs(30));
        assert!(config.max_bytes > 0);
        assert!(config.max_value_size > 0);
        assert_eq!(config.num_replicas, 3);
    }
}
