//! Telling every gateway replica that a key was revoked, so that each drops
//! it from its [`KnownKeys`](crate::access::auth_cache::KnownKeys) at once.
//!
//! Core NATS, not JetStream: the message only matters to the replicas
//! running now (one started later has nothing cached), and every replica
//! must get it (a plain subscription, no queue group). What core NATS can
//! lose (a message sent while a replica was disconnected) is covered by the
//! cache itself: it is not used while NATS is down, it is emptied on
//! reconnect, and its entries live `auth.positive_cache_secs` at most.

use crate::state::AppState;
use actix_web::web;
use futures::StreamExt;
use std::time::Duration;
use uptime_contracts::{ApiKeyRevokedV1, Message};

/// How long a revocation waits for its announcement to reach the server
/// before answering anyway (the revocation itself is committed).
const ANNOUNCE_TIMEOUT: Duration = Duration::from_secs(2);

/// The task that listens for revocations; it stops when this is dropped.
pub struct Listener(tokio::task::JoinHandle<()>);

impl Drop for Listener {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Subscribes to revocations (before the API serves anything, so no key is
/// cached that a revocation could miss) and drops each revoked key from this
/// replica's cache until the returned [`Listener`] is dropped.
pub async fn listen(state: web::Data<AppState>) -> Result<Listener, async_nats::SubscribeError> {
    let mut revocations = state.nats.subscribe(ApiKeyRevokedV1::SUBJECT).await?;
    Ok(Listener(tokio::spawn(async move {
        while let Some(msg) = revocations.next().await {
            match ApiKeyRevokedV1::from_bytes(&msg.payload) {
                Ok(revoked) => state.known_keys.forget(&revoked.key_sha256),
                Err(e) => {
                    // Some key was revoked, but which one is unknown: forget
                    // them all rather than keep it.
                    tracing::warn!(error = %e, "undecodable key revocation; forgetting every cached key");
                    state.known_keys.forget_all("undecodable");
                }
            }
        }
        // Only when the client is gone; revocations would no longer arrive.
        tracing::error!("the subscription to key revocations ended; API keys are checked against the database from now on");
        state.known_keys.go_deaf();
    })))
}

/// Tells every replica (this one included) that `key` was revoked. Best
/// effort: the revocation is committed already, and a replica that misses
/// this keeps the key for `auth.positive_cache_secs` at most.
pub async fn announce(state: &AppState, key: &uptime_db::models::ApiKey) {
    if let Err(error) = publish(state, std::slice::from_ref(key)).await {
        tracing::warn!(key_id = key.id, %error, "could not announce a key revocation");
    }
}

/// Makes every replica (this one first) drop `keys` from its cache: keys
/// removed with a membership or an organisation (gone, so revoked in
/// effect), and keys whose holder's role changed (the cached principal
/// holds the role; the next request reads the new one). Replicas do one
/// thing with a revocation message, forget the key, which is what each of
/// these needs. Best effort like [`announce`]; one flush for all.
pub async fn forget_everywhere(state: &AppState, keys: &[uptime_db::models::ApiKey]) {
    if keys.is_empty() {
        return;
    }
    for key in keys {
        state.known_keys.forget(&key.key_sha256);
    }
    if let Err(error) = publish(state, keys).await {
        tracing::warn!(keys = keys.len(), %error, "could not announce keys to forget");
    }
}

/// Publishes the revocation of each of `keys` and flushes: out of the
/// client's buffer and at the server before the caller hears that they are
/// revoked. Gives up after [`ANNOUNCE_TIMEOUT`].
async fn publish(state: &AppState, keys: &[uptime_db::models::ApiKey]) -> Result<(), String> {
    let sent = async {
        for key in keys {
            let msg = ApiKeyRevokedV1 {
                key_id: key.id,
                user_id: key.user_id,
                key_sha256: key.key_sha256.clone(),
                revoked_at: key.revoked_at.unwrap_or_else(chrono::Utc::now),
            };
            let mut headers = async_nats::HeaderMap::new();
            uptime_telemetry::nats::inject_current(&mut headers);
            state
                .nats
                .publish_with_headers(ApiKeyRevokedV1::SUBJECT, headers, msg.to_bytes())
                .await?;
        }
        state.nats.flush().await?;
        Ok::<_, async_nats::Error>(())
    };
    match tokio::time::timeout(ANNOUNCE_TIMEOUT, sent).await {
        Ok(sent) => sent.map_err(|e| e.to_string()),
        Err(_) => Err(format!("timed out after {ANNOUNCE_TIMEOUT:?}")),
    }
}
