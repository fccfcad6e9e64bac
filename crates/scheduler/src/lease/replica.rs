//! One replica's side of the lease protocol, with no I/O: what it has seen
//! of the bucket, what it holds, and which writes it wants next. The clock is
//! a parameter; the shell ([`super::driver`]) runs the writes against NATS KV
//! and the simulation (`tests`) against an in-memory bucket.
//!
//! The rules (docs/architecture.md, "Scheduler leases"):
//!
//! - A shard's lease is its key `shard.<n>`. Every write to it is checked
//!   against the revision last seen (`create` for a missing key), so of two
//!   replicas writing at once exactly one succeeds.
//! - The holder rewrites its lease every `renew_every`. It counts the lease
//!   as its own until `sent + ttl - renew_every`, where `sent` is when it
//!   sent the last renewal the server acknowledged, and stops scheduling the
//!   shard at once after that (or when a renewal finds another holder).
//! - Another replica counts a lease as expired once it has seen the same
//!   revision of the key for `ttl` by its own clock. The revision it saw was
//!   written after the holder sent it, so the holder's own deadline passed
//!   first; no clock is compared with another's. A reader that lags only
//!   takes later, or fails its revision check.
//! - Members (`member.<id>`, rewritten every `renew_every`) are live while
//!   their key changes within `ttl`. Each replica's fair share follows from
//!   the sorted live ids: `shards / live`, one more for the first
//!   `shards % live`. Under its share a replica takes free or expired
//!   shards, most preferred first (a per-replica hash order, so that
//!   replicas rarely race for the same shard). Over its share it gives up
//!   its least preferred ones (after the engine confirms it stopped them),
//!   but only as many as the other members are short of theirs: shares
//!   shift by one as members come and go, and no shard moves for nothing.
//! - A shard left free or expired for `2 * ttl` is taken by anyone, share or
//!   not, so that all shards are scheduled while any replica runs; the next
//!   rounds give extras back.
//! - A lease carries `published_through_ms`: every slot due before it was
//!   published by its holders. The next holder resumes there. A shard given
//!   up carries the engine's progress from before the engine stopped it
//!   (the engine's figure covers all its shards, and goes on rising with
//!   the others after it stopped this one).

mod shares;

pub use super::protocol::{EngineProgress, Grant, Grants, Key, LeaseTiming, Op, Outcome, Stopped};
use super::{MemberValue, ShardValue};
use crate::slots::mix64;
use std::collections::{BTreeMap, HashMap};

/// A revision of a key and when this replica first saw it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Seen {
    revision: u64,
    since_ms: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    revision: u64,
    /// When the last acknowledged renewal (or the take) was sent.
    sent_ms: i64,
    /// Where the first holder after a gap resumes (from the lease taken).
    resume_from_ms: i64,
    /// The grants generation that gave it to the engine: until the engine
    /// has applied it, the lease keeps carrying `resume_from_ms`.
    granted_at: u64,
}

impl Held {
    /// What the lease says is published, given the engine's progress.
    fn published_through(&self, progress: &EngineProgress) -> i64 {
        if progress.generation >= self.granted_at {
            progress.published_through_ms
        } else {
            self.resume_from_ms
        }
    }
}

/// A held shard being given up: revoked from the engine at `at` (a grants
/// generation), released once the engine has applied that.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Revoked {
    at: u64,
    /// The watermark its release carries: the shard's published-through by
    /// the engine's last progress from before it applied the revocation.
    /// Progress is one figure for all the shards the engine schedules; once
    /// it has stopped this one, the figure goes on rising with the others
    /// while this shard's slots go unpublished until its next holder takes
    /// it. Carrying that later figure skipped them (the slots due between
    /// the engine stopping the shard and the release, up to a renewal's
    /// worth, or the whole gap of a shard taken over and given up before
    /// its gap went out).
    through_ms: i64,
}

impl Revoked {
    /// The watermark to release `shard` with, the engine having applied
    /// the revocation: the engine's own figure from when it stopped the
    /// shard, if it has one for this revocation, held below what is still
    /// in flight (the figure frozen here is its last before it stopped the
    /// shard: lower by up to a round and by what was in flight then, which
    /// the next holder would publish again).
    fn release_through(&self, shard: u16, progress: &EngineProgress) -> i64 {
        match progress.stopped.get(&shard) {
            Some(stopped) if stopped.generation >= self.at => {
                let exact = stopped.through_ms.min(progress.published_through_ms);
                self.through_ms.max(exact)
            }
            _ => self.through_ms,
        }
    }
}

