//! The recorder's configuration (see `uptime-config` for the layering):
//! `UPTIME_RECORDER__BATCH_SIZE`, `UPTIME_RECORDER__BATCH_WAIT_MS`, ...
//! and the retention the recorder runs: `UPTIME_RETENTION__DELIVERIES_DAYS`,
//! `UPTIME_RETENTION__INTERVAL_SECS`, ... (see `uptime_retention::RetentionSettings`).

use serde::Deserialize;
use std::time::Duration;
use uptime_config::{DatabaseSettings, NatsSettings, OpsSettings, TelemetrySettings};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default)]
pub struct RecorderSettings {
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub ops: OpsSettings,
    pub recorder: RecorderOptions,
    /// What is kept how long, and how often the retention round runs.
    pub retention: uptime_retention::RetentionSettings,
    /// The regions monitors are checked from (`UPTIME_REGIONS__DEFAULT`, ...).
    pub regions: uptime_config::RegionsSettings,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RecorderOptions {
    /// Most results recorded in one transaction.
    pub batch_size: usize,
    /// How long a batch waits for more results after its first one.
    pub batch_wait_ms: u64,
    /// Time between sweeps of the outbox relay.
    pub relay_interval_ms: u64,
    /// Outbox rows younger than this are left to the batch that wrote them.
    pub relay_min_age_ms: u64,
    /// How long JetStream waits for an ack before redelivering: how long the
    /// results a recorder held when it died wait for another one. A batch
    /// still being recorded reports progress every third of it.
    pub ack_wait_secs: u64,
    /// Delay before a batch that failed on a transient database error is redelivered.
    pub retry_delay_ms: u64,
    /// A round of several regions is decided without the regions still
    /// silent this long after its due time plus the monitor's timeout.
    pub round_grace_secs: u64,
    /// How often the rounds past their deadline are swept.
    pub round_sweep_interval_ms: u64,
    /// Most rounds decided in one sweeping transaction.
    pub round_sweep_batch: u32,
    /// How often maintenance windows are swept: how late after its planned
    /// start or end a window takes effect, at most.
    pub maintenance_sweep_interval_ms: u64,
    /// How often due reminders and releasable held alerts are swept.
    pub alert_sweep_interval_ms: u64,
    /// Most incidents (or flapping monitors) one sweeping pass handles.
    pub alert_sweep_batch: u32,
}

impl Default for RecorderOptions {
    fn default() -> Self {
        Self {
            batch_size: 500,
            batch_wait_ms: 20,
            relay_interval_ms: 1_000,
            relay_min_age_ms: 2_000,
            ack_wait_secs: 6,
            retry_delay_ms: 2_000,
            round_grace_secs: 5,
            round_sweep_interval_ms: 1_000,
            round_sweep_batch: 200,
            maintenance_sweep_interval_ms: 5_000,
            alert_sweep_interval_ms: 5_000,
            alert_sweep_batch: 500,
        }
    }
}

impl RecorderOptions {
    pub fn batch_wait(&self) -> Duration {
        Duration::from_millis(self.batch_wait_ms)
    }

    pub fn ack_wait(&self) -> Duration {
        Duration::from_secs(self.ack_wait_secs.max(1))
    }

    pub fn retry_delay(&self) -> Duration {
        Duration::from_millis(self.retry_delay_ms)
    }

    pub fn round_sweep_interval(&self) -> Duration {
        Duration::from_millis(self.round_sweep_interval_ms.max(10))
    }

    pub fn maintenance_sweep_interval(&self) -> Duration {
        Duration::from_millis(self.maintenance_sweep_interval_ms.max(50))
    }

    pub fn alert_sweep_interval(&self) -> Duration {
        Duration::from_millis(self.alert_sweep_interval_ms.max(10))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The retention section layers like every other: defaults, then the
    /// file, then `UPTIME_RETENTION__*`.
    #[test]
    fn retention_settings_come_from_defaults_file_and_environment() {
        let file =
            std::env::temp_dir().join(format!("recorder-retention-{}.toml", std::process::id()));
        std::fs::write(
            &file,
            "[retention]\ndeliveries_days = 7\noutbox_hours = 12\n",
        )
        .unwrap();
        // Only this test reads this variable.
        std::env::set_var("UPTIME_RETENTION__OUTBOX_HOURS", "48");
        let loaded: Result<RecorderSettings, _> = uptime_config::load_from(Some(&file));
        std::env::remove_var("UPTIME_RETENTION__OUTBOX_HOURS");
        std::fs::remove_file(&file).unwrap();
        let retention = loaded.unwrap().retention;
        assert_eq!(retention.deliveries_days, 7, "from the file");
        assert_eq!(
            retention.outbox_hours, 48,
            "the environment wins over the file"
        );
        assert_eq!(retention.rollups_days, 1830, "the default");
        assert_eq!(retention.interval_secs, 300, "the default");
    }
}
