//! The last configuration read for each checked monitor, kept so that its
//! checks go out on time while PostgreSQL cannot be read (a restart, a
//! failover, a network cut).
//!
//! - **Filled by the reads that happen anyway**: every configuration read
//!   just before a slot stores what that slot's round was built from (the
//!   sealed spec, encoded, its regions, version and interval). When the
//!   database answers, its row is the truth and replaces the entry; an
//!   unchanged row costs an encode into a reused buffer and a comparison.
//! - **Used only when that read fails**: the planner builds the round from
//!   the entry ([`ConfigCache::lookup`]); a monitor without one waits on the
//!   timeline for the database, as before.
//! - **Never serves what is known to be stale**: a change event for the
//!   monitor drops its entry (the next read stores the new row), so does a
//!   row that no longer matches the timeline, a deletion, a pause, and the
//!   loss of its shard.
//! - **Bounded** by a byte budget: entries are admitted while they fit; a
//!   monitor that does not fit is not cached (counted as rejected) and an
//!   entry whose refreshed row no longer fits is dropped rather than kept
//!   stale. Admission, not eviction of the coldest: every monitor is read
//!   once per interval, so any fixed set of cached monitors covers an outage
//!   equally well, and the set does not churn once the budget is reached.
//!
//! Pure data, no clock: the planner decides when to store and when to use it.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use uptime_contracts::CheckSpec;

/// What the allocator adds to each heap block (glibc: 8 bytes, rounded to 16).
const ALLOCATION_OVERHEAD_BYTES: usize = 16;

/// One monitor's last configuration read: 32 bytes in the table, and the
/// encoded rest on the heap.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CachedConfig {
    definition_version: i64,
    /// [`Encoded`] as JSON: smaller than the decoded structs, one allocation,
    /// and decoded only while the database is down.
    encoded: Box<[u8]>,
    interval_secs: u32,
    /// A `pause` maintenance window covered it at the last read.
    paused: bool,
}

/// What a round is built from besides its slot.
#[derive(Serialize)]
struct Encode<'a> {
    spec: &'a CheckSpec,
    #[serde(skip_serializing_if = "Option::is_none")]
    regions: Option<&'a [String]>,
}

#[derive(Deserialize)]
struct Encoded {
    spec: CheckSpec,
    /// The regions the monitor chose (`None`: the deployment's default ones).
    #[serde(default)]
    regions: Option<Vec<String>>,
}

/// The buckets of a table of `capacity` entries: hashbrown's power of two,
/// at most 7/8 full.
fn buckets(capacity: usize) -> usize {
    if capacity == 0 {
        return 0;
    }
    (capacity * 8 / 7).next_power_of_two().max(capacity + 1)
}

/// The bytes of a table of `buckets`: a key, a value and a control byte each.
fn table_bytes(buckets: usize) -> usize {
    buckets * (std::mem::size_of::<(i64, CachedConfig)>() + 1)
}

fn heap_bytes(entry: &CachedConfig) -> usize {
    ALLOCATION_OVERHEAD_BYTES + entry.encoded.len()
}

/// What the cache knows of a monitor, for a slot at its current interval.
// Only ever returned and consumed at once, never stored: no space to save.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cached {
    /// A `pause` maintenance window covered it at the last read: this slot
    /// is skipped, as it would have been.
    Paused,
    /// The round is built from these.
    Round {
        spec: CheckSpec,
        definition_version: i64,
        regions: Option<Vec<String>>,
    },
}

/// Counts since the last [`ConfigCache::take_tally`], and the size now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct CacheTally {
    pub entries: usize,
    pub bytes: usize,
    /// Slots served from the cache because their read failed.
    pub hits: u64,
    /// Slots whose read failed and that were not cached: they wait.
    pub misses: u64,
    /// Monitors not cached because the budget was full.
    pub rejected: u64,
}

#[derive(Debug)]
pub(crate) struct ConfigCache {
    budget_bytes: usize,
    /// The entries' heap bytes (the table's are counted from its capacity).
    heap_bytes: usize,
    entries: HashMap<i64, CachedConfig>,
    /// Where each stored configuration is encoded, so that an unchanged one
    /// allocates nothing.
    scratch: Vec<u8>,
    tally: CacheTally,
}

