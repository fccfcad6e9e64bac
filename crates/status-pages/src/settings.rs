//! The status-pages service's configuration (see `uptime-config` for the
//! layering: `UPTIME_STATUS_PAGES__REFRESH_MS=2000`, ...).

use serde::Deserialize;
use std::time::Duration;
use uptime_config::{DatabaseSettings, OpsSettings, TelemetrySettings};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct StatusPagesSettings {
    pub database: DatabaseSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub status_pages: ServeSettings,
}

/// How pages are served and how fresh they are.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ServeSettings {
    /// The public listener (pages, badges, `/healthz`, `/readyz`).
    pub listen: String,
    /// HTTP worker threads (0: one per core).
    pub workers: usize,
    /// How often pages, badges, monitor states and open incidents are read
    /// (one set of statements per refresh, whatever the traffic): a state
    /// change shows within about this long.
    pub refresh_ms: u64,
    /// How often the aggregates are read (90 days of daily uptime, a week
    /// of hourly response times), which change slowly and cost more.
    pub aggregate_refresh_secs: u64,
    /// Requests per second allowed per client address (0: no limit), with
    /// bursts of `rate_limit_burst`; past it, `429` with `Retry-After`.
    pub rate_limit_per_second: u32,
    pub rate_limit_burst: u32,
    /// Client addresses whose rate limits are remembered at once (the
    /// least recently seen are forgotten past it).
    pub rate_limit_capacity: u64,
    /// Take the client address from the first `X-Forwarded-For` entry (set
    /// it only behind a proxy that writes that header).
    pub trust_forwarded_for: bool,
    /// Where this service is reached from outside: the base of the links
    /// in subscription mails (confirm, unsubscribe, the page).
    pub public_base_url: String,
    /// Email subscriptions a page takes, pending ones included; past it a
    /// subscribe request is refused (`409`).
    pub max_subscribers_per_page: i64,
    /// Subscribe requests allowed per client address and hour, on top of
    /// the page limit above (each may send a confirmation mail), in bursts
    /// of `subscribe_rate_limit_burst`; past it, `429`.
    pub subscribe_rate_limit_per_hour: u32,
    pub subscribe_rate_limit_burst: u32,
    /// Maintenance windows shown on a page: those open now and those
    /// starting within this many days.
    pub maintenance_horizon_days: u32,
}

impl Default for ServeSettings {
    fn default() -> Self {
        Self {
            listen: "0.0.0.0:8090".into(),
            workers: 0,
            refresh_ms: 2000,
            aggregate_refresh_secs: 60,
            rate_limit_per_second: 20,
            rate_limit_burst: 60,
            rate_limit_capacity: 100_000,
            trust_forwarded_for: false,
            public_base_url: "http://localhost:8090".into(),
            max_subscribers_per_page: 10_000,
            subscribe_rate_limit_per_hour: 10,
            subscribe_rate_limit_burst: 5,
            maintenance_horizon_days: 14,
        }
    }
}

impl ServeSettings {
    pub fn refresh_interval(&self) -> Duration {
        Duration::from_millis(self.refresh_ms.max(100))
    }

    pub fn aggregate_interval(&self) -> Duration {
        Duration::from_secs(self.aggregate_refresh_secs.max(1))
    }
}
