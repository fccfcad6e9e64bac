//! A short memory of keys that failed authentication, so a flood of
//! well-formed but unknown keys costs a hash and a cache lookup each, not a
//! database query. Bounded in size and age (moka evicts the least useful
//! entries past the capacity). Only failures are remembered: a revoked key is
//! refused from the next request on, and a new key is random, so it cannot
//! already be in here.

use crate::settings::AuthSettings;
use std::time::Duration;

pub struct UnknownKeys {
    /// Hex SHA-256 digests of raw keys; `None` when the cache is switched off.
    digests: Option<moka::sync::Cache<String, ()>>,
}

impl UnknownKeys {
    /// `negative_cache_secs` or `negative_cache_capacity` 0 switches it off.
    pub fn new(settings: &AuthSettings) -> Self {
        let on = settings.negative_cache_secs > 0 && settings.negative_cache_capacity > 0;
        Self {
            digests: on.then(|| {
                moka::sync::Cache::builder()
                    .max_capacity(settings.negative_cache_capacity)
                    .time_to_live(Duration::from_secs(settings.negative_cache_secs))
                    .build()
            }),
        }
    }

    pub fn contains(&self, digest: &str) -> bool {
        self.digests
            .as_ref()
            .is_some_and(|c| c.contains_key(digest))
    }

    pub fn remember(&self, digest: String) {
        if let Some(c) = &self.digests {
            c.insert(digest, ());
        }
    }
}
