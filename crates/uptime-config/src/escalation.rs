//! The `[escalation]` section: escalation policies' bounds and the
//! notifier's sweep that moves unacknowledged incidents to their next step.
//! Shared, so the api-gateway (which refuses a step shorter than the floor)
//! and the notifier (which runs the sweep) read the same variables.
//!
//! ```toml
//! [escalation]
//! min_delay_secs = 60
//! sweep_interval_ms = 5000
//! sweep_batch = 256
//! ```

use serde::Deserialize;

/// The longest delay of one step: a day.
pub const MAX_STEP_DELAY_SECS: u32 = 86_400;

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct EscalationSettings {
    /// The shortest delay a step may have (the API refuses less): waking
    /// the next person sooner than the first could react is noise. Lowered
    /// only by tests.
    pub min_delay_secs: u32,
    /// How often the notifier looks for escalations whose next step is due;
    /// a step goes out at most this late.
    pub sweep_interval_ms: u64,
    /// Escalations advanced per sweep transaction (more wait for the next
    /// round of the same sweep).
    pub sweep_batch: i64,
}

impl Default for EscalationSettings {
    fn default() -> Self {
        Self {
            min_delay_secs: 60,
            sweep_interval_ms: 5_000,
            sweep_batch: 256,
        }
    }
}
