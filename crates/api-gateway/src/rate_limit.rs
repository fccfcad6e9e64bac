//! Token buckets in this process's memory: one per user for the API (all of
//! a user's keys share it, so minting keys brings no fresh burst), one per
//! token for heartbeat pings. With several gateway replicas each enforces the
//! limit on its own share of the traffic.

use crate::error::ApiError;
use crate::settings::RateLimitSettings;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Mutex;
use std::time::Instant;

/// Buckets kept before full ones are swept out (a full bucket is the same
/// as no bucket, so sweeping never loosens a limit).
const SWEEP_AT: usize = 10_000;

pub struct RateLimiter<K = i64> {
    settings: RateLimitSettings,
    buckets: Mutex<Buckets<K>>,
}

struct Buckets<K> {
    map: HashMap<K, Bucket>,
    /// Sweep when the map grows past this; doubles when a sweep frees too
    /// little, so a flood of distinct keys costs amortised O(1) per request.
    sweep_at: usize,
}

struct Bucket {
    tokens: f64,
    refilled_at: Instant,
}

impl<K: Hash + Eq> RateLimiter<K> {
    pub fn new(settings: RateLimitSettings) -> Self {
        Self {
            settings,
            buckets: Mutex::new(Buckets {
                map: HashMap::new(),
                sweep_at: SWEEP_AT,
            }),
        }
    }

    /// Takes a token for `key`, or says how long until one is available.
    pub fn check(&self, key: K) -> Result<(), ApiError> {
        if self.settings.per_second == 0 {
            return Ok(());
        }
        let rate = f64::from(self.settings.per_second);
        let burst = f64::from(self.settings.burst.max(1));
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.map.len() >= buckets.sweep_at {
            // Drop the buckets that have refilled completely.
            buckets.map.retain(|_, b| {
                b.tokens + now.duration_since(b.refilled_at).as_secs_f64() * rate < burst
            });
            buckets.sweep_at = (buckets.map.len() * 2).max(SWEEP_AT);
        }
        let bucket = buckets.map.entry(key).or_insert(Bucket {
            tokens: burst,
            refilled_at: now,
        });
        bucket.tokens = (bucket.tokens
            + now.duration_since(bucket.refilled_at).as_secs_f64() * rate)
            .min(burst);
        bucket.refilled_at = now;
        if bucket.tokens >= 1.0 {
            bucket.tokens -= 1.0;
            Ok(())
        } else {
            let wait = ((1.0 - bucket.tokens) / rate).ceil().max(1.0) as u64;
            Err(ApiError::RateLimited {
                retry_after_secs: wait,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allows_the_burst_then_refuses_with_a_retry_after() {
        let limiter = RateLimiter::new(RateLimitSettings {
            per_second: 1,
            burst: 3,
        });
        for _ in 0..3 {
            limiter.check(7).unwrap();
        }
        match limiter.check(7) {
            Err(ApiError::RateLimited { retry_after_secs }) => assert!(retry_after_secs >= 1),
            other => panic!("expected a rate limit, got {other:?}"),
        }
        limiter.check(8).expect("other keys have their own bucket");
    }

    #[test]
    fn full_buckets_are_swept_but_limits_hold() {
        let limiter = RateLimiter::new(RateLimitSettings {
            per_second: 1,
            burst: 1,
        });
        limiter.check(u64::MAX).unwrap();
        for k in 0..(SWEEP_AT as u64 * 3) {
            limiter.check(k).unwrap();
        }
        assert!(limiter.check(u64::MAX).is_err(), "still limited");
    }

    #[test]
    fn zero_turns_limiting_off() {
        let limiter = RateLimiter::new(RateLimitSettings {
            per_second: 0,
            burst: 0,
        });
        for _ in 0..1000 {
            limiter.check(1).unwrap();
        }
    }
}
