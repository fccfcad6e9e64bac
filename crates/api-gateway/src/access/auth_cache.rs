//! Two short memories of API keys, so that authenticating costs no database
//! query in the common cases. Both are bounded in size and age (moka evicts
//! the least useful entries past the capacity).
//!
//! - [`UnknownKeys`]: keys that failed authentication, so a flood of
//!   well-formed but unknown keys costs a hash and a cache lookup each. A new
//!   key is random, so it cannot already be in here.
//! - [`KnownKeys`]: keys that succeeded, forgotten on every replica the
//!   moment one is revoked.

use crate::access::principal::AuthUser;
use crate::settings::AuthSettings;
use chrono::{DateTime, Utc};
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
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

/// A key that was valid a moment ago, as [`KnownKeys`] remembers it.
pub struct KnownKey {
    pub principal: AuthUser,
    /// `last_used_at` as this replica last wrote or read it (Unix seconds):
    /// the next write is due [`TOUCH_GAP_SECS`] later.
    last_used: AtomicI64,
}

/// `last_used_at` is written at most once a minute per key.
pub const TOUCH_GAP_SECS: i64 = 60;

impl KnownKey {
    pub fn new(principal: AuthUser, last_used: Option<DateTime<Utc>>) -> Self {
        Self {
            principal,
            last_used: AtomicI64::new(last_used.map_or(i64::MIN, |t| t.timestamp())),
        }
    }

    /// Whether this use, at `now`, is the one that writes `last_used_at`:
    /// true for one caller at most every [`TOUCH_GAP_SECS`]. Returns the
    /// previous value, for [`KnownKey::unclaim_touch`] if the write fails.
    pub fn claim_touch(&self, now: DateTime<Utc>) -> Option<i64> {
        let now = now.timestamp();
        let last = self.last_used.load(Ordering::Relaxed);
        if now.saturating_sub(last) < TOUCH_GAP_SECS {
            return None;
        }
        self.last_used
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .ok()
    }

