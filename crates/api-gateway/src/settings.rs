//! The api-gateway's configuration (see `uptime-config` for the layering).

use serde::Deserialize;
use uptime_config::{
    DatabaseSettings, NatsSettings, SafetySettings, SmtpSettings, TelemetrySettings,
};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct GatewaySettings {
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub safety: SafetySettings,
    pub rate_limit: RateLimitSettings,
    /// The SMTP relay test alerts to email contacts go through.
    pub smtp: SmtpSettings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct HttpSettings {
    /// Address the API listens on; port 0 picks a free one.
    pub listen: String,
    /// How people reach this API, for links in emails (verification).
    pub public_base_url: String,
    /// HTTP worker threads; 0 = one per core.
    pub workers: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            public_base_url: "http://127.0.0.1:8080".into(),
            workers: 0,
        }
    }
}

/// Requests allowed per API key: a token bucket of `burst` refilled at
/// `per_second`. 0 turns limiting off.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RateLimitSettings {
    pub per_second: u32,
    pub burst: u32,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            per_second: 20,
            burst: 100,
        }
    }
}
