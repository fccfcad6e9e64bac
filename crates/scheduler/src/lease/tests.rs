//! The lease protocol without NATS: unit cases of [`Replica`], and a
//! simulation of hundreds of replicas joining, leaving and dying over an
//! in-memory bucket with the same revision checks as NATS KV, lagging
//! watches and lost answers. Time is a number; nothing sleeps.

use super::replica::{EngineProgress, Grants, Key, LeaseTiming, Op, Outcome, Replica};
use super::ShardValue;
use crate::slots::mix64;
use std::collections::BTreeMap;

const TIMING: LeaseTiming = LeaseTiming {
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
struct Bucket {
    keys: BTreeMap<String, (u64, Vec<u8>)>,
    log: Vec<Change>,
    revision: u64,
}

impl Bucket {
    fn write(&mut self, op: &Op, id: &str, now: i64) -> Outcome {
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

/// A replica in the simulation.
struct Sim {
    replica: Replica,
    /// Stopped ticking (killed or left).
    stopped: bool,
    next_tick: i64,
    /// How far into the bucket's log its watch has delivered.
    cursor: usize,
    /// Its watch delivers changes this long after they happen.
    lag_ms: i64,
    grants: Grants,
}

/// A tiny deterministic generator.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = mix64(self.0);
        self.0 % n.max(1)
    }
}

struct World {
    bucket: Bucket,
    sims: Vec<Sim>,
    rng: Rng,
    now: i64,
    timing: LeaseTiming,
    /// Per mille of writes whose answer is lost (half of them landed).
    lost_answers: u64,
}

impl World {
    fn new(timing: LeaseTiming, seed: u64) -> Self {
        Self {
            bucket: Bucket::default(),
            sims: Vec::new(),
            rng: Rng(seed),
            now: 1_800_000_000_000,
            timing,
            lost_answers: 0,
        }
    }

    fn join(&mut self) -> usize {
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
        });
        self.sims.len() - 1
    }

    /// Stops ticking without a word: its leases run out.
    fn kill(&mut self, index: usize) {
        self.sims[index].stopped = true;
    }

    /// Stops cleanly: the engine stops, the leases are released, the
    /// member key deleted.
    fn leave(&mut self, index: usize) {
        let now = self.now;
        let sim = &mut self.sims[index];
        let progress = EngineProgress {
            generation: u64::MAX,
            published_through_ms: now,
        };
        for op in sim.replica.leave(progress) {
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
    fn run(&mut self, ms: i64) {
        let end = self.now + ms;
        while self.now < end {
            self.now += 200;
            self.step();
            self.assert_exclusive();
        }
    }

    fn step(&mut self) {
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
            if now < sim.next_tick {
                continue;
            }
            sim.next_tick = now + self.timing.renew_every_ms;
            // The engine applies each grant by the next tick, published up to now.
            let progress = EngineProgress {
                generation: sim.grants.generation,
                published_through_ms: now,
            };
            let ops = sim.replica.tick(now, progress);
            for op in ops {
                let roll = self.rng.below(1000);
                let outcome = if roll < self.lost_answers / 2 {
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
    fn assert_exclusive(&self) {
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

    /// Granted shards per live replica (valid now).
    fn owned(&self) -> Vec<(usize, usize)> {
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

    fn all_owned(&self) -> bool {
        self.owned().iter().map(|(_, n)| n).sum::<usize>() == usize::from(self.timing.shards)
    }

    /// Every shard owned, and each live replica owning its fair share.
    fn balanced(&self) -> bool {
        let owned = self.owned();
        let live = owned.len().max(1);
        let share = usize::from(self.timing.shards) / live;
        self.all_owned() && owned.iter().all(|(_, n)| *n == share || *n == share + 1)
    }

    /// Runs until `done` holds; returns how long that took.
    fn until(&mut self, limit_ms: i64, done: impl Fn(&World) -> bool) -> i64 {
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

#[test]
fn one_replica_takes_every_shard_at_once_and_resumes_where_the_last_stopped() {
    let mut world = World::new(TIMING, 1);
    // A previous holder released shard 3 having published up to 12345.
    let old = ShardValue {
        holder: None,
        published_through_ms: 12_345,
    };
    world.bucket.write(
        &Op::Take {
            shard: 3,
            expected: 0,
            value: old,
        },
        "gone",
        0,
    );
    let a = world.join();
    let took = world.until(TIMING.renew_every_ms + 1_000, World::all_owned);
    assert!(took <= TIMING.renew_every_ms + 100, "{took} ms");
    let grants = &world.sims[a].grants;
    assert_eq!(grants.shards.len(), 8);
    assert_eq!(grants.shards[&3].resume_from_ms, 12_345);
    assert_eq!(grants.shards[&0].resume_from_ms, 0, "never held");
}

#[test]
fn a_second_replica_gets_half_and_a_dead_ones_shards_move_within_the_ttl() {
    let mut world = World::new(TIMING, 2);
    let a = world.join();
    world.until(5_000, World::all_owned);
    let b = world.join();
    world.until(4 * TIMING.ttl_ms, World::balanced);
    assert_eq!(world.owned(), vec![(a, 4), (b, 4)]);

    world.kill(a);
    // The survivor sees A's member key go quiet after the TTL, and its
    // leases expire at the same time.
    let moved = world.until(2 * TIMING.ttl_ms, World::all_owned);
    assert!(
        moved <= TIMING.ttl_ms + TIMING.renew_every_ms + 500,
        "took {moved} ms"
    );
    assert_eq!(world.owned(), vec![(b, 8)]);
}

#[test]
fn a_clean_leave_hands_over_within_a_renewal() {
    let mut world = World::new(TIMING, 3);
    for _ in 0..3 {
        world.join();
    }
    world.until(4 * TIMING.ttl_ms, World::balanced);
    let before = world.now;
    world.leave(0);
    // The others see the member key deleted and the shards free; their
    // next tick takes them.
    let moved = world.until(3 * TIMING.renew_every_ms, World::balanced);
    assert!(moved <= 2 * TIMING.renew_every_ms, "took {moved} ms");
    // The releases carry the watermark.
    for shard in 0..TIMING.shards {
        let (_, bytes) = &world.bucket.keys[&Key::Shard(shard).name()];
        let value: ShardValue = serde_json::from_slice(bytes).unwrap();
        assert!(value.published_through_ms >= before - TIMING.renew_every_ms);
    }
}

#[test]
fn a_renewal_whose_answer_was_lost_keeps_the_lease() {
    let mut replica = Replica::new("a", TIMING);
    let now = 1_000_000;
    for shard in 0..8 {
        replica.observe(&Key::Shard(shard), None, now);
    }
    let ops = replica.tick(now, EngineProgress::default());
    let take = ops
        .iter()
        .find(|op| matches!(op, Op::Take { shard: 0, .. }))
        .unwrap()
        .clone();
    replica.applied(&take, Outcome::Stored(5), now);
    let renew = Op::Renew {
        shard: 0,
        expected: 5,
        value: ShardValue {
            holder: Some("a".into()),
            published_through_ms: now,
        },
    };
    // Renewed (revision 6) but the answer was lost; the watch shows it.
    replica.applied(&renew, Outcome::Unknown, now + 2_000);
    let stored = serde_json::to_vec(&ShardValue {
        holder: Some("a".into()),
        published_through_ms: now,
    })
    .unwrap();
    replica.observe(&Key::Shard(0), Some((6, &stored)), now + 2_100);
    replica.applied(&renew, Outcome::Conflict, now + 4_000);
    let grant = replica.grants().shards[&0];
    assert_eq!(
        grant.valid_until_ms,
        now + TIMING.ttl_ms - TIMING.renew_every_ms,
        "still its own, until the last confirmed renewal runs out"
    );
    // A conflict with another holder's revision loses it at once.
    let theirs = serde_json::to_vec(&ShardValue {
        holder: Some("b".into()),
        published_through_ms: now,
    })
    .unwrap();
    replica.observe(&Key::Shard(0), Some((9, &theirs)), now + 5_000);
    replica.applied(
        &Op::Renew {
            shard: 0,
            expected: 6,
            value: ShardValue::default(),
        },
        Outcome::Conflict,
        now + 6_000,
    );
    assert!(!replica.grants().shards.contains_key(&0));
}

#[test]
fn a_lease_not_renewed_in_time_is_dropped_before_anyone_may_take_it() {
    let mut replica = Replica::new("a", TIMING);
    let now = 1_000_000;
    replica.observe(&Key::Shard(0), None, now);
    let take = Op::Take {
        shard: 0,
        expected: 0,
        value: ShardValue::default(),
    };
    replica.applied(&take, Outcome::Stored(1), now);
    let until = replica.grants().shards[&0].valid_until_ms;
    assert!(until < now + TIMING.ttl_ms);
    // NATS unreachable: renewals go unanswered; the tick at the deadline drops it.
    replica.tick(until - 1, EngineProgress::default());
    assert!(replica.grants().shards.contains_key(&0));
    replica.tick(until, EngineProgress::default());
    assert!(replica.grants().shards.is_empty());
}

#[test]
fn hundreds_of_replicas_joining_leaving_and_dying_never_share_a_shard() {
    let timing = LeaseTiming {
        shards: 512,
        ..TIMING
    };
    let mut world = World::new(timing, 42);
    world.lost_answers = 20;
    for _ in 0..50 {
        world.join();
    }
    world.until(6 * timing.ttl_ms, World::balanced);

    // 150 more join, a few at a time.
    for _ in 0..30 {
        for _ in 0..5 {
            world.join();
        }
        world.run(500);
    }
    world.until(10 * timing.ttl_ms, World::balanced);
    assert_eq!(world.owned().len(), 200);

    // 40 die at once: their shards are owned again within the TTL and a few
    // renewals (the survivors first have to see them go quiet, then each
    // takes at its next renewal what it is short of).
    let mut killed = 0;
    for index in 0..world.sims.len() {
        if killed < 40 && world.rng.below(4) == 0 && !world.sims[index].stopped {
            world.kill(index);
            killed += 1;
        }
    }
    let moved = world.until(6 * timing.ttl_ms, World::all_owned);
    assert!(
        moved <= timing.ttl_ms + 4 * timing.renew_every_ms,
        "owned again after {moved} ms"
    );
    world.until(10 * timing.ttl_ms, World::balanced);

    // 60 leave cleanly while 40 join.
    let live: Vec<usize> = world.owned().into_iter().map(|(i, _)| i).collect();
    for (n, index) in live.into_iter().take(60).enumerate() {
        world.leave(index);
        if n % 3 == 0 {
            world.join();
            world.join();
        }
        world.run(300);
    }
    world.until(10 * timing.ttl_ms, World::balanced);
    assert_eq!(world.owned().len(), 200 - 40 - 60 + 40);
}

#[test]
fn the_member_keys_of_vanished_replicas_are_deleted() {
    let mut world = World::new(TIMING, 7);
    for _ in 0..6 {
        world.join();
    }
    world.until(4 * TIMING.ttl_ms, World::balanced);
    world.kill(1);
    world.kill(4);
    world.until(4 * TIMING.ttl_ms, World::balanced);
    world.run(TIMING.forget_after_ms() + 2 * TIMING.renew_every_ms);
    let members = world
        .bucket
        .keys
        .keys()
        .filter(|k| k.starts_with("member."))
        .count();
    assert_eq!(members, 4, "the bucket holds the live replicas' keys only");
}