impl ConfigCache {
    /// A cache of at most `budget_bytes` (0: nothing is cached, and storing
    /// costs nothing).
    pub(crate) fn new(budget_bytes: usize) -> Self {
        Self {
            budget_bytes,
            heap_bytes: 0,
            entries: HashMap::new(),
            scratch: Vec::new(),
            tally: CacheTally::default(),
        }
    }

    /// Keeps what the round of `monitor_id` was just built from.
    pub(crate) fn store(
        &mut self,
        monitor_id: i64,
        interval_secs: u32,
        definition_version: i64,
        regions: Option<&[String]>,
        spec: &CheckSpec,
    ) {
        if self.budget_bytes == 0 {
            return;
        }
        self.scratch.clear();
        if serde_json::to_writer(&mut self.scratch, &Encode { spec, regions }).is_err() {
            self.remove(monitor_id);
            return;
        }
        if let Some(entry) = self.entries.get_mut(&monitor_id) {
            if *entry.encoded == *self.scratch
                && entry.definition_version == definition_version
                && entry.interval_secs == interval_secs
            {
                entry.paused = false;
                return;
            }
        }
        let entry = CachedConfig {
            definition_version,
            encoded: self.scratch.as_slice().into(),
            interval_secs,
            paused: false,
        };
        let replaced = self.remove(monitor_id);
        if !self.fits(heap_bytes(&entry)) {
            if !replaced {
                self.tally.rejected += 1;
            }
            return;
        }
        self.heap_bytes += heap_bytes(&entry);
        self.entries.insert(monitor_id, entry);
    }

    /// Whether one more entry of `heap` bytes keeps the cache within its
    /// budget, counting the table's growth it may cause.
    fn fits(&self, heap: usize) -> bool {
        let capacity = self.entries.capacity();
        let table = if self.entries.len() < capacity {
            table_bytes(buckets(capacity))
        } else {
            // Full: the insert doubles the buckets.
            table_bytes((buckets(capacity) * 2).max(4))
        };
        table + self.heap_bytes + heap <= self.budget_bytes
    }

    /// A `pause` maintenance window covers `monitor_id` now (or no longer).
    pub(crate) fn set_paused(&mut self, monitor_id: i64, paused: bool) {
        if let Some(entry) = self.entries.get_mut(&monitor_id) {
            entry.paused = paused;
        }
    }

    /// What to do for a slot of `monitor_id` whose read failed, if the cache
    /// knows it at `interval_secs` (the timeline's); counted as a hit or miss.
    pub(crate) fn lookup(&mut self, monitor_id: i64, interval_secs: u32) -> Option<Cached> {
        let found = self
            .entries
            .get(&monitor_id)
            .filter(|e| e.interval_secs == interval_secs)
            .and_then(|entry| {
                if entry.paused {
                    return Some(Cached::Paused);
                }
                let encoded: Encoded = serde_json::from_slice(&entry.encoded).ok()?;
                Some(Cached::Round {
                    spec: encoded.spec,
                    definition_version: entry.definition_version,
                    regions: encoded.regions,
                })
            });
        match found {
            Some(_) => self.tally.hits += 1,
            None => self.tally.misses += 1,
        }
        found
    }

    /// Forgets `monitor_id`; whether it was cached.
    pub(crate) fn remove(&mut self, monitor_id: i64) -> bool {
        match self.entries.remove(&monitor_id) {
            Some(entry) => {
                self.heap_bytes -= heap_bytes(&entry);
                true
            }
            None => false,
        }
    }

    /// Keeps only the monitors `keep` says are still scheduled here.
    pub(crate) fn retain(&mut self, mut keep: impl FnMut(i64) -> bool) {
        let mut freed = 0;
        self.entries.retain(|id, entry| {
            let kept = keep(*id);
            if !kept {
                freed += heap_bytes(entry);
            }
            kept
        });
        self.heap_bytes -= freed;
        if self.entries.capacity() > 4 * self.entries.len().max(1024) {
            self.entries.shrink_to_fit();
        }
    }

    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The bytes it holds: the table as allocated, and each entry's heap block.
    pub(crate) fn bytes(&self) -> usize {
        table_bytes(buckets(self.entries.capacity())) + self.heap_bytes
    }

    /// The counts since the last call, and the size now.
    pub(crate) fn take_tally(&mut self) -> CacheTally {
        let tally = CacheTally {
            entries: self.entries.len(),
            bytes: self.bytes(),
            ..self.tally
        };
        self.tally = CacheTally::default();
        tally
    }
}
