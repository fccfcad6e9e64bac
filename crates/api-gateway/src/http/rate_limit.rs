//! Token buckets in this process's memory: one per organisation for the API
//! (all of its members' keys share it, so minting keys brings no fresh
//! burst; per user before organisations), one per
//! token for heartbeat pings. With several gateway replicas each enforces the
//! limit on its own share of the traffic.
//!
//! Beside each bucket, a line per key for heavy work (the bulk create's
//! validation): one request of the key at a time, a few more waiting in
//! arrival order, any further refused. Tokens bound how often an
//! organisation may start work; the line bounds how much of it runs at
//! once, so one organisation's
//! heavy requests occupy at most one thread whatever their number.

use crate::http::error::ApiError;
use crate::settings::RateLimitSettings;
use std::collections::HashMap;
use std::hash::Hash;
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Buckets kept before full ones are swept out (a full bucket is the same
/// as no bucket, so sweeping never loosens a limit).
const SWEEP_AT: usize = 10_000;

pub struct RateLimiter<K = i64> {
    settings: RateLimitSettings,
    buckets: Mutex<Buckets<K>>,
    /// Only keys with a heavy request running or waiting have an entry.
    lines: Arc<Mutex<HashMap<K, Line>>>,
}

struct Buckets<K> {
    map: HashMap<K, Bucket>,
    /// Sweep when the map grows past this; doubles when a sweep frees too
    /// little, so a flood of distinct keys costs amortised O(1) per request.
    sweep_at: usize,
}

impl<K: Hash + Eq> Buckets<K> {
    /// `key`'s bucket, refilled to `now` (a new one is full).
    fn refilled(&mut self, key: K, now: Instant, rate: f64, burst: f64) -> &mut Bucket {
        let bucket = self.map.entry(key).or_insert(Bucket {
            tokens: burst,
            refilled_at: now,
        });
        bucket.refill(now, rate, burst);
        bucket
    }
}

struct Bucket {
    tokens: f64,
    refilled_at: Instant,
}

impl Bucket {
    /// Adds what `rate` tokens a second have refilled since the last
    /// look, up to `burst`.
    fn refill(&mut self, now: Instant, rate: f64, burst: f64) {
        self.tokens =
            (self.tokens + now.duration_since(self.refilled_at).as_secs_f64() * rate).min(burst);
        self.refilled_at = now;
    }

    /// Where the bucket stands, for the rate-limit headers.
    fn allowance(&self, rate: f64, burst: f64, window_secs: u64) -> Allowance {
        Allowance {
            limit: burst as u32,
            remaining: self.tokens.floor() as u32,
            reset_secs: ((burst - self.tokens) / rate).ceil() as u64,
            window_secs,
        }
    }
}

/// Where a bucket stands after a request: what the `RateLimit` headers
/// tell a client so it can pace itself instead of running into 429s.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Allowance {
    /// The bucket's size (`burst`).
    pub limit: u32,
    /// Whole tokens left.
    pub remaining: u32,
    /// Seconds until the bucket is full again (refused: until the request
    /// would be taken).
    pub reset_secs: u64,
    /// Seconds a full bucket takes to refill from empty: the policy's window.
    pub window_secs: u64,
}

struct Line {
    /// One permit: whose turn it is. tokio's semaphore is fair, so turns
    /// come in arrival order.
    turn: Arc<Semaphore>,
    /// Requests in the line, the one whose turn it is included.
    len: usize,
}

impl<K: Hash + Eq> RateLimiter<K> {
    pub fn new(settings: RateLimitSettings) -> Self {
        Self {
            settings,
            buckets: Mutex::new(Buckets {
                map: HashMap::new(),
                sweep_at: SWEEP_AT,
            }),
            lines: Arc::new(Mutex::new(HashMap::new())),
        }
    }

    /// Takes a token for `key`, or says how long until one is available.
    pub fn check(&self, key: K) -> Result<Allowance, ApiError> {
        self.check_n(key, 1)
    }

    /// The allowance a refusal that says `retry_after_secs` leaves: nothing
    /// until then.
    pub fn refused(&self, retry_after_secs: u64) -> Allowance {
        Allowance {
            limit: self.settings.burst.max(1),
            remaining: 0,
            reset_secs: retry_after_secs,
            window_secs: self.window_secs(),
        }
    }

    /// What a request is told when nothing limits it (no rate configured,
    /// or nothing to take).
    fn unlimited(&self) -> Allowance {
        Allowance {
            limit: self.settings.burst,
            remaining: self.settings.burst,
            reset_secs: 0,
            window_secs: 0,
        }
    }

    fn window_secs(&self) -> u64 {
        let rate = self.settings.per_second.max(1);
        u64::from(self.settings.burst.max(1).div_ceil(rate))
    }

