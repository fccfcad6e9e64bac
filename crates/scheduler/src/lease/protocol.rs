//! What the lease protocol exchanges: its timing, the bucket's keys, the
//! writes a replica asks for and how they end, and what it tells the engine.

use super::{MemberValue, ShardValue};
use crate::shards::ShardSet;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Timing of the protocol, in milliseconds of the replica's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LeaseTiming {
    pub shards: u16,
    pub ttl_ms: i64,
    pub renew_every_ms: i64,
}

impl LeaseTiming {
    /// How long a member key may stay unchanged before it is deleted (the
    /// bucket's bound on keys of replicas that are gone).
    pub fn forget_after_ms(&self) -> i64 {
        (self.ttl_ms * 10).max(60_000)
    }
}

/// A key of the bucket.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Key {
    Member(String),
    Shard(u16),
}

impl Key {
    pub fn name(&self) -> String {
        match self {
            Key::Member(id) => format!("member.{id}"),
            Key::Shard(shard) => format!("shard.{shard}"),
        }
    }

    pub fn parse(name: &str) -> Option<Key> {
        if let Some(id) = name.strip_prefix("member.") {
            return Some(Key::Member(id.to_string()));
        }
        name.strip_prefix("shard.")?.parse().ok().map(Key::Shard)
    }
}

/// A write the replica wants made. `expected` is the revision the key must
/// still have (0: the key must not exist, or be deleted).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Rewrite this replica's member key (unconditionally: only it writes it).
    PutMember(MemberValue),
    Take {
        shard: u16,
        expected: u64,
        value: ShardValue,
    },
    Renew {
        shard: u16,
        expected: u64,
        value: ShardValue,
    },
    Release {
        shard: u16,
        expected: u64,
        value: ShardValue,
    },
    /// Delete the key of a replica silent for [`LeaseTiming::forget_after_ms`].
    ForgetMember { id: String, expected: u64 },
}

/// How a write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Stored under this revision.
    Stored(u64),
    /// The key had another revision: someone else wrote it.
    Conflict,
    /// No answer: it may or may not have been stored.
    Unknown,
}

/// What the engine may schedule: the granted shards, each until when, and
/// from where a newly granted one resumes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grants {
    /// Bumped whenever the set of shards changes.
    pub generation: u64,
    pub shards: BTreeMap<u16, Grant>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Grant {
    /// Publishing for the shard stops at this instant unless renewed.
    pub valid_until_ms: i64,
    /// Every slot of the shard due before this was published.
    pub resume_from_ms: i64,
    /// Which take of the lease this is (the grants generation it was taken
    /// at): a lease lost and taken again between two looks of the engine
    /// comes back with another one, and the engine reloads the shard.
    pub taken_at: u64,
}

impl Grants {
    pub fn set(&self, count: u16) -> ShardSet {
        let mut set = ShardSet::empty(count);
        for shard in self.shards.keys() {
            set.insert(*shard);
        }
        set
    }
}

/// What the engine reports back: the grants generation it applied, and how
/// far everything it scheduled is published (see the engine).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct EngineProgress {
    pub generation: u64,
    pub published_through_ms: i64,
    /// The shards it stopped scheduling (and has not been granted since),
    /// each with the grants generation that stopped it and how far
    /// everything it scheduled was published just before: the figure above
    /// goes on rising with the shards it kept, so a shard given up is
    /// released with this one.
    pub stopped: Arc<BTreeMap<u16, Stopped>>,
}

/// A shard the engine stopped: at which grants generation, and how far
/// everything it scheduled was handed to its publisher then. Publishes
/// still in flight are not counted here (the engine retries them until
/// they are acknowledged, and counting them would have the next holder
/// publish them again): the progress figure counts them while they last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stopped {
    pub generation: u64,
    pub through_ms: i64,
}

impl EngineProgress {
    /// Progress with nothing stopped.
    pub fn at(generation: u64, published_through_ms: i64) -> Self {
        Self {
            generation,
            published_through_ms,
            stopped: Arc::default(),
        }
    }
}
