//! Which shard a monitor belongs to.
//!
//! Monitors are hashed into a fixed number of shards (`scheduler.shards`);
//! each shard is scheduled by the one replica holding its lease
//! ([`crate::lease`]). The hash is salted so that a shard's monitors are not
//! correlated with their phase within the interval ([`crate::slots::offset_ms`]
//! hashes the bare id): each shard's checks spread over the whole interval.

use crate::slots::mix64;

/// The most shards a deployment may have (a shard is a KV key and a bit).
pub const MAX_SHARDS: u16 = 4096;

/// Mixed into the id before hashing; fixed forever, like the slots' hash:
/// changing it would move every monitor to another shard in a rolling deploy.
const SHARD_SALT: u64 = 0x5348_4152_4453_0001;

/// The shard of `monitor_id` among `shards` (at least 1).
pub fn shard_of(monitor_id: i64, shards: u16) -> u16 {
    let shards = u64::from(shards.max(1));
    (mix64((monitor_id as u64) ^ SHARD_SALT) % shards) as u16
}

/// A set of shards, as a bitset over `0..count`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShardSet {
    count: u16,
    bits: Vec<u64>,
}

impl ShardSet {
    pub fn empty(count: u16) -> Self {
        let count = count.clamp(1, MAX_SHARDS);
        Self {
            count,
            bits: vec![0; usize::from(count).div_ceil(64)],
        }
    }

    pub fn count(&self) -> u16 {
        self.count
    }

    pub fn insert(&mut self, shard: u16) {
        if shard < self.count {
            self.bits[usize::from(shard / 64)] |= 1 << (shard % 64);
        }
    }

    pub fn contains(&self, shard: u16) -> bool {
        shard < self.count && self.bits[usize::from(shard / 64)] & (1 << (shard % 64)) != 0
    }

    /// Whether `monitor_id` is in one of these shards.
    pub fn owns(&self, monitor_id: i64) -> bool {
        self.contains(shard_of(monitor_id, self.count))
    }

    pub fn len(&self) -> usize {
        self.bits.iter().map(|b| b.count_ones() as usize).sum()
    }

    pub fn is_empty(&self) -> bool {
        self.bits.iter().all(|b| *b == 0)
    }

    pub fn iter(&self) -> impl Iterator<Item = u16> + '_ {
        (0..self.count).filter(|s| self.contains(*s))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_are_fixed_and_even() {
        // Pinned: a change would move monitors between shards mid-deploy.
        assert_eq!(shard_of(1, 64), (mix64(1 ^ SHARD_SALT) % 64) as u16);
        let mut per_shard = [0u32; 64];
        for id in 1..=64_000 {
            per_shard[usize::from(shard_of(id, 64))] += 1;
        }
        for (shard, n) in per_shard.iter().enumerate() {
            assert!((850..1150).contains(n), "shard {shard} holds {n}");
        }
        assert_eq!(shard_of(12345, 1), 0);
        assert_eq!(shard_of(12345, 0), 0, "0 shards means 1");
    }

    #[test]
    fn a_shard_set_holds_its_shards() {
        let mut set = ShardSet::empty(130);
        assert!(set.is_empty());
        set.insert(0);
        set.insert(129);
        set.insert(500); // out of range: ignored
        assert_eq!(set.iter().collect::<Vec<_>>(), vec![0, 129]);
        assert_eq!(set.len(), 2);
        assert!(!set.contains(64));
        let everything = {
            let mut s = ShardSet::empty(1);
            s.insert(0);
            s
        };
        assert!(everything.owns(42) && everything.owns(-7));
    }
}
