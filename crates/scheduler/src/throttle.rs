//! Warnings that recur while a NATS node is down (a failed publish per
//! message in flight and per retry, an error per attempt of the change
//! feed to recreate its consumer) are logged at the first occurrence, then
//! at most once a period with how many were held back: the same fault once
//! wrote a megabyte of log lines in seconds.

use std::time::Duration;

/// Lets one occurrence of a recurring warning through per period.
pub(crate) struct Throttle {
    every: Duration,
    /// When the last one was let through, and how many were held back since.
    state: std::sync::Mutex<(Option<std::time::Instant>, u64)>,
}

impl Throttle {
    pub(crate) const fn new(every: Duration) -> Self {
        Self {
            every,
            state: std::sync::Mutex::new((None, 0)),
        }
    }

    /// `Some(held back since the last)` when this occurrence is to be logged.
    pub(crate) fn admit(&self) -> Option<u64> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let now = std::time::Instant::now();
        match state.0 {
            Some(at) if now.duration_since(at) < self.every => {
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
}
