//! Warnings that recur while a NATS node is down (a failed publish per
//! message in flight and per retry, an error per attempt of the scheduler's
//! change feed to recreate its consumer, a failed receive per pull of a
//! consumer) are logged at the first occurrence, then at most once a period
//! with how many were held back: the same fault once wrote a megabyte of
//! log lines in seconds, and 1,227 notifier lines in one chaos run.
//!
//! Every service logs through `tracing`; a recurring warning asks a
//! [`Throttle`] first:
//!
//! ```
//! use std::time::Duration;
//! static RECEIVE_ERRORS: uptime_telemetry::Throttle =
//!     uptime_telemetry::Throttle::new(Duration::from_secs(5));
//! if let Some(held_back) = RECEIVE_ERRORS.admit() {
//!     tracing::warn!(held_back, "receiving failed (logged at most every 5 s)");
//! }
//! ```

use std::time::{Duration, Instant};

/// Lets one occurrence of a recurring warning through per period.
#[derive(Debug)]
pub struct Throttle {
    every: Duration,
    /// When the last one was let through, and how many were held back since.
    state: std::sync::Mutex<(Option<Instant>, u64)>,
}

impl Throttle {
    /// A `const fn`, so that a throttle can be a `static` beside the warning
    /// it guards.
    pub const fn new(every: Duration) -> Self {
        Self {
            every,
            state: std::sync::Mutex::new((None, 0)),
        }
    }

    /// `Some(held back since the last)` when this occurrence is to be logged.
    pub fn admit(&self) -> Option<u64> {
        self.admit_at(Instant::now())
    }

    /// [`Throttle::admit`] at `now` (tests pass their own instants).
    pub fn admit_at(&self, now: Instant) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        match state.0 {
            Some(at) if now.saturating_duration_since(at) < self.every => {
                state.1 += 1;
                None
            }
            _ => {
                state.0 = Some(now);
                Some(std::mem::take(&mut state.1))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_goes_through_and_the_rest_are_counted_until_the_period_ends() {
        let hourly = Throttle::new(Duration::from_secs(3600));
        assert_eq!(hourly.admit(), Some(0), "the first is logged");
        assert_eq!(hourly.admit(), None);
        assert_eq!(hourly.admit(), None);
        let always = Throttle::new(Duration::ZERO);
        assert_eq!(always.admit(), Some(0));
        assert_eq!(always.admit(), Some(0));
    }

    #[test]
    fn the_next_line_after_the_period_says_how_many_were_held_back() {
        let start = Instant::now();
        let every_5s = Throttle::new(Duration::from_secs(5));
        assert_eq!(every_5s.admit_at(start), Some(0));
        for ms in [1, 100, 4_999] {
            assert_eq!(every_5s.admit_at(start + Duration::from_millis(ms)), None);
        }
        assert_eq!(every_5s.admit_at(start + Duration::from_secs(5)), Some(3));
        assert_eq!(every_5s.admit_at(start + Duration::from_secs(6)), None);
        assert_eq!(every_5s.admit_at(start + Duration::from_secs(10)), Some(1));
    }
}
