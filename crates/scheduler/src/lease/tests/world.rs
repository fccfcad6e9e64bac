//! The simulation's world: an in-memory bucket with NATS KV's revision
//! checks and a change log, replicas with lagging watches, lost answers.

use super::super::replica::{EngineProgress, Grants, Key, LeaseTiming, Op, Outcome, Replica};
use crate::slots::mix64;
use std::collections::{BTreeMap, HashSet};

/// Every shard has a slot at each multiple of this (a slot stands for all
/// the shard's checks due then).
pub(super) const SLOT_MS: i64 = 100;

pub(super) const TIMING: LeaseTiming = LeaseTiming {
    shards: 8,
    ttl_ms: 10_000,
    renew_every_ms: 2_000,
};

/// One change of the bucket: when, which key, its revision and value (or
/// deleted).
type Change = (i64, Key, Option<(u64, Vec<u8>)>);

/// An in-memory bucket: the latest revision and value per key, and the log
/// of every change (what a watch delivers).
#[derive(Default)]
pub(super) struct Bucket {
    pub(super) keys: BTreeMap<String, (u64, Vec<u8>)>,
    pub(super) log: Vec<Change>,
    pub(super) revision: u64,
}

impl Bucket {
    pub(super) fn write(&mut self, op: &Op, id: &str, now: i64) -> Outcome {
        let (key, expected, value) = match op {
            Op::PutMember(v) => (
                Key::Member(id.to_string()),
                None,
                Some(serde_json::to_vec(v).unwrap()),
            ),
            Op::Take {
                shard,
                expected,
                value,
            }
            | Op::Renew {
                shard,
                expected,
                value,
            }
            | Op::Release {
                shard,
                expected,
                value,
            } => (
                Key::Shard(*shard),
                Some(*expected),
                Some(serde_json::to_vec(value).unwrap()),
            ),
            Op::ForgetMember { id, expected } => (Key::Member(id.clone()), Some(*expected), None),
        };
        let current = self.keys.get(&key.name()).map_or(0, |(r, _)| *r);
        if expected.is_some_and(|e| e != current) {
            return Outcome::Conflict;
        }
        self.revision += 1;
        let revision = self.revision;
        match &value {
            Some(v) => {
                self.keys.insert(key.name(), (revision, v.clone()));
            }
            None => {
                self.keys.remove(&key.name());
            }
        }
        self.log.push((now, key, value.map(|v| (revision, v))));
        Outcome::Stored(revision)
    }
}

/// A replica's engine, as the shell runs it: it applies the grants the
/// replica gave it at its last round (a shard newly taken, or taken again,
/// from the lease's watermark), publishes each applied shard's due slots
/// while its grant is valid, and reports how far everything it schedules is
/// published: one figure for all its shards, as the shell's.
pub(super) struct Engine {
    applied: Option<Grants>,
    /// Per shard scheduled, its first slot not yet published.
    next: BTreeMap<u16, i64>,
    pub(super) progress: EngineProgress,
}

impl Engine {
    fn new() -> Self {
        Self {
            applied: None,
            next: BTreeMap::new(),
            progress: EngineProgress::default(),
        }
    }

    /// One round at `now`: slots before `start` are not the test's.
    fn round(&mut self, grants: &Grants, now: i64, start: i64, published: &mut Published) {
        for (shard, grant) in &grants.shards {
            let before = self.applied.as_ref().and_then(|a| a.shards.get(shard));
            if before.is_none_or(|b| b.taken_at != grant.taken_at) {
                let from = grant.resume_from_ms.max(start);
                self.next.insert(*shard, first_slot_at_or_after(from));
            }
        }
        self.next
            .retain(|shard, _| grants.shards.contains_key(shard));
        for (shard, next) in &mut self.next {
            // A slot refused for a lapsed grant waits: it holds the figure.
            if grants.shards[shard].valid_until_ms <= now {
                continue;
            }
            while *next <= now {
                published.add(*shard, *next);
                *next += SLOT_MS;
            }
        }
        let through = self.next.values().copied().min().unwrap_or(i64::MAX);
        self.progress = EngineProgress::at(grants.generation, through.min(now + 1));
        self.applied = Some(grants.clone());
    }
}

