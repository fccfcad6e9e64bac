//! Whether a service's loops are still going round, for `/readyz`.
//!
//! A process whose HTTP server answers is not a process that works: a
//! scheduler whose engine had stopped answered ready while it scheduled
//! nothing. Each main loop registers with the service's [`Watchdog`] and
//! [`Progress::tick`]s every time it comes round (a scheduling round, a
//! consumer's pull, idle or not, a sweep); `/readyz` is 503 while any loop
//! has not ticked within its bound, naming it (see
//! [`crate::Readiness::with_watchdog`]).
//!
//! A loop's bound is `ops.stall_after_secs`, or three of its own periods if
//! that is longer (a sweep every five minutes is not stalled after two).
//! Time is read from a [`MonotonicClock`]; tests move a manual one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Elapsed time since some fixed start, never going back.
#[derive(Clone)]
pub struct MonotonicClock(Arc<dyn Fn() -> Duration + Send + Sync>);

impl MonotonicClock {
    /// The system's monotonic clock.
    pub fn system() -> Self {
        let start = Instant::now();
        Self(Arc::new(move || start.elapsed()))
    }

    /// A clock that reads `now` (tests advance it).
    pub fn manual(now: Arc<AtomicU64>) -> Self {
        Self(Arc::new(move || {
            Duration::from_millis(now.load(Ordering::SeqCst))
        }))
    }

    fn now(&self) -> Duration {
        (self.0)()
    }
}

impl std::fmt::Debug for MonotonicClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MonotonicClock")
    }
}

/// One registered loop.
#[derive(Debug)]
struct Watched {
    name: String,
    bound: Duration,
    /// Clock reading of the last tick, in milliseconds.
    last_tick_ms: AtomicU64,
}

/// A loop's handle: [`Progress::tick`] each time it comes round. Cheap to
/// clone (a handler task may tick for its loop).
#[derive(Debug, Clone)]
pub struct Progress {
    /// `None`: watched by nobody (tests and benchmarks that run a loop
    /// without a service around it).
    watched: Option<(Arc<Watched>, MonotonicClock)>,
}

impl Progress {
    /// A handle whose ticks go nowhere.
    pub fn unwatched() -> Self {
        Self { watched: None }
    }

    /// The loop came round: it is making progress now.
    pub fn tick(&self) {
        if let Some((watched, clock)) = &self.watched {
            watched
                .last_tick_ms
                .store(millis(clock.now()), Ordering::Relaxed);
        }
    }
}

impl Default for Progress {
    fn default() -> Self {
        Self::unwatched()
    }
}

/// The loops of one service and how long each may go without a tick.
#[derive(Debug, Clone)]
pub struct Watchdog {
    clock: MonotonicClock,
    stall_after: Duration,
    loops: Arc<Mutex<Vec<Arc<Watched>>>>,
}

impl Watchdog {
    /// Loops registered here are stalled after `stall_after` without a tick
    /// (or three of their periods, if longer).
    pub fn new(stall_after: Duration) -> Self {
        Self::with_clock(stall_after, MonotonicClock::system())
    }

    pub fn with_clock(stall_after: Duration, clock: MonotonicClock) -> Self {
        Self {
            clock,
            stall_after,
            loops: Arc::default(),
        }
    }

    /// Registers a loop that comes round at least every `period` when all
    /// is well (zero: only the service's bound applies). It counts as
    /// having ticked now.
    pub fn register(&self, name: impl Into<String>, period: Duration) -> Progress {
        let watched = Arc::new(Watched {
            name: name.into(),
            bound: self.stall_after.max(period.saturating_mul(3)),
            last_tick_ms: AtomicU64::new(millis(self.clock.now())),
        });
        self.loops
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(watched.clone());
        Progress {
            watched: Some((watched, self.clock.clone())),
        }
    }

    /// `Ok` while every loop has ticked within its bound; else why not, one
    /// stalled loop after another.
    pub fn check(&self) -> Result<(), String> {
        let now = millis(self.clock.now());
        let loops = self
            .loops
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let stalled: Vec<String> = loops
            .iter()
            .filter_map(|watched| {
                let since = now.saturating_sub(watched.last_tick_ms.load(Ordering::Relaxed));
                (since > millis(watched.bound)).then(|| {
                    format!(
                        "{} has made no progress for {} s (stalled after {} s)",
                        watched.name,
                        since / 1000,
                        watched.bound.as_secs()
                    )
                })
            })
            .collect();
        if stalled.is_empty() {
            Ok(())
        } else {
            Err(stalled.join("; "))
        }
    }
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn watchdog(stall_after_secs: u64) -> (Watchdog, Arc<AtomicU64>) {
        let now = Arc::new(AtomicU64::new(1_000));
        let clock = MonotonicClock::manual(now.clone());
        (
            Watchdog::with_clock(Duration::from_secs(stall_after_secs), clock),
            now,
        )
    }

    #[test]
    fn a_loop_that_ticks_within_its_bound_is_fine_and_one_that_stops_is_named() {
        let (watchdog, now) = watchdog(60);
        let engine = watchdog.register("scheduler engine", Duration::from_secs(10));
        let consumer = watchdog.register("consumer recorder", Duration::ZERO);
        assert_eq!(watchdog.check(), Ok(()), "both count as ticked at start");
        for _ in 0..10 {
            now.fetch_add(50_000, Ordering::SeqCst);
            engine.tick();
            consumer.tick();
            assert_eq!(watchdog.check(), Ok(()));
        }
        // The engine stops; the consumer goes on.
        now.fetch_add(60_000, Ordering::SeqCst);
        consumer.tick();
        assert_eq!(watchdog.check(), Ok(()), "at its bound, not past it");
        now.fetch_add(1_000, Ordering::SeqCst);
        consumer.tick();
        assert_eq!(
            watchdog.check(),
            Err("scheduler engine has made no progress for 61 s (stalled after 60 s)".into())
        );
        // It comes round again: ready again.
        engine.tick();
        assert_eq!(watchdog.check(), Ok(()));
    }

    #[test]
    fn a_slow_loop_gets_three_of_its_periods() {
        let (watchdog, now) = watchdog(60);
        let _sweep = watchdog.register("sweep", Duration::from_secs(300));
        now.fetch_add(899_000, Ordering::SeqCst);
        assert_eq!(watchdog.check(), Ok(()));
        now.fetch_add(2_000, Ordering::SeqCst);
        assert!(watchdog.check().unwrap_err().starts_with("sweep has made"));
    }

    #[test]
    fn every_stalled_loop_is_named() {
        let (watchdog, now) = watchdog(5);
        let _a = watchdog.register("a", Duration::ZERO);
        let _b = watchdog.register("b", Duration::ZERO);
        now.fetch_add(6_000, Ordering::SeqCst);
        assert_eq!(
            watchdog.check(),
            Err("a has made no progress for 6 s (stalled after 5 s); \
                 b has made no progress for 6 s (stalled after 5 s)"
                .into())
        );
        Progress::unwatched().tick();
    }
}
