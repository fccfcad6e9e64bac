//! The scheduler's configuration (see `uptime-config` for the layering).

use serde::Deserialize;
use std::time::Duration;
use uptime_config::{DatabaseSettings, NatsSettings, OpsSettings, TelemetrySettings};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct SchedulerSettings {
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub scheduler: ScheduleSettings,
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
    /// How often a standby replica tries to take the leader lock, and how often
    /// the leader confirms it still holds it.
    pub lease_retry_secs: u64,
}

impl Default for ScheduleSettings {
    fn default() -> Self {
        Self {
            lookahead_ms: 1000,
            resync_secs: 300,
            max_in_flight: 10_000,
            lease_retry_secs: 2,
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

    pub(crate) fn lease_interval(&self) -> Duration {
        Duration::from_secs(self.lease_retry_secs.max(1))
    }
}
