//! What every handler can reach.

use crate::http::error::ApiError;
use crate::http::rate_limit::RateLimiter;
use crate::settings::GatewaySettings;
use async_nats::jetstream;
use uptime_contracts::Message;

pub struct AppState {
    pub pool: uptime_db::Pool,
    pub nats: async_nats::Client,
    pub js: jetstream::Context,
    /// The checkers' presence bucket, read by `GET /api/v1/regions`.
    pub presence: jetstream::kv::Store,
    pub settings: GatewaySettings,
    /// Requests per user (all of a user's keys together).
    pub rate_limiter: RateLimiter,
    /// Pings per heartbeat token.
    pub heartbeat_limiter: RateLimiter<String>,
    /// Digests of well-formed keys that matched no active key lately.
    pub unknown_keys: crate::access::auth_cache::UnknownKeys,
    /// Digests of valid keys lately, forgotten on revocation (every replica).
    pub known_keys: crate::access::auth_cache::KnownKeys,
    /// Seals basic-auth passwords (`secrets`); `None` when no key is
    /// configured.
    pub keyring: Option<std::sync::Arc<uptime_secrets::Keyring>>,
    /// `GET /api/v1/metrics` pages by organisation, each kept for
    /// `tenant_metrics.cache_secs`.
    pub tenant_metrics: crate::metrics_pages::PageCache,
    /// Checks the acknowledge links of alerts (`ack_links`); `None` when no
    /// secret is configured (every link is then 404).
    pub ack_links: Option<uptime_alerts::AckLinks>,
}

impl AppState {
    /// A database connection, or 503 when none can be had.
    pub async fn conn(&self) -> Result<uptime_db::PooledConn, ApiError> {
        Ok(uptime_db::pool::conn(&self.pool).await?)
    }

    /// Publishes `msg` with `Nats-Msg-Id` = `msg_id` and waits for the stream
    /// to acknowledge it; 503 if NATS does not.
    pub async fn publish<M: Message>(&self, msg_id: &str, msg: &M) -> Result<(), ApiError> {
        let headers = uptime_telemetry::nats::headers_with_msg_id(msg_id);
        uptime_contracts::bus::publish_acked(&self.js, headers, msg)
            .await
            .map_err(|e| ApiError::Unavailable(format!("publishing to {}: {e}", M::SUBJECT)))
    }
}
