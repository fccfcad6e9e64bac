//! A token bucket per API key, in this process's memory. With several gateway
//! replicas each enforces the limit on its own share of the traffic.

use crate::error::ApiError;
use crate::settings::RateLimitSettings;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Instant;

pub struct RateLimiter {
    settings: RateLimitSettings,
    buckets: Mutex<HashMap<i64, Bucket>>,
}

struct Bucket {
    tokens: f64,
    refilled_at: Instant,
}

impl RateLimiter {
    pub fn new(settings: RateLimitSettings) -> Self {
        Self {
            settings,
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes a token for `key_id`, or says how long until one is available.
    pub fn check(&self, key_id: i64) -> Result<(), ApiError> {
        if self.settings.per_second == 0 {
            return Ok(());
        }
        let rate = f64::from(self.settings.per_second);
        let burst = f64::from(self.settings.burst.max(1));
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.entry(key_id).or_insert(Bucket {
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
