//! The lease protocol without NATS: unit cases of [`Replica`], and a
//! simulation of hundreds of replicas joining, leaving and dying over an
//! in-memory bucket with the same revision checks as NATS KV, lagging
//! watches and lost answers. Time is a number; nothing sleeps.

mod world;

use super::replica::{EngineProgress, Key, LeaseTiming, Op, Outcome, Replica, Stopped};
use super::ShardValue;
use std::collections::BTreeMap;
use world::{World, TIMING};

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
    let ops = replica.tick(now, &EngineProgress::default());
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
    replica.tick(until - 1, &EngineProgress::default());
    assert!(replica.grants().shards.contains_key(&0));
    replica.tick(until, &EngineProgress::default());
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

/// The engine reports one progress figure for all the shards it schedules.
/// Once it has stopped a shard being given up, that figure goes on rising
/// with its other shards; the release must carry the shard's own, from
/// before the engine stopped it, or the slots in between are published by
/// nobody (the chaos bench lost about a renewal's worth of each moved
/// shard's slots this way).
#[test]
fn a_shard_given_up_carries_the_watermark_from_before_the_engine_stopped_it() {
    let mut replica = Replica::new("a", TIMING);
    let now = 1_000_000;
    for shard in 0..8 {
        replica.observe(&Key::Shard(shard), None, now);
    }
    for op in replica.tick(now, &EngineProgress::default()) {
        if let Op::Take { shard, .. } = op {
            replica.applied(&op, Outcome::Stored(u64::from(shard) + 1), now);
        }
    }
    assert_eq!(replica.grants().shards.len(), 8);
    // The engine schedules all eight; everything before `stopped` is out.
    let stopped = now + 1_500;
    let progress = EngineProgress::at(replica.grants().generation, stopped);
    // A second replica joins: four shards are revoked from the engine.
    replica.observe(&Key::Member("b".into()), Some((100, b"{}")), now + 1_000);
    let ops = replica.tick(now + 2_000, &progress);
    assert!(ops.iter().all(|op| !matches!(op, Op::Release { .. })));
    let revoked = replica.grants();
    assert_eq!(revoked.shards.len(), 4);

    // The engine applies that and goes on with its four: its figure rises.
    let ops = replica.tick(
        now + 4_000,
        &EngineProgress::at(revoked.generation, now + 3_900),
    );
    let released: Vec<i64> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Release { value, .. } => Some(value.published_through_ms),
            _ => None,
        })
        .collect();
    assert_eq!(released, vec![stopped; 4], "{ops:?}");

    // An engine that says how far each shard was published when it stopped
    // it (after a last round that frozen figure missed) is taken at its word.
    let engine_stopped: BTreeMap<u16, Stopped> = revoked_shards(&replica, &revoked)
        .into_iter()
        .map(|shard| {
            let stopped = Stopped {
                generation: revoked.generation,
                through_ms: now + 1_700,
            };
            (shard, stopped)
        })
        .collect();
    let ops = replica.tick(
        now + 6_000,
        &EngineProgress {
            stopped: engine_stopped.into(),
            ..EngineProgress::at(revoked.generation, now + 5_900)
        },
    );
    let released: Vec<i64> = ops
        .iter()
        .filter_map(|op| match op {
            Op::Release { value, .. } => Some(value.published_through_ms),
            _ => None,
        })
        .collect();
    assert_eq!(released, vec![now + 1_700; 4], "{ops:?}");

    // Released at shutdown instead (the answer lost): the same watermark.
    let left: Vec<(u16, i64)> = replica
        .leave(&EngineProgress::at(u64::MAX, now + 8_000))
        .iter()
        .filter_map(|op| match op {
            Op::Release { shard, value, .. } => Some((*shard, value.published_through_ms)),
            _ => None,
        })
        .collect();
    assert_eq!(left.len(), 8);
    for (shard, through) in left {
        let expected = if revoked.shards.contains_key(&shard) {
            now + 8_000
        } else {
            stopped
        };
        assert_eq!(through, expected, "shard {shard}");
    }
}

/// The engines publish their shards' slots as the shell does, and report
/// one figure for all their shards: through joins (shards given up to the
/// newcomer), a death (taken over from the last watermark), clean leaves
/// and lost answers, every slot of every shard is published by someone.
#[test]
fn every_slot_of_every_shard_is_published_through_joins_leaves_and_deaths() {
    let timing = LeaseTiming {
        shards: 16,
        ..TIMING
    };
    let mut world = World::new(timing, 11);
    world.lost_answers = 20;
    world.join();
    world.until(5_000, World::all_owned);
    world.run(3_000);
    // Two join: each takes a third, given up by the first.
    world.join();
    world.run(1_000);
    world.join();
    world.until(6 * timing.ttl_ms, World::balanced);
    world.run(7_000);
    // One dies: its shards are taken over from its last watermark.
    world.kill(1);
    world.until(6 * timing.ttl_ms, World::balanced);
    // A newcomer takes some back at once, before they are all caught up.
    world.join();
    world.until(6 * timing.ttl_ms, World::balanced);
    world.run(5_000);
    // A clean leave hands over at once.
    world.leave(0);
    world.until(6 * timing.ttl_ms, World::balanced);
    world.run(5_000);
    world.assert_every_slot_published(world.now - 1_000);
}

/// The shards held but no longer granted (being given up).
fn revoked_shards(replica: &Replica, granted: &super::Grants) -> Vec<u16> {
    (0..replica.timing().shards)
        .filter(|shard| !granted.shards.contains_key(shard))
        .collect()
}

/// The bucket's writes stall for longer than the TTL (the chaos bench's
/// SIGKILL of the stream leader): every replica stops publishing its shards
/// when their leases are not renewed in time, takes them (or others') back
/// when the writes go through again, and the shares settle. Every slot of
/// the stall goes out late, none is skipped.
#[test]
fn every_slot_is_published_when_the_bucket_stalls_past_the_ttl() {
    let timing = LeaseTiming {
        shards: 16,
        ..TIMING
    };
    let mut world = World::new(timing, 5);
    for _ in 0..3 {
        world.join();
    }
    world.until(6 * timing.ttl_ms, World::balanced);
    world.run(5_000);
    world.stalled_until = world.now + timing.ttl_ms + 3_000;
    world.run(timing.ttl_ms + 1_000);
    assert_eq!(world.owned().iter().map(|(_, n)| n).sum::<usize>(), 0);
    world.run(2_000);
    world.until(10 * timing.ttl_ms, World::balanced);
    world.run(5_000);
    world.assert_every_slot_published(world.now - 1_000);
}
