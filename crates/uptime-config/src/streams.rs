//! How large and how old the JetStream streams may grow: one set of bounds
//! for every service, so whichever service starts first creates (or updates)
//! the streams exactly as the others would.
//!
//! Sizing rule (docs/operations.md, "Stream limits"): a work-queue stream must
//! hold the backlog of the longest outage of its consumer you want to ride out,
//!
//! ```text
//! max_bytes ≥ (monitors ÷ mean interval in s) × bytes per message × outage in s
//! ```
//!
//! with about 600 bytes per due check or result as stored (JSON, subject,
//! `Nats-Msg-Id` and `traceparent` headers). The defaults fit a deployment of
//! 10,000 monitors at 60 s (167 messages a second, 0.36 GB an hour per stream)
//! through a 6-hour outage of the checkers or the recorder.

use serde::Deserialize;

/// The bounds of each stream (`UPTIME_NATS__STREAMS__<KEY>`). Ages are in
/// seconds, sizes in bytes; every value must be at least 1 (no stream is
/// unbounded), and every age at least the 10-minute deduplication window.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct StreamLimits {
    /// `UPTIME_CHECKS` (due checks, a work queue): a due check this old is
    /// deleted unread. Past `checks_max_bytes` publishes are refused.
    pub checks_max_age_secs: u64,
    pub checks_max_bytes: u64,
    /// `UPTIME_RESULTS` (results, a work queue): a result this old is deleted
    /// unrecorded, so this is the longest recorder or PostgreSQL outage that
    /// loses nothing. Past `results_max_bytes` publishes are refused.
    pub results_max_age_secs: u64,
    pub results_max_bytes: u64,
    /// `UPTIME_MONITORS` (monitor changes, a feed kept for catching up):
    /// the oldest changes are dropped past either bound.
    pub monitors_max_age_secs: u64,
    pub monitors_max_bytes: u64,
    /// `UPTIME_EVENTS` (state changes and certificate warnings, kept after
    /// the notifier read them): the oldest events are dropped past either bound.
    pub events_max_age_secs: u64,
    pub events_max_bytes: u64,
    /// `UPTIME_DEAD` (dead letters: messages a consumer can never handle,
    /// kept for inspection and replay): the oldest are dropped past either bound.
    pub dead_max_age_secs: u64,
    pub dead_max_bytes: u64,
}

const HOUR: u64 = 3600;
const GIB: u64 = 1 << 30;
const MIB: u64 = 1 << 20;

impl Default for StreamLimits {
    fn default() -> Self {
        Self {
            checks_max_age_secs: 6 * HOUR,
            checks_max_bytes: 2 * GIB,
            results_max_age_secs: 24 * HOUR,
            results_max_bytes: 4 * GIB,
            monitors_max_age_secs: HOUR,
            monitors_max_bytes: 256 * MIB,
            events_max_age_secs: 7 * 24 * HOUR,
            events_max_bytes: GIB,
            dead_max_age_secs: 7 * 24 * HOUR,
            dead_max_bytes: 256 * MIB,
        }
    }
}

impl StreamLimits {
    /// Every setting by its name under `nats.streams`, for validation and
    /// error messages.
    pub fn named(&self) -> [(&'static str, u64); 10] {
        [
            ("checks_max_age_secs", self.checks_max_age_secs),
            ("checks_max_bytes", self.checks_max_bytes),
            ("results_max_age_secs", self.results_max_age_secs),
            ("results_max_bytes", self.results_max_bytes),
            ("monitors_max_age_secs", self.monitors_max_age_secs),
            ("monitors_max_bytes", self.monitors_max_bytes),
            ("events_max_age_secs", self.events_max_age_secs),
            ("events_max_bytes", self.events_max_bytes),
            ("dead_max_age_secs", self.dead_max_age_secs),
            ("dead_max_bytes", self.dead_max_bytes),
        ]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Default)]
    #[serde(default)]
    struct Sample {
        nats: crate::NatsSettings,
    }

    #[test]
    fn one_limit_set_in_a_file_keeps_the_other_defaults_of_its_stream() {
        let dir =
            std::env::temp_dir().join(format!("uptime-config-streams-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(&file, "[nats.streams]\nevents_max_bytes = 1234\n").unwrap();
        // Only this test touches this variable.
        std::env::set_var("UPTIME_NATS__STREAMS__RESULTS_MAX_AGE_SECS", "7200");
        let loaded: Sample = crate::load_from(Some(&file)).unwrap();
        std::env::remove_var("UPTIME_NATS__STREAMS__RESULTS_MAX_AGE_SECS");
        let limits = loaded.nats.streams;
        assert_eq!(limits.events_max_bytes, 1234);
        assert_eq!(limits.results_max_age_secs, 7200, "from the environment");
        assert_eq!(
            limits.events_max_age_secs,
            StreamLimits::default().events_max_age_secs
        );
        assert_eq!(
            limits.checks_max_bytes,
            StreamLimits::default().checks_max_bytes
        );
    }
}
