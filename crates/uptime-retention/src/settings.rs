//! Retention settings, the `retention` section of a service's configuration
//! (`UPTIME_RETENTION__RESULTS_DAYS`, ...).

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RetentionSettings {
    /// Raw check results older than this many days are dropped (whole
    /// partitions at a time).
    pub results_days: u32,
    /// Daily uptime rollups are kept this many days (about five years).
    pub rollups_days: u32,
    /// Delivered and failed alert deliveries, and their attempts, are kept
    /// this many days.
    pub deliveries_days: u32,
    /// Published outbox rows are kept this many hours.
    pub outbox_hours: u32,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            results_days: 90,
            rollups_days: 5 * 366,
            deliveries_days: 30,
            outbox_hours: 24,
        }
    }
}