    /// Takes `n` tokens for `key` at once, or none and says how long until
    /// `n` are available. A cost above the burst is charged as the whole
    /// burst (a full bucket), so it is never refused forever.
    pub fn check_n(&self, key: K, n: u32) -> Result<Allowance, ApiError> {
        if self.settings.per_second == 0 || n == 0 {
            return Ok(self.unlimited());
        }
        let rate = f64::from(self.settings.per_second);
        let burst = f64::from(self.settings.burst.max(1));
        let cost = f64::from(n).min(burst);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.map.len() >= buckets.sweep_at {
            // Drop the buckets that have refilled completely.
            buckets.map.retain(|_, b| {
                b.tokens + now.duration_since(b.refilled_at).as_secs_f64() * rate < burst
            });
            buckets.sweep_at = (buckets.map.len() * 2).max(SWEEP_AT);
        }
        let bucket = buckets.refilled(key, now, rate, burst);
        if bucket.tokens >= cost {
            bucket.tokens -= cost;
            Ok(bucket.allowance(rate, burst, self.window_secs()))
        } else {
            let wait = ((cost - bucket.tokens) / rate).ceil().max(1.0) as u64;
            Err(ApiError::RateLimited {
                retry_after_secs: wait,
            })
        }
    }
}

/// What a request that costs many tokens was charged
/// ([`RateLimiter::charge`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Charge {
    /// Taken; where the bucket stands now.
    Taken(Allowance),
    /// Refused, nothing taken (what it paid before is given back): the
    /// same request is served after `retry_after_secs` if nothing else is
    /// spent meanwhile.
    Refused {
        retry_after_secs: u64,
        /// The tokens it is charged: its cost, at most a full bucket.
        charged: u32,
    },
}

impl<K: Hash + Eq> RateLimiter<K> {
    /// The most one request is ever charged: a full bucket (`burst`).
    pub fn max_charge(&self) -> u32 {
        self.settings.burst.max(1)
    }

    /// Charges a request of `key` that costs `cost` tokens in all, of which
    /// it `paid` already (its own token, taken at authentication). The
    /// charge is capped at a full bucket, so every request is one some
    /// bucket can pay for: served when the bucket, with what it paid, holds
    /// the charge; otherwise refused, its `paid` given back, with the wait
    /// until a retry (which pays its own token again) finds the bucket
    /// holding it. Never a refusal for ever, as a cost above what a bucket
    /// can hold would be, nor a debt that locks every key of the
    /// organisation out for `cost / per_second` seconds.
    pub fn charge(&self, key: K, cost: u32, paid: u32) -> Charge {
        let charged = cost.min(self.max_charge());
        if self.settings.per_second == 0 || charged <= paid {
            return Charge::Taken(self.unlimited());
        }
        let rate = f64::from(self.settings.per_second);
        let burst = f64::from(self.max_charge());
        let more = f64::from(charged - paid);
        let now = Instant::now();
        let mut buckets = self.buckets.lock().unwrap_or_else(|p| p.into_inner());
        let bucket = buckets.refilled(key, now, rate, burst);
        if bucket.tokens >= more {
            bucket.tokens -= more;
            return Charge::Taken(bucket.allowance(rate, burst, self.window_secs()));
        }
        bucket.tokens = (bucket.tokens + f64::from(paid)).min(burst);
        let wait = ((f64::from(charged) - bucket.tokens) / rate)
            .ceil()
            .max(1.0) as u64;
        Charge::Refused {
            retry_after_secs: wait,
            charged,
        }
    }
}

impl<K: Hash + Eq + Clone> RateLimiter<K> {
    /// A place in `key`'s line for heavy work, or `None` when `at_most`
    /// requests of the key are in it already (refused at once: a line that
    /// grew without bound would hold every waiting request's connection).
    /// Await [`Place::turn`] before doing the work.
    pub fn join_line(&self, key: K, at_most: usize) -> Option<Place<K>> {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        let line = lines.entry(key.clone()).or_insert_with(|| Line {
            turn: Arc::new(Semaphore::new(1)),
            len: 0,
        });
        if line.len >= at_most {
            return None;
        }
        line.len += 1;
        Some(Place {
            turn: line.turn.clone(),
            left: Leaves {
                lines: self.lines.clone(),
                key,
            },
        })
    }

    /// Requests of `key` in its line (running or waiting).
    pub fn in_line(&self, key: &K) -> usize {
        let lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        lines.get(key).map_or(0, |l| l.len)
    }
}

/// A request in its key's line. Dropping it (or the [`Turn`] it becomes)
/// leaves the line, also when the request is abandoned while waiting.
pub struct Place<K: Hash + Eq> {
    turn: Arc<Semaphore>,
    left: Leaves<K>,
}

impl<K: Hash + Eq> Place<K> {
    /// Waits until every request ahead of this one in the line is done.
    pub async fn turn(self) -> Turn<K> {
        let permit = self
            .turn
            .acquire_owned()
            .await
            .expect("a line's semaphore is never closed");
        Turn {
            _permit: permit,
            _left: self.left,
        }
    }
}

/// The key's turn for heavy work, until dropped. Owned, so it can move into
/// the blocking task doing the work: a request abandoned by its client keeps
/// the turn until that work ends, and the user cannot start more meanwhile.
pub struct Turn<K: Hash + Eq> {
    // Fields drop in order: the turn passes on, then the line shrinks.
    _permit: OwnedSemaphorePermit,
    _left: Leaves<K>,
}

struct Leaves<K: Hash + Eq> {
    lines: Arc<Mutex<HashMap<K, Line>>>,
    key: K,
}

impl<K: Hash + Eq> Drop for Leaves<K> {
    fn drop(&mut self) {
        let mut lines = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(line) = lines.get_mut(&self.key) {
            line.len -= 1;
            if line.len == 0 {
                // Nobody holds or waits for this semaphore any more.
                lines.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
#[path = "rate_limit_tests.rs"]
mod tests;
