//! A replica's fair share and the shards it takes towards it (the rules
//! are in [`super`]'s header): who is short of their share, which shards
//! are free, expired or orphaned, and which of them this replica wins.

use super::{hash_id, Op, Replica, ShardValue};
use crate::slots::mix64;
use std::collections::HashMap;

impl Replica {
    /// This replica's share, by how many shards the other live members
    /// together fall short of theirs (counting the leases its view shows
    /// them holding), and the id hashes of the members short of theirs.
    pub(super) fn shares(&self, now: i64) -> (usize, usize, Vec<u64>) {
        let live = self.live_members(now);
        let shards = usize::from(self.timing.shards.max(1));
        let share_of = |rank: usize| shards / live.len() + usize::from(rank < shards % live.len());
        let mut holding: HashMap<&str, usize> = HashMap::new();
        for (seen, value) in self.shards.iter().flatten() {
            if let Some(holder) = value.holder.as_deref() {
                if now - seen.since_ms < self.timing.ttl_ms {
                    *holding.entry(holder).or_default() += 1;
                }
            }
        }
        let mut share = 0;
        let mut short = 0;
        let mut needy = Vec::new();
        for (rank, id) in live.iter().enumerate() {
            let held = if *id == self.id {
                share = share_of(rank);
                self.held.len() - self.releasing.len()
            } else {
                let held = holding.get(id).copied().unwrap_or(0);
                short += share_of(rank).saturating_sub(held);
                held
            };
            if held < share_of(rank) {
                needy.push(hash_id(id));
            }
        }
        (share, short, needy)
    }

    /// Higher is more wanted: a hash of the shard and this replica's id, so
    /// that each replica has its own order.
    pub(super) fn preference(&self, shard: u16) -> u64 {
        mix64(self.id_hash ^ u64::from(shard))
    }

    /// The revision to take `shard` from, if it is free or expired (or names
    /// this replica after a take whose answer was lost).
    pub(super) fn takeable(&self, shard: u16, now: i64) -> Option<u64> {
        if self.held.contains_key(&shard) {
            return None;
        }
        match &self.shards[usize::from(shard)] {
            None => Some(0),
            Some((seen, value)) => match value.holder.as_deref() {
                None => Some(seen.revision),
                Some(holder) if holder == self.id => Some(seen.revision),
                Some(_) if now - seen.since_ms >= self.timing.ttl_ms => Some(seen.revision),
                Some(_) => None,
            },
        }
    }

    pub(super) fn note_unowned(&mut self, now: i64) {
        for shard in 0..self.timing.shards.max(1) {
            let free = self.takeable(shard, now).is_some() || self.held.contains_key(&shard);
            let since = &mut self.unowned_since[usize::from(shard)];
            match (free && !self.held.contains_key(&shard), *since) {
                (true, None) => *since = Some(now),
                (false, _) => *since = None,
                _ => {}
            }
        }
    }

    /// Takes of up to `wanted` free or expired shards (and of any orphaned
    /// one). First the shards this replica wins among the `needy` members
    /// by highest random weight: with the same view every needy member
    /// wins different ones, so a dead replica's shards are not raced for.
    pub(super) fn takes(&self, now: i64, wanted: usize, needy: &[u64]) -> Vec<Op> {
        let wins = |shard: u16| {
            needy
                .iter()
                .map(|member| mix64(member ^ u64::from(shard)))
                .max()
                .is_some_and(|best| best == self.preference(shard))
        };
        let mut candidates: Vec<(bool, bool, u64, u16, u64)> = (0..self.timing.shards.max(1))
            .filter_map(|shard| {
                let expected = self.takeable(shard, now)?;
                let orphaned = self.unowned_since[usize::from(shard)]
                    .is_some_and(|since| now - since >= 2 * self.timing.ttl_ms);
                let won = wanted > 0 && wins(shard);
                Some((orphaned, won, self.preference(shard), shard, expected))
            })
            .collect();
        candidates.sort_unstable_by(|a, b| b.cmp(a));
        let mut ops = Vec::new();
        for (index, (orphaned, _, _, shard, expected)) in candidates.into_iter().enumerate() {
            if index >= wanted && !orphaned {
                continue;
            }
            let resume = self.shards[usize::from(shard)]
                .as_ref()
                .map_or(0, |(_, v)| v.published_through_ms);
            ops.push(Op::Take {
                shard,
                expected,
                value: ShardValue {
                    holder: Some(self.id.clone()),
                    published_through_ms: resume,
                },
            });
        }
        ops
    }
}