    /// The write claimed at `now` failed: let the next use try again.
    pub fn unclaim_touch(&self, now: DateTime<Utc>, previous: i64) {
        let _ = self.last_used.compare_exchange(
            now.timestamp(),
            previous,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
}

/// The NATS connection as [`KnownKeys`] needs to see it: revocations arrive
/// over it, so while it is down nothing remembered can be trusted to be
/// current, and after a reconnect messages may have been missed.
#[derive(Debug, Clone, Copy)]
pub struct Link {
    pub connected: bool,
    /// Connections made so far (the first one and every reconnect).
    pub connects: u64,
}

impl Link {
    pub fn of(nats: &async_nats::Client) -> Self {
        Self {
            connected: nats.connection_state() == async_nats::connection::State::Connected,
            connects: nats.statistics().connects.load(Ordering::Relaxed),
        }
    }
}

/// Counter of positive-cache lookups by `result`: `hit` (no database query),
/// `miss`, `bypassed` (NATS disconnected, or no longer subscribed: the
/// database decides).
pub const LOOKUPS_TOTAL: &str = "api_key_cache_lookups_total";
/// Counter of positive-cache invalidations by `reason`: `revoked` (one key),
/// `reconnected`, `undecodable` and `unsubscribed` (everything).
pub const INVALIDATIONS_TOTAL: &str = "api_key_cache_invalidations_total";

/// A short memory of valid keys by digest, so that a request with a known
/// key costs no database query. Bounded in size and age: an entry lives at
/// most `positive_cache_secs` from the moment it was read from the database,
/// however often it is used.
///
/// A revoked key is forgotten at once: by the replica that revoked it
/// directly, by every other one when `uptime.keys.revoked.v1` arrives (see
/// `key_revocations`). Core NATS can lose that message only while a replica
/// is disconnected, so: nothing is read from or added to the cache while
/// NATS is known to be down, everything is forgotten when it reconnects, and
/// the time to live bounds the rest (a connection dead but not yet noticed).
pub struct KnownKeys {
    keys: Option<moka::sync::Cache<String, Arc<KnownKey>>>,
    /// Goes up with every invalidation: an entry read from the database
    /// before an invalidation is not kept (it may be the very key revoked
    /// while the query ran).
    generation: AtomicU64,
    /// The highest [`Link::connects`] seen.
    connects_seen: AtomicU64,
    /// Revocations no longer arrive (the subscription ended): nothing
    /// remembered can be trusted any more.
    deaf: AtomicBool,
}

/// [`KnownKeys::generation`] taken before a database read.
pub struct Ticket(u64);

impl KnownKeys {
    /// `positive_cache_secs` or `positive_cache_capacity` 0 switches it off.
    pub fn new(settings: &AuthSettings) -> Self {
        let on = settings.positive_cache_secs > 0 && settings.positive_cache_capacity > 0;
        Self {
            keys: on.then(|| {
                moka::sync::Cache::builder()
                    .max_capacity(settings.positive_cache_capacity)
                    .time_to_live(Duration::from_secs(settings.positive_cache_secs))
                    .build()
            }),
            generation: AtomicU64::new(0),
            connects_seen: AtomicU64::new(0),
            deaf: AtomicBool::new(false),
        }
    }

    /// The valid key with this digest, if remembered and trustworthy now.
    pub fn get(&self, digest: &str, link: Link) -> Option<Arc<KnownKey>> {
        let keys = self.keys.as_ref()?;
        self.observe(link);
        let (found, result) = if !self.trusted(link) {
            (None, "bypassed")
        } else {
            match keys.get(digest) {
                Some(key) => (Some(key), "hit"),
                None => (None, "miss"),
            }
        };
        metrics::counter!(LOOKUPS_TOTAL, "result" => result).increment(1);
        found
    }

    /// To take before reading a key from the database, for [`Self::remember`].
    pub fn ticket(&self) -> Ticket {
        Ticket(self.generation.load(Ordering::SeqCst))
    }

    /// Remembers a key read from the database after `ticket` was taken,
    /// unless something was invalidated since (or NATS is down).
    pub fn remember(&self, ticket: Ticket, digest: String, key: KnownKey, link: Link) {
        let Some(keys) = &self.keys else { return };
        self.observe(link);
        if !self.trusted(link) || self.generation.load(Ordering::SeqCst) != ticket.0 {
            return;
        }
        keys.insert(digest.clone(), Arc::new(key));
        // An invalidation between the check above and the insert bumped the
        // generation first, then removed (perhaps before this insert): look
        // again, so the entry cannot outlive it.
        if self.generation.load(Ordering::SeqCst) != ticket.0 {
            keys.invalidate(&digest);
        }
    }

    /// Forgets one key (it was revoked).
    pub fn forget(&self, digest: &str) {
        let Some(keys) = &self.keys else { return };
        self.generation.fetch_add(1, Ordering::SeqCst);
        keys.invalidate(digest);
        metrics::counter!(INVALIDATIONS_TOTAL, "reason" => "revoked").increment(1);
    }

    /// Forgets every key.
    pub fn forget_all(&self, reason: &'static str) {
        let Some(keys) = &self.keys else { return };
        self.generation.fetch_add(1, Ordering::SeqCst);
        keys.invalidate_all();
        metrics::counter!(INVALIDATIONS_TOTAL, "reason" => reason).increment(1);
    }

    /// Revocations will not arrive any more: stop using the cache for good.
    pub fn go_deaf(&self) {
        self.deaf.store(true, Ordering::SeqCst);
        self.forget_all("unsubscribed");
    }

    /// Whether revocations reach this replica now.
    fn trusted(&self, link: Link) -> bool {
        link.connected && !self.deaf.load(Ordering::Relaxed)
    }

    /// Whether a key with this digest is remembered (no metrics; for tests
    /// and diagnostics).
    pub fn contains(&self, digest: &str) -> bool {
        self.keys.as_ref().is_some_and(|c| c.contains_key(digest))
    }

    /// A reconnect since the last look: revocations may have been missed
    /// while disconnected, so forget everything.
    fn observe(&self, link: Link) {
        // Read first: a write on every request would make every worker
        // thread fight over this one cache line.
        if link.connects <= self.connects_seen.load(Ordering::Relaxed) {
            return;
        }
        let before = self
            .connects_seen
            .fetch_max(link.connects, Ordering::SeqCst);
        // The first connection is no reconnect: nothing was cached before it.
        if before > 0 && before < link.connects {
            self.forget_all("reconnected");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache() -> KnownKeys {
        KnownKeys::new(&AuthSettings::default())
    }

    fn known(last_used: Option<DateTime<Utc>>) -> KnownKey {
        let principal = AuthUser {
            user_id: 1,
            org_id: 1,
            role: uptime_db::organisations::Role::Owner,
            scope: uptime_db::organisations::Scope::Admin,
            key_id: 2,
            key_prefix: crate::access::principal::KeyPrefix::of("upt_abcd"),
            address: None,
            label_selector: None,
        };
        KnownKey::new(principal, last_used)
    }

    const UP: Link = Link {
        connected: true,
        connects: 1,
    };

    #[test]
    fn a_key_read_before_a_revocation_is_not_kept() {
        let keys = cache();
        // The query started, then some key was revoked, then it answered.
        let ticket = keys.ticket();
        keys.forget("d1");
        keys.remember(ticket, "d1".into(), known(None), UP);
        assert!(!keys.contains("d1"));
        // A query that started after it is kept.
        keys.remember(keys.ticket(), "d1".into(), known(None), UP);
        assert!(keys.get("d1", UP).is_some());
    }

    #[test]
    fn nothing_is_trusted_while_disconnected_or_after_a_reconnect() {
        let keys = cache();
        let down = Link {
            connected: false,
            ..UP
        };
        keys.remember(keys.ticket(), "d1".into(), known(None), down);
        assert!(!keys.contains("d1"), "not added while disconnected");
        keys.remember(keys.ticket(), "d1".into(), known(None), UP);
        assert!(
            keys.get("d1", down).is_none(),
            "not read while disconnected"
        );
        assert!(keys.get("d1", UP).is_some());
        let reconnected = Link {
            connected: true,
            connects: 2,
        };
        assert!(keys.get("d1", reconnected).is_none());
        assert!(!keys.contains("d1"));
    }

    #[test]
    fn last_use_is_written_once_a_minute_and_retried_after_a_failure() {
        let t0 = Utc::now();
        let key = known(Some(t0 - chrono::Duration::seconds(61)));
        let previous = key.claim_touch(t0).expect("a minute since the last write");
        assert_eq!(key.claim_touch(t0 + chrono::Duration::seconds(59)), None);
        key.unclaim_touch(t0, previous);
        assert!(key.claim_touch(t0 + chrono::Duration::seconds(1)).is_some());
        assert_eq!(key.claim_touch(t0 + chrono::Duration::seconds(2)), None);
    }

    #[test]
    fn nothing_is_trusted_once_revocations_stop_arriving() {
        let keys = cache();
        keys.remember(keys.ticket(), "d1".into(), known(None), UP);
        keys.go_deaf();
        assert!(keys.get("d1", UP).is_none());
        keys.remember(keys.ticket(), "d2".into(), known(None), UP);
        assert!(!keys.contains("d2"));
    }

    #[test]
    fn zero_switches_it_off() {
        let keys = KnownKeys::new(&AuthSettings {
            positive_cache_secs: 0,
            ..AuthSettings::default()
        });
        keys.remember(keys.ticket(), "d1".into(), known(None), UP);
        assert!(keys.get("d1", UP).is_none());
    }
}