fn first_slot_at_or_after(ms: i64) -> i64 {
    (ms + SLOT_MS - 1).div_euclid(SLOT_MS) * SLOT_MS
}

/// Every slot published, by any replica.
#[derive(Default)]
pub(super) struct Published {
    slots: HashSet<(u16, i64)>,
}

impl Published {
    /// (Published again after a death: JetStream drops it by its id.)
    fn add(&mut self, shard: u16, slot: i64) {
        self.slots.insert((shard, slot));
    }
}

/// A replica in the simulation.
pub(super) struct Sim {
    pub(super) replica: Replica,
    /// Stopped ticking (killed or left).
    pub(super) stopped: bool,
    pub(super) next_tick: i64,
    /// How far into the bucket's log its watch has delivered.
    pub(super) cursor: usize,
    /// Its watch delivers changes this long after they happen.
    pub(super) lag_ms: i64,
    pub(super) grants: Grants,
    pub(super) engine: Engine,
}

/// A tiny deterministic generator.
pub(super) struct Rng(pub(super) u64);
impl Rng {
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.0 = mix64(self.0);
        self.0 % n.max(1)
    }
}

pub(super) struct World {
    pub(super) bucket: Bucket,
    pub(super) sims: Vec<Sim>,
    pub(super) rng: Rng,
    pub(super) now: i64,
    pub(super) timing: LeaseTiming,
    /// Per mille of writes whose answer is lost (half of them landed).
    pub(super) lost_answers: u64,
    /// Until then no write reaches the bucket and none is answered (a
    /// stream leader re-elected: the bucket's writes stall).
    pub(super) stalled_until: i64,
    /// When the simulation started: the first slot of every shard.
    pub(super) start: i64,
    pub(super) published: Published,
}

impl World {
    pub(super) fn new(timing: LeaseTiming, seed: u64) -> Self {
        Self {
            bucket: Bucket::default(),
            sims: Vec::new(),
            rng: Rng(seed),
            now: 1_800_000_000_000,
            timing,
            lost_answers: 0,
            stalled_until: 0,
            start: 1_800_000_000_000,
            published: Published::default(),
        }
    }

    pub(super) fn join(&mut self) -> usize {
        let id = format!(
            "{:016x}",
            mix64(self.sims.len() as u64 + self.rng.below(1 << 40))
        );
        let replica = Replica::new(id, self.timing);
        let grants = replica.grants();
        let jitter = self.rng.below(self.timing.renew_every_ms as u64) as i64;
        let lag_ms = self.rng.below(500) as i64;
        self.sims.push(Sim {
            replica,
            stopped: false,
            next_tick: self.now + jitter,
            cursor: 0,
            lag_ms,
            grants,
            engine: Engine::new(),
        });
        self.sims.len() - 1
    }

    /// Stops ticking without a word: its leases run out.
    pub(super) fn kill(&mut self, index: usize) {
        self.sims[index].stopped = true;
    }

    /// Stops cleanly: the engine stops, the leases are released, the
    /// member key deleted.
    pub(super) fn leave(&mut self, index: usize) {
        let now = self.now;
        let sim = &mut self.sims[index];
        // The engine stopped after its last round.
        let progress = EngineProgress {
            generation: u64::MAX,
            ..sim.engine.progress.clone()
        };
        for op in sim.replica.leave(&progress) {
            let outcome = self.bucket.write(&op, sim.replica.id(), now);
            sim.replica.applied(&op, outcome, now);
        }
        let member = Op::ForgetMember {
            id: sim.replica.id().to_string(),
            expected: self
                .bucket
                .keys
                .get(&Key::Member(sim.replica.id().to_string()).name())
                .map_or(0, |(r, _)| *r),
        };
        self.bucket.write(&member, "", now);
        sim.stopped = true;
        sim.grants = sim.replica.grants();
    }

    /// Moves time forward by `ms`, 200 ms a step, checking after each step
    /// that no shard is granted to two replicas.
    pub(super) fn run(&mut self, ms: i64) {
        let end = self.now + ms;
        while self.now < end {
            self.now += 200;
            self.step();
            self.assert_exclusive();
        }
    }

