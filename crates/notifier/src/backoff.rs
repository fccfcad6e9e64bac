//! When to try a failed delivery again, and when to stop trying. Free of I/O.

use chrono::{DateTime, Utc};
use std::time::Duration;

/// The retry policy of deliveries.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub initial: Duration,
    pub max: Duration,
    pub give_up_after: Duration,
}

/// What to do after a transient failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    RetryAt(DateTime<Utc>),
    GiveUp,
}

impl RetryPolicy {
    /// The wait after the `failed_attempts`-th failed attempt (1-based):
    /// `initial`, doubling, at most `max`; a receiver's `Retry-After` wins
    /// when it asks for longer.
    pub fn delay(&self, failed_attempts: u32, retry_after: Option<Duration>) -> Duration {
        let exponent = failed_attempts.saturating_sub(1).min(30);
        let doubled = self.initial.saturating_mul(1u32 << exponent).min(self.max);
        match retry_after {
            Some(asked) => asked.max(doubled),
            None => doubled,
        }
    }

    /// Retry after `delay`, unless that lands beyond `created_at + give_up_after`.
    ///
    /// A receiver's `Retry-After` is untrusted input: any value, up to
    /// `u64::MAX` seconds, must end in a decision rather than an overflow
    /// (a panic here once left the delivery pending forever and blocked
    /// every later alert to its contact). A time past the representable
    /// range is past the deadline: give up.
    pub fn next(
        &self,
        created_at: DateTime<Utc>,
        now: DateTime<Utc>,
        failed_attempts: u32,
        retry_after: Option<Duration>,
    ) -> Next {
        let delay = self.delay(failed_attempts, retry_after);
        let Some(at) = later_by(now, delay) else {
            return Next::GiveUp;
        };
        match later_by(created_at, self.give_up_after) {
            Some(deadline) if at > deadline => Next::GiveUp,
            _ => Next::RetryAt(at),
        }
    }
}

/// `t + d`, or `None` when that is not a representable time.
fn later_by(t: DateTime<Utc>, d: Duration) -> Option<DateTime<Utc>> {
    t.checked_add_signed(chrono::Duration::from_std(d).ok()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy() -> RetryPolicy {
        RetryPolicy {
            initial: Duration::from_secs(5),
            max: Duration::from_secs(60),
            give_up_after: Duration::from_secs(3600),
        }
    }

    #[test]
    fn delays_double_up_to_the_cap() {
        let p = policy();
        let delays: Vec<u64> = (1..=6).map(|n| p.delay(n, None).as_secs()).collect();
        assert_eq!(delays, [5, 10, 20, 40, 60, 60]);
        assert_eq!(p.delay(200, None), Duration::from_secs(60), "no overflow");
    }

    #[test]
    fn retry_after_is_honoured_when_longer() {
        let p = policy();
        assert_eq!(
            p.delay(1, Some(Duration::from_secs(30))),
            Duration::from_secs(30)
        );
        assert_eq!(
            p.delay(4, Some(Duration::from_secs(1))),
            Duration::from_secs(40)
        );
    }

    #[test]
    fn gives_up_when_the_next_attempt_would_be_too_late() {
        let p = policy();
        let created = Utc::now();
        let early = created + chrono::Duration::seconds(10);
        assert_eq!(
            p.next(created, early, 1, None),
            Next::RetryAt(early + chrono::Duration::seconds(5))
        );
        let late = created + chrono::Duration::seconds(3590);
        assert_eq!(p.next(created, late, 3, None), Next::GiveUp);
        assert_eq!(
            p.next(created, early, 1, Some(Duration::from_secs(7200))),
            Next::GiveUp,
            "a Retry-After beyond the deadline ends it"
        );
    }

    #[test]
    fn an_absurd_retry_after_gives_up_instead_of_overflowing() {
        let p = policy();
        let now = Utc::now();
        for secs in [u64::MAX, u64::MAX / 2, i64::MAX as u64, 1 << 40] {
            assert_eq!(
                p.next(now, now, 1, Some(Duration::from_secs(secs))),
                Next::GiveUp,
                "Retry-After: {secs}"
            );
        }
        let endless = RetryPolicy {
            give_up_after: Duration::MAX,
            ..p
        };
        assert_eq!(
            endless.next(now, now, 1, Some(Duration::from_secs(u64::MAX))),
            Next::GiveUp
        );
        assert_eq!(
            endless.next(now, now, 1, None),
            Next::RetryAt(now + chrono::Duration::seconds(5))
        );
    }
}
