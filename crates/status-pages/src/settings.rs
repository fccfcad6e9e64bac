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

/// The year of the feeds' tag URIs: fixed, so ids never change (RFC 4151
/// asks only that the authority held its name on that date).
pub const TAG_YEAR: u16 = 2026;

impl ServeSettings {
    /// The authority of the feeds' `tag:` URIs (RFC 4151): the host of
    /// `public_base_url`, lowercase, without port or user; so ids differ
    /// from one installation to the next.
    pub fn tag_authority(&self) -> String {
        let url = self.public_base_url.trim();
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let authority = after_scheme
            .split(['/', '?', '#'])
            .next()
            .unwrap_or_default();
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let host = match host.strip_prefix('[') {
            // An IPv6 literal is no DNS name: its colons become dashes.
            Some(v6) => v6.split(']').next().unwrap_or_default().replace(':', "-"),
            None => host.split(':').next().unwrap_or_default().to_string(),
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if host.is_empty() {
            "localhost".into()
        } else {
            host
        }
    }

    pub fn refresh_interval(&self) -> Duration {
        Duration::from_millis(self.refresh_ms.max(100))
    }

    pub fn aggregate_interval(&self) -> Duration {
        Duration::from_secs(self.aggregate_refresh_secs.max(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tag_authority_is_the_public_hosts_name() {
        for (url, authority) in [
            (
                "https://Status.Example.com:8443/path?q",
                "status.example.com",
            ),
            ("http://user:pw@pages.example.org.", "pages.example.org"),
            ("http://127.0.0.1:8090", "127.0.0.1"),
            ("http://[::1]:8090/", "--1"),
            ("", "localhost"),
        ] {
            let settings = ServeSettings {
                public_base_url: url.into(),
                ..ServeSettings::default()
            };
            assert_eq!(settings.tag_authority(), authority, "{url}");
        }
    }
}
