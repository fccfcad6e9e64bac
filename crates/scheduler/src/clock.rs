//! The scheduler's wall clock, injected so tests can let time pass without
//! waiting for it.
//!
//! Slots are wall-clock instants shared by every replica, so the scheduler
//! reads the system clock (not a monotonic one). A clock can be moved
//! forward ([`Clock::advance_to`]); the leader's loop wakes up when it is,
//! and everything due by the new reading is published at once, exactly as
//! after a long sleep. Tokio's paused time would not do for the integration
//! tests: they wait on real PostgreSQL and NATS, and a paused runtime that
//! has nothing but I/O to wait for jumps to its next timer, which fires the
//! query and lease timeouts while the answers are on their way.

use chrono::Utc;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// The system clock plus a skew that only ever grows (0 in production).
#[derive(Debug, Clone)]
pub struct Clock {
    skew_ms: Arc<watch::Sender<i64>>,
}

impl Default for Clock {
    fn default() -> Self {
        Self::system()
    }
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Self {
            skew_ms: Arc::new(watch::Sender::new(0)),
        }
    }

    /// Milliseconds since the Unix epoch.
    pub fn now_ms(&self) -> i64 {
        Utc::now().timestamp_millis() + *self.skew_ms.borrow()
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let by = i64::try_from(by.as_millis()).unwrap_or(i64::MAX / 2);
        self.skew_ms.send_modify(|skew| *skew += by);
    }

    /// Moves the clock forward until it reads at least `at_ms`; never back.
    pub fn advance_to(&self, at_ms: i64) {
        let ahead = at_ms - self.now_ms();
        if ahead > 0 {
            self.skew_ms.send_modify(|skew| *skew += ahead);
        }
    }

    /// Notified each time the clock is moved.
    pub(crate) fn moves(&self) -> watch::Receiver<i64> {
        self.skew_ms.subscribe()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_moves_forward_only() {
        let clock = Clock::system();
        let start = clock.now_ms();
        clock.advance(Duration::from_secs(60));
        assert!(clock.now_ms() >= start + 60_000);
        let moved = clock.now_ms();
        clock.advance_to(start);
        assert!(clock.now_ms() >= moved, "never back");
        clock.advance_to(moved + 3_600_000);
        assert!(clock.now_ms() >= moved + 3_600_000);
    }

    #[test]
    fn moving_the_clock_is_seen_by_its_copies() {
        let clock = Clock::system();
        let copy = clock.clone();
        let moves = copy.moves();
        assert!(!moves.has_changed().unwrap());
        clock.advance(Duration::from_secs(1));
        assert!(moves.has_changed().unwrap());
        assert!(copy.now_ms() >= Utc::now().timestamp_millis() + 999);
    }
}
