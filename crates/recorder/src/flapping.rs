//! Flapping: a monitor whose status changes more than `threshold` times
//! within `window` sends one `flapping` alert and has its further
//! transition alerts held until no change came for `stable`. Pure: the
//! times come in the inputs.
//!
//! Only monitors with a threshold keep any state (`monitors.flap_changes`,
//! `monitors.flapping_since`), and only their transitions touch it: a
//! monitor without one costs nothing here. The end of flapping has no
//! transition to ride on (being stable is the absence of one), so the
//! alert sweeper ends it ([`stable_since`]) and releases one alert if the
//! monitor is down then.

use chrono::{DateTime, Duration, Utc};

/// Defaults of a monitor that sets a threshold and leaves the rest.
pub const DEFAULT_WINDOW_SECS: u32 = 600;
pub const DEFAULT_STABLE_SECS: u32 = 900;

/// A monitor's thresholds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlapRules {
    /// More changes than this within `window` is flapping.
    pub threshold: u32,
    pub window: Duration,
    /// No change for this long ends it.
    pub stable: Duration,
}

impl FlapRules {
    /// The rules of a monitor's columns; `None` when it sets no threshold.
    pub fn of(
        threshold: Option<i32>,
        window_secs: Option<i32>,
        stable_secs: Option<i32>,
    ) -> Option<Self> {
        let threshold = u32::try_from(threshold?).ok()?.max(1);
        let secs = |v: Option<i32>, default: u32| {
            Duration::seconds(i64::from(v.map_or(default, |s| s.max(1).unsigned_abs())))
        };
        Some(Self {
            threshold,
            window: secs(window_secs, DEFAULT_WINDOW_SECS),
            stable: secs(stable_secs, DEFAULT_STABLE_SECS),
        })
    }
}

/// A monitor's flapping state.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FlapState {
    /// The recent changes, oldest first (at most `threshold + 1`).
    pub changes: Vec<DateTime<Utc>>,
    /// Since when it is flapping.
    pub since: Option<DateTime<Utc>>,
}

/// What flapping detection made of one transition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Flapping {
    /// Not flapping (or no threshold).
    #[default]
    Stable,
    /// This change started flapping: its alert is the `flapping` notice.
    Starts,
    /// Flapping already: its alert is held.
    Ongoing,
}

impl FlapState {
    /// Notes a transition at `at` (transitions come oldest first). `None`
    /// rules: the monitor counts nothing (flapping it had before its
    /// threshold was removed goes on until the sweeper ends it).
    pub fn observe(&mut self, rules: Option<FlapRules>, at: DateTime<Utc>) -> Flapping {
        let Some(rules) = rules else {
            return if self.since.is_some() {
                Flapping::Ongoing
            } else {
                Flapping::Stable
            };
        };
        // Stable for long enough before this change: the sweeper had not
        // come round yet. This change starts a new count.
        if self.since.is_some()
            && self
                .last_change()
                .is_some_and(|last| at - last >= rules.stable)
        {
            *self = FlapState::default();
        }
        self.changes.retain(|c| at - *c < rules.window);
        self.changes.push(at);
        let keep = usize::try_from(rules.threshold)
            .unwrap_or(usize::MAX)
            .saturating_add(1);
        if self.changes.len() > keep {
            self.changes.drain(..self.changes.len() - keep);
        }
        if self.since.is_some() {
            return Flapping::Ongoing;
        }
        if self.changes.len() > keep - 1 {
            self.since = Some(at);
            return Flapping::Starts;
        }
        Flapping::Stable
    }

    fn last_change(&self) -> Option<DateTime<Utc>> {
        self.changes.last().copied()
    }
}

/// When a flapping monitor whose last change was at `last_change` counts as
/// stable: the sweeper ends its flapping from then on.
pub fn stable_since(last_change: DateTime<Utc>, rules: Option<FlapRules>) -> DateTime<Utc> {
    let stable = rules.map_or(Duration::seconds(i64::from(DEFAULT_STABLE_SECS)), |r| {
        r.stable
    });
    last_change + stable
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn rules() -> Option<FlapRules> {
        FlapRules::of(Some(3), Some(60), Some(120))
    }

    #[test]
    fn more_than_threshold_changes_within_the_window_start_flapping_once() {
        let mut s = FlapState::default();
        let seen: Vec<Flapping> = [0, 10, 20, 30, 40, 50]
            .into_iter()
            .map(|at| s.observe(rules(), t(at)))
            .collect();
        use Flapping::*;
        assert_eq!(seen, [Stable, Stable, Stable, Starts, Ongoing, Ongoing]);
        assert_eq!(s.since, Some(t(30)));
        assert_eq!(s.changes.len(), 4, "bounded by threshold + 1");
    }

    #[test]
    fn changes_spread_wider_than_the_window_never_flap() {
        let mut s = FlapState::default();
        for i in 0..20 {
            assert_eq!(
                s.observe(rules(), t(i * 25)),
                Flapping::Stable,
                "change {i}"
            );
        }
    }

    #[test]
    fn a_change_after_a_stable_stretch_starts_over() {
        let mut s = FlapState::default();
        for at in [0, 10, 20, 30] {
            s.observe(rules(), t(at));
        }
        assert!(s.since.is_some());
        // 120 s without a change: stable, even if the sweeper did not run.
        assert_eq!(s.observe(rules(), t(150)), Flapping::Stable);
        assert_eq!(s.since, None);
        assert_eq!(s.changes, [t(150)]);
    }

    #[test]
    fn without_a_threshold_nothing_is_kept() {
        let mut s = FlapState::default();
        for at in 0..10 {
            assert_eq!(s.observe(None, t(at)), Flapping::Stable);
        }
        assert_eq!(s, FlapState::default());
    }

    #[test]
    fn the_defaults_and_the_stable_time() {
        let r = FlapRules::of(Some(5), None, None).unwrap();
        assert_eq!(r.window, Duration::seconds(600));
        assert_eq!(r.stable, Duration::seconds(900));
        assert_eq!(FlapRules::of(None, Some(5), Some(5)), None);
        assert_eq!(stable_since(t(0), rules()), t(120));
        assert_eq!(stable_since(t(0), None), t(900));
    }
}