    pub(super) fn step(&mut self) {
        let now = self.now;
        for index in 0..self.sims.len() {
            if self.sims[index].stopped {
                continue;
            }
            // Deliver what its watch has seen by now.
            let sim = &mut self.sims[index];
            while let Some((at, key, entry)) = self.bucket.log.get(sim.cursor) {
                if *at + sim.lag_ms > now {
                    break;
                }
                let entry = entry.as_ref().map(|(r, v)| (*r, v.as_slice()));
                sim.replica.observe(key, entry, now);
                sim.cursor += 1;
            }
            sim.engine
                .round(&sim.grants, now, self.start, &mut self.published);
            if now < sim.next_tick {
                continue;
            }
            sim.next_tick = now + self.timing.renew_every_ms;
            let ops = sim.replica.tick(now, &sim.engine.progress);
            for op in ops {
                let roll = self.rng.below(1000);
                let outcome = if now < self.stalled_until || roll < self.lost_answers / 2 {
                    Outcome::Unknown // lost on the way: not stored
                } else {
                    let stored = self.bucket.write(&op, sim.replica.id(), now);
                    if roll < self.lost_answers {
                        Outcome::Unknown // stored, but the answer was lost
                    } else {
                        stored
                    }
                };
                sim.replica.applied(&op, outcome, now);
            }
            sim.grants = sim.replica.grants();
        }
    }

    /// A shard is granted to at most one replica at any instant, dead or
    /// alive (a replica that merely stalled would publish until its grant's
    /// end).
    pub(super) fn assert_exclusive(&self) {
        let mut owner: BTreeMap<u16, usize> = BTreeMap::new();
        for (index, sim) in self.sims.iter().enumerate() {
            for (shard, grant) in &sim.grants.shards {
                if grant.valid_until_ms <= self.now {
                    continue;
                }
                if let Some(other) = owner.insert(*shard, index) {
                    panic!(
                        "shard {shard} granted to replicas {other} and {index} at {}",
                        self.now
                    );
                }
            }
        }
    }

    /// Every slot of every shard from the start until `until` was published
    /// by some replica.
    pub(super) fn assert_every_slot_published(&self, until: i64) {
        let mut missing = Vec::new();
        for shard in 0..self.timing.shards {
            let mut slot = first_slot_at_or_after(self.start);
            while slot < until {
                if !self.published.slots.contains(&(shard, slot)) {
                    missing.push((shard, slot - self.start));
                }
                slot += SLOT_MS;
            }
        }
        assert!(
            missing.is_empty(),
            "{} slots never published (shard, ms after the start): {:?}",
            missing.len(),
            &missing[..missing.len().min(40)]
        );
    }

    /// Granted shards per live replica (valid now).
    pub(super) fn owned(&self) -> Vec<(usize, usize)> {
        self.sims
            .iter()
            .enumerate()
            .filter(|(_, s)| !s.stopped)
            .map(|(i, s)| {
                let n = s
                    .grants
                    .shards
                    .values()
                    .filter(|g| g.valid_until_ms > self.now)
                    .count();
                (i, n)
            })
            .collect()
    }

    pub(super) fn all_owned(&self) -> bool {
        self.owned().iter().map(|(_, n)| n).sum::<usize>() == usize::from(self.timing.shards)
    }

    /// Every shard owned, and each live replica owning its fair share.
    pub(super) fn balanced(&self) -> bool {
        let owned = self.owned();
        let live = owned.len().max(1);
        let share = usize::from(self.timing.shards) / live;
        self.all_owned() && owned.iter().all(|(_, n)| *n == share || *n == share + 1)
    }

    /// Runs until `done` holds; returns how long that took.
    pub(super) fn until(&mut self, limit_ms: i64, done: impl Fn(&World) -> bool) -> i64 {
        let start = self.now;
        while !done(self) {
            assert!(
                self.now - start <= limit_ms,
                "not settled within {limit_ms} ms: {:?}",
                self.owned()
            );
            self.run(200);
        }
        self.now - start
    }
}
