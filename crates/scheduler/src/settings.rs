//! The scheduler's configuration (see `uptime-config` for the layering).

use serde::Deserialize;
use std::time::Duration;
use uptime_config::{
    DatabaseSettings, NatsSettings, OpsSettings, RegionsSettings, TelemetrySettings,
};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct SchedulerSettings {
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub scheduler: ScheduleSettings,
    /// Where monitors are checked from (`UPTIME_REGIONS__*`).
    pub regions: RegionsSettings,
}

/// `UPTIME_SCHEDULER__*`
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ScheduleSettings {
    /// How far ahead configurations are read from the database, so that each
    /// check is published at its due instant without waiting on a query.
    pub lookahead_ms: u64,
    /// Every so often the whole set of active monitors is read again: the
    /// safety net for a lost `MonitorChangedV1`.
    pub resync_secs: u64,
    /// Publishes awaiting their stream acknowledgement at once.
    pub max_in_flight: usize,
    /// How often a replica renews its shard leases and its membership, and
    /// takes free shards (see `lease`).
    pub lease_retry_secs: u64,
    /// A lease not renewed for this long is taken over by another replica
    /// (at least three renewals: see `lease_timing`).
    pub lease_ttl_secs: u64,
    /// Monitors are hashed into this many shards (1..=4096), each scheduled
    /// by one replica. Every replica of a deployment must use the same
    /// number; changing it means stopping all replicas first.
    pub shards: u16,
    /// A shard that moves between replicas within this long resumes at its
    /// last holder's last published slot, publishing every slot of the gap
    /// at once; after a longer gap each monitor's latest unrecorded slot is
    /// caught up at the catch-up rate (as after a restart).
    pub resume_max_gap_secs: u64,
    /// Checks already overdue when their monitor is loaded (a start, a bulk
    /// import, a resume) go out at this multiple of the steady rate (the sum
    /// of 1/interval over all monitors), on top of the regular slots; see
    /// `core::catchup`. The default 0.25 keeps a machine sized for its
    /// steady load (1,000,000 monitors at 300 s on two cores) within reach
    /// while it catches up: an import is then all checked within 0.8 of an
    /// interval. At 1.0 an outage shorter than an interval is caught up in
    /// full before the next slots, and an import within half an interval,
    /// for a machine with that much room.
    pub catchup_headroom: f64,
    /// ...but never slower than this many checks a second (also the burst
    /// that goes at once, with one second's worth of the rate), so a small
    /// installation catches up at once.
    pub catchup_min_per_sec: f64,
    /// At most this many bytes of check configurations are kept, the last
    /// one read of each monitor, so that its checks go out on time from it
    /// while PostgreSQL cannot be read (0: none; see `core::config_cache`).
    /// The default covers a million monitors of the bench's kind (short
    /// http targets); larger specs take their encoded length more each.
    pub config_cache_bytes: u64,
}

/// 256 MiB: a million monitors of the bench's kind take 208 MB
/// (`core/tests/config_cache.rs`).
pub const DEFAULT_CONFIG_CACHE_BYTES: u64 = 256 * 1024 * 1024;

impl Default for ScheduleSettings {
    fn default() -> Self {
        Self {
            lookahead_ms: 1000,
            resync_secs: 300,
            max_in_flight: 10_000,
            lease_retry_secs: 2,
            lease_ttl_secs: 10,
            shards: 64,
            resume_max_gap_secs: 30,
            catchup_headroom: 0.25,
            catchup_min_per_sec: 1_000.0,
            config_cache_bytes: DEFAULT_CONFIG_CACHE_BYTES,
        }
    }
}

impl ScheduleSettings {
    pub(crate) fn lookahead(&self) -> i64 {
        self.lookahead_ms.clamp(50, 60_000) as i64
    }

    pub(crate) fn resync_interval(&self) -> Duration {
        Duration::from_secs(self.resync_secs.max(1))
    }

    pub(crate) fn catchup(&self) -> crate::core::CatchupPolicy {
        let finite = |v: f64| if v.is_finite() { v.max(0.0) } else { 0.0 };
        crate::core::CatchupPolicy {
            headroom: finite(self.catchup_headroom),
            min_per_sec: finite(self.catchup_min_per_sec),
        }
    }

    pub(crate) fn lease_timing(&self) -> crate::lease::LeaseTiming {
        let renew_every_ms = self.lease_retry_secs.clamp(1, 60) as i64 * 1000;
        crate::lease::LeaseTiming {
            shards: self.shards.clamp(1, crate::shards::MAX_SHARDS),
            ttl_ms: (self.lease_ttl_secs.min(600) as i64 * 1000).max(3 * renew_every_ms),
            renew_every_ms,
        }
    }

    pub(crate) fn config_cache_bytes(&self) -> usize {
        usize::try_from(self.config_cache_bytes).unwrap_or(usize::MAX)
    }

    pub(crate) fn resume_max_gap_ms(&self) -> i64 {
        self.resume_max_gap_secs.min(300) as i64 * 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catchup_budget_comes_from_defaults_file_and_environment() {
        let defaults = ScheduleSettings::default().catchup();
        assert_eq!((defaults.headroom, defaults.min_per_sec), (0.25, 1_000.0));

        let file = std::env::temp_dir().join(format!("scheduler-{}.toml", std::process::id()));
        std::fs::write(
            &file,
            "[scheduler]\ncatchup_headroom = 0.5\ncatchup_min_per_sec = 200\n",
        )
        .unwrap();
        let loaded: SchedulerSettings = uptime_config::load_from(Some(&file)).unwrap();
        assert_eq!(loaded.scheduler.catchup().headroom, 0.5);
        assert_eq!(loaded.scheduler.catchup().min_per_sec, 200.0);

        std::env::set_var("UPTIME_SCHEDULER__CATCHUP_HEADROOM", "1.5");
        let loaded: SchedulerSettings = uptime_config::load_from(Some(&file)).unwrap();
        std::env::remove_var("UPTIME_SCHEDULER__CATCHUP_HEADROOM");
        std::fs::remove_file(&file).unwrap();
        assert_eq!(loaded.scheduler.catchup().headroom, 1.5, "env over file");
        assert_eq!(loaded.scheduler.catchup().min_per_sec, 200.0);

        let nonsense = ScheduleSettings {
            catchup_headroom: f64::NAN,
            catchup_min_per_sec: -5.0,
            ..ScheduleSettings::default()
        };
        let policy = nonsense.catchup();
        assert_eq!((policy.headroom, policy.min_per_sec), (0.0, 0.0));
        assert_eq!(policy.rate_per_sec(1_000.0), 1.0, "a backlog still moves");
    }

    #[test]
    fn lease_settings_are_kept_within_what_the_protocol_needs() {
        let defaults = ScheduleSettings::default().lease_timing();
        assert_eq!(
            (defaults.shards, defaults.ttl_ms, defaults.renew_every_ms),
            (64, 10_000, 2_000)
        );
        let odd = ScheduleSettings {
            shards: 0,
            lease_ttl_secs: 1,
            lease_retry_secs: 5,
            resume_max_gap_secs: 3_600,
            ..ScheduleSettings::default()
        };
        let timing = odd.lease_timing();
        assert_eq!(timing.shards, 1);
        assert_eq!(timing.ttl_ms, 15_000, "at least three renewals");
        assert_eq!(
            odd.resume_max_gap_ms(),
            300_000,
            "within the duplicate window"
        );
        let many = ScheduleSettings {
            shards: u16::MAX,
            ..ScheduleSettings::default()
        };
        assert_eq!(many.lease_timing().shards, crate::shards::MAX_SHARDS);
    }
}
