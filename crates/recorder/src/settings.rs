//! The recorder's configuration (see `uptime-config` for the layering):
//! `UPTIME_RECORDER__BATCH_SIZE`, `UPTIME_RECORDER__BATCH_WAIT_MS`, ...

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
}
