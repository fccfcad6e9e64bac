//! Per-client-address rate limits of the public routes: a token bucket per
//! address (`rate_limit_per_second`, bursts of `rate_limit_burst`), held in
//! a bounded cache so a flood of addresses cannot grow it without end.

use moka::sync::Cache;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Debug)]
struct Bucket {
    tokens: f64,
    updated: Instant,
}

#[derive(Clone)]
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Option<Cache<IpAddr, Arc<Mutex<Bucket>>>>,
}

impl RateLimiter {
    /// `per_second == 0` disables the limit.
    pub fn new(per_second: u32, burst: u32, capacity: u64) -> Self {
        Self::with_rate(f64::from(per_second), burst, capacity)
    }

    /// `per_hour` requests an hour (subscribe requests); 0 disables it.
    pub fn per_hour(per_hour: u32, burst: u32, capacity: u64) -> Self {
        Self::with_rate(f64::from(per_hour) / 3600.0, burst, capacity)
    }

    fn with_rate(per_second: f64, burst: u32, capacity: u64) -> Self {
        Self {
            per_second,
            burst: f64::from(burst.max(1)),
            buckets: (per_second > 0.0).then(|| Cache::new(capacity.max(1))),
        }
    }

    /// `None` when `address` may go on; else the seconds to wait.
    pub fn check(&self, address: IpAddr) -> Option<u64> {
        self.check_at(address, Instant::now())
    }

    /// [`RateLimiter::check`] at `now` (tests pass the clock).
    pub fn check_at(&self, address: IpAddr, now: Instant) -> Option<u64> {
        let buckets = self.buckets.as_ref()?;
        let burst = self.burst;
        let bucket = buckets.get_with(address, || {
            Arc::new(Mutex::new(Bucket {
                tokens: burst,
                updated: now,
            }))
        });
        let mut bucket = match bucket.lock() {
            Ok(b) => b,
            Err(poisoned) => poisoned.into_inner(),
        };
        let elapsed = now.saturating_duration_since(bucket.updated).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.per_second).min(self.burst);
        bucket.updated = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            None
        } else {
            let wait = (1.0 - bucket.tokens) / self.per_second;
            Some(wait.ceil().max(1.0) as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_burst_passes_then_the_rate_holds_per_address() {
        let limiter = RateLimiter::new(2, 3, 100);
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let start = Instant::now();
        for _ in 0..3 {
            assert_eq!(limiter.check_at(a, start), None);
        }
        assert_eq!(limiter.check_at(a, start), Some(1));
        // Another address has its own bucket.
        assert_eq!(limiter.check_at(b, start), None);
        // Half a second later: one more token for `a`.
        let later = start + Duration::from_millis(500);
        assert_eq!(limiter.check_at(a, later), None);
        assert!(limiter.check_at(a, later).is_some());
        assert_eq!(RateLimiter::new(0, 0, 1).check_at(a, start), None);
    }

    #[test]
    fn an_hourly_rate_waits_minutes() {
        let limiter = RateLimiter::per_hour(6, 1, 100);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let start = Instant::now();
        assert_eq!(limiter.check_at(a, start), None);
        // One token every ten minutes.
        let wait = limiter.check_at(a, start).expect("limited");
        assert!((600..=601).contains(&wait), "{wait}");
        assert_eq!(limiter.check_at(a, start + Duration::from_secs(601)), None);
        assert_eq!(RateLimiter::per_hour(0, 1, 1).check_at(a, start), None);
    }
}