/// A replica id's hash, the seed of its shard preferences.
fn hash_id(id: &str) -> u64 {
    id.bytes().fold(0u64, |h, b| mix64(h ^ u64::from(b)))
}

#[derive(Debug)]
pub struct Replica {
    id: String,
    /// A hash of `id`, the seed of this replica's shard preferences.
    id_hash: u64,
    timing: LeaseTiming,
    members: HashMap<String, Seen>,
    /// Per shard, the revision seen and the value; `None` when missing or deleted.
    shards: Vec<Option<(Seen, ShardValue)>>,
    /// Free or expired since (by this replica's view), for the orphan rule.
    unowned_since: Vec<Option<i64>>,
    held: BTreeMap<u16, Held>,
    /// Held shards being given up.
    releasing: BTreeMap<u16, Revoked>,
    generation: u64,
}

impl Replica {
    pub fn new(id: impl Into<String>, timing: LeaseTiming) -> Self {
        let count = usize::from(timing.shards.max(1));
        let id: String = id.into();
        let id_hash = hash_id(&id);
        Self {
            id,
            id_hash,
            timing,
            members: HashMap::new(),
            shards: vec![None; count],
            unowned_since: vec![None; count],
            held: BTreeMap::new(),
            releasing: BTreeMap::new(),
            generation: 0,
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn timing(&self) -> LeaseTiming {
        self.timing
    }

    /// The writes that give every held lease up, the engine having stopped
    /// with `progress`.
    pub fn leave(&mut self, progress: &EngineProgress) -> Vec<Op> {
        self.held
            .iter()
            .map(|(shard, held)| Op::Release {
                shard: *shard,
                expected: held.revision,
                value: ShardValue {
                    holder: None,
                    // A shard being given up stopped before the engine did.
                    published_through_ms: match self.releasing.get(shard) {
                        Some(revoked) => revoked.release_through(*shard, progress),
                        None => held.published_through(progress),
                    },
                },
            })
            .collect()
    }

    /// The bucket's `key` has `revision` and `value` now (`None`: deleted).
    pub fn observe(&mut self, key: &Key, entry: Option<(u64, &[u8])>, now: i64) {
        match key {
            Key::Member(id) => match entry {
                Some((revision, _)) => {
                    let seen = self.members.entry(id.clone()).or_insert(Seen {
                        revision,
                        since_ms: now,
                    });
                    if seen.revision != revision {
                        *seen = Seen {
                            revision,
                            since_ms: now,
                        };
                    }
                }
                None => {
                    self.members.remove(id);
                }
            },
            Key::Shard(shard) => {
                let Some(slot) = self.shards.get_mut(usize::from(*shard)) else {
                    return;
                };
                let parsed = entry.map(|(revision, bytes)| {
                    let value = serde_json::from_slice::<ShardValue>(bytes).unwrap_or_default();
                    (revision, value)
                });
                *slot = match (slot.take(), parsed) {
                    (_, None) => None,
                    (Some((seen, _)), Some((revision, value))) if seen.revision == revision => {
                        Some((seen, value))
                    }
                    (_, Some((revision, value))) => Some((
                        Seen {
                            revision,
                            since_ms: now,
                        },
                        value,
                    )),
                };
            }
        }
    }

    /// The writes to make at `now`, given the engine's progress. Also drops
    /// the leases this replica can no longer count on.
    pub fn tick(&mut self, now: i64, progress: &EngineProgress) -> Vec<Op> {
        let (ttl, renew) = (self.timing.ttl_ms, self.timing.renew_every_ms);
        let lapsed: Vec<u16> = self
            .held
            .iter()
            .filter(|(_, h)| now >= h.sent_ms + ttl - renew)
            .map(|(s, _)| *s)
            .collect();
        for shard in lapsed {
            tracing::warn!(
                shard,
                "shard lease not renewed in time; stopped scheduling it"
            );
            self.lose(shard);
        }
        self.note_unowned(now);

        // While the engine still schedules a shard being given up, its
        // progress still covers it.
        for (shard, revoked) in &mut self.releasing {
            if let Some(held) = self.held.get(shard) {
                if progress.generation < revoked.at {
                    revoked.through_ms = held.published_through(progress);
                }
            }
        }

        let mut ops = vec![Op::PutMember(MemberValue {})];
        let (share, short, needy) = self.shares(now);
        let mut keeping = self.held.len() - self.releasing.len();
        // Over its share, a replica gives up as many shards as the others
        // are short of theirs (by its view): shares shift by one whenever a
        // member before it comes or goes, and moving a shard nobody is
        // waiting for would be churn.
        let extra = keeping.saturating_sub(share).min(short);
        if extra > 0 {
            let mut extras: Vec<u16> = self
                .held
                .keys()
                .filter(|s| !self.releasing.contains_key(s))
                .copied()
                .collect();
            extras.sort_by_key(|s| self.preference(*s));
            for shard in extras.into_iter().take(extra) {
                self.generation += 1;
                let through_ms = self.held[&shard].published_through(progress);
                self.releasing.insert(
                    shard,
                    Revoked {
                        at: self.generation,
                        through_ms,
                    },
                );
                keeping -= 1;
            }
        }
        for (shard, held) in &self.held {
            let value = ShardValue {
                holder: Some(self.id.clone()),
                published_through_ms: held.published_through(progress),
            };
            match self.releasing.get(shard) {
                Some(revoked) if progress.generation >= revoked.at => ops.push(Op::Release {
                    shard: *shard,
                    expected: held.revision,
                    value: ShardValue {
                        holder: None,
                        published_through_ms: revoked.release_through(*shard, progress),
                    },
                }),
                _ => ops.push(Op::Renew {
                    shard: *shard,
                    expected: held.revision,
                    value,
                }),
            }
        }
        ops.extend(self.takes(now, share.saturating_sub(keeping), &needy));
        ops.extend(self.forgettable(now));
        ops
    }

    /// What became of a write sent at `sent_ms`.
    pub fn applied(&mut self, op: &Op, outcome: Outcome, sent_ms: i64) {
        match (op, outcome) {
            (Op::Take { shard, value, .. }, Outcome::Stored(revision)) => {
                self.generation += 1;
                self.held.insert(
                    *shard,
                    Held {
                        revision,
                        sent_ms,
                        resume_from_ms: value.published_through_ms,
                        granted_at: self.generation,
                    },
                );
            }
            (Op::Renew { shard, .. }, Outcome::Stored(revision)) => {
                if let Some(held) = self.held.get_mut(shard) {
                    held.revision = revision;
                    held.sent_ms = sent_ms;
                }
            }
            (Op::Renew { shard, .. }, Outcome::Conflict) => {
                // An earlier renewal whose answer was lost may have landed:
                // then the key names this replica under a newer revision,
                // and the lease is still its own (until its last confirmed
                // renewal runs out). Anything else: another replica holds it.
                let mine = self.shards[usize::from(*shard)]
                    .as_ref()
                    .filter(|(_, v)| v.holder.as_deref() == Some(self.id.as_str()))
                    .map(|(seen, _)| seen.revision);
                match (mine, self.held.get_mut(shard)) {
                    (Some(revision), Some(held)) if revision > held.revision => {
                        held.revision = revision;
                    }
                    _ => {
                        tracing::warn!(shard, "shard lease taken by another replica");
                        self.lose(*shard);
                    }
                }
            }
            (Op::Release { shard, .. }, Outcome::Stored(_) | Outcome::Conflict) => {
                self.held.remove(shard);
                self.releasing.remove(shard);
            }
            _ => {}
        }
    }

    /// The shards the engine may schedule now.
    pub fn grants(&self) -> Grants {
        let shards = self
            .held
            .iter()
            .filter(|(s, _)| !self.releasing.contains_key(s))
            .map(|(s, h)| {
                (
                    *s,
                    Grant {
                        valid_until_ms: h.sent_ms + self.timing.ttl_ms - self.timing.renew_every_ms,
                        resume_from_ms: h.resume_from_ms,
                        taken_at: h.granted_at,
                    },
                )
            })
            .collect();
        Grants {
            generation: self.generation,
            shards,
        }
    }

    /// Live members by this replica's view, itself included, sorted.
    pub fn live_members(&self, now: i64) -> Vec<&str> {
        let mut live: Vec<&str> = self
            .members
            .iter()
            .filter(|(id, seen)| *id != &self.id && now - seen.since_ms < self.timing.ttl_ms)
            .map(|(id, _)| id.as_str())
            .collect();
        live.push(&self.id);
        live.sort_unstable();
        live
    }

    fn lose(&mut self, shard: u16) {
        if self.held.remove(&shard).is_some() {
            self.releasing.remove(&shard);
            self.generation += 1;
        }
    }

    fn forgettable(&self, now: i64) -> Vec<Op> {
        self.members
            .iter()
            .filter(|(id, seen)| {
                *id != &self.id && now - seen.since_ms >= self.timing.forget_after_ms()
            })
            .map(|(id, seen)| Op::ForgetMember {
                id: id.clone(),
                expected: seen.revision,
            })
            .collect()
    }
}
