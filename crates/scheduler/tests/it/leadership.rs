//! Replicas share the shards through their leases in NATS KV: two and three
//! share them, a replica that stops or dies hands its shards over within
//! the lease, and every slot is published once, by one replica.
//!
//! The replicas read one clock, moved a second (one renewal) at a time; each
//! step waits until every live replica has made its lease round, so nothing
//! waits for the lease TTL in real time.

use crate::common::*;
use scheduler::Clock;
use std::collections::{BTreeMap, HashSet};
use std::time::Duration;
use uptime_contracts::DueCheck;

pub(crate) const INTERVAL_MS: i64 = 10_000;

/// Moves the clock a second and waits for every replica's next lease round.
pub(crate) async fn step(clock: &Clock, replicas: &[&Running]) {
    let before: Vec<u64> = replicas.iter().map(|r| r.stats.lease_rounds()).collect();
    clock.advance(Duration::from_secs(1));
    eventually(
        "a lease round of every replica",
        Duration::from_secs(10),
        || {
            replicas
                .iter()
                .zip(&before)
                .all(|(r, before)| r.stats.lease_rounds() > *before)
        },
    )
    .await;
}

/// Steps until `done`; returns the steps taken.
pub(crate) async fn step_until(
    clock: &Clock,
    replicas: &[&Running],
    limit: usize,
    what: &str,
    done: impl Fn() -> bool,
) -> usize {
    for taken in 0..=limit {
        if done() {
            return taken;
        }
        step(clock, replicas).await;
    }
    panic!("{what}: not within {limit} steps");
}

pub(crate) fn shards(replicas: &[&Running]) -> Vec<u64> {
    replicas.iter().map(|r| r.stats.shards()).collect()
}

/// Every monitor's published slots follow each other an interval apart (none
/// skipped), and none appears twice.
pub(crate) fn assert_every_slot_once(feed: &Feed<DueCheck>, ids: &[i64]) {
    let all = feed.all();
    let distinct: HashSet<_> = all.iter().map(|r| r.msg_id.clone()).collect();
    assert_eq!(distinct.len(), all.len(), "a slot was stored twice");
    let mut dues: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in &all {
        dues.entry(r.message.monitor_id)
            .or_default()
            .push(r.message.due_at.timestamp_millis());
    }
    for id in ids {
        let mut slots = dues.remove(id).unwrap_or_default();
        slots.sort_unstable();
        assert!(slots.len() >= 3, "monitor {id}: {slots:?}");
        // The first check is named after the creation instant; then every
        // slot from the first after it.
        assert_eq!(
            slots[1],
            scheduler::slots::slot_after(*id, INTERVAL_MS, slots[0]),
            "monitor {id} skipped its first slot: {slots:?}"
        );
        for pair in slots[1..].windows(2) {
            assert_eq!(
                pair[1] - pair[0],
                INTERVAL_MS,
                "monitor {id} skipped a slot: {slots:?}"
            );
        }
    }
}

pub(crate) async fn monitors(env: &uptime_testkit::TestEnv, n: usize) -> Vec<i64> {
    let user = insert_user(env).await;
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(insert_monitor(env, http_monitor(user, 10)).await.id);
    }
    ids
}

#[tokio::test]
async fn two_and_three_replicas_share_the_shards_and_publish_each_slot_once() {
    let env = env().await;
    let ids = monitors(&env, 24).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;

    // One replica takes every shard at once and schedules like before.
    let a = start_replica_on(&env, &clock).await;
    eventually(
        "the first replica to take all 8 shards",
        Duration::from_secs(10),
        || a.stats.shards() == 8,
    )
    .await;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }

    let b = start_replica_on(&env, &clock).await;
    step_until(&clock, &[&a, &b], 10, "two replicas balanced", || {
        shards(&[&a, &b]) == [4, 4]
    })
    .await;
    let c = start_replica_on(&env, &clock).await;
    step_until(&clock, &[&a, &b, &c], 10, "three replicas balanced", || {
        let mut s = shards(&[&a, &b, &c]);
        s.sort_unstable();
        s == [2, 3, 3]
    })
    .await;
    eventually(
        "the 24 monitors spread over the three",
        Duration::from_secs(10),
        || a.stats.monitors() + b.stats.monitors() + c.stats.monitors() == 24,
    )
    .await;

    // Two more intervals, a second at a time.
    for _ in 0..20 {
        step(&clock, &[&a, &b, &c]).await;
    }
    let last = clock.now_ms() - INTERVAL_MS;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > last
        })
        .await;
    }
    assert_every_slot_once(&feed, &ids);
    // Handed over cleanly, no replica published a slot another had: each
    // lease's watermark told the next holder where to start.
    let replicas = [&a, &b, &c];
    let duplicates: u64 = replicas.iter().map(|r| r.stats.duplicates()).sum();
    let published: u64 = replicas.iter().map(|r| r.stats.published()).sum();
    assert_eq!(duplicates, 0, "a slot was published by two replicas");
    assert_eq!(published as usize, feed.all().len());
    for r in [a, b, c] {
        r.stop().await;
    }
}

#[tokio::test]
async fn a_dead_replicas_shards_move_within_the_lease_and_no_slot_is_skipped() {
    let env = env().await;
    let ids = monitors(&env, 24).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let a = start_replica_on(&env, &clock).await;
    let b = start_replica_on(&env, &clock).await;
    let c = start_replica_on(&env, &clock).await;
    step_until(&clock, &[&a, &b, &c], 15, "three replicas balanced", || {
        let mut s = shards(&[&a, &b, &c]);
        s.sort_unstable();
        s == [2, 3, 3]
    })
    .await;
    for _ in 0..5 {
        step(&clock, &[&a, &b, &c]).await;
    }

    // B crashes: nothing released, its leases run out.
    let b_shards = b.stats.shards();
    assert!(b_shards > 0);
    b.kill().await;
    let steps = step_until(&clock, &[&a, &c], 20, "B's shards taken over", || {
        a.stats.shards() + c.stats.shards() == 8
    })
    .await;
    // A step is a second: the survivors see B's leases unchanged for the
    // TTL, then take them at their next round.
    assert!(steps <= LEASE_TTL_SECS as usize + 2, "took {steps} steps");

    for _ in 0..20 {
        step(&clock, &[&a, &c]).await;
    }
    let last = clock.now_ms() - INTERVAL_MS;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > last
        })
        .await;
    }
    // The takers resumed at B's last watermark: the slots B published
    // after it are published again under the same ids (JetStream drops
    // them) and none in the gap is missing.
    assert_every_slot_once(&feed, &ids);

    // A clean stop releases at once: C takes A's shards at its next round.
    a.stop().await;
    let steps = step_until(&clock, &[&c], 5, "A's shards taken over", || {
        c.stats.shards() == 8
    })
    .await;
    assert!(steps <= 2, "took {steps} steps");
    c.stop().await;
}

/// The replica's first grant comes only after a dead replica's leases ran
/// out; a monitor created meanwhile is checked as soon as it does. (A
/// replica once put such a monitor on its timeline before it owned any
/// shard, fired its first slot while nothing let it be published, and kept
/// it at its next slot: an hour later, for this monitor. On a loaded machine
/// the API's first monitors routinely came before the first lease round.)
#[tokio::test]
async fn a_monitor_created_before_the_first_grant_is_checked_once_it_comes() {
    let env = env().await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    // Every shard held by a replica that died without releasing it.
    let (_client, js) = env.nats.jetstream().await;
    let bucket = scheduler::lease::driver::bucket(&js, 1).await.unwrap();
    let dead = scheduler::lease::ShardValue {
        holder: Some("dead-replica".into()),
        published_through_ms: clock.now_ms(),
    };
    for shard in 0..fast_config().shards {
        let key = scheduler::lease::Key::Shard(shard).name();
        bucket
            .put(key, serde_json::to_vec(&dead).unwrap().into())
            .await
            .unwrap();
    }
    let a = start_replica_on(&env, &clock).await;
    step(&clock, &[&a]).await;
    assert_eq!(a.stats.shards(), 0, "the dead replica's leases still run");

    let user = insert_user(&env).await;
    let id = insert_monitor(&env, http_monitor(user, 3600)).await.id;
    publish_change(&env, id, uptime_contracts::MonitorChange::Upserted).await;
    // A few rounds without a grant: the change is in, nothing may go out.
    for _ in 0..2 {
        step(&clock, &[&a]).await;
    }
    assert!(feed.all().is_empty(), "published without a grant");

    step_until(
        &clock,
        &[&a],
        LEASE_TTL_SECS as usize + 3,
        "the leases taken",
        || a.stats.shards() == u64::from(fast_config().shards),
    )
    .await;
    let first = feed
        .wait_for(1, Duration::from_secs(10), |d| d.monitor_id == id)
        .await;
    assert_eq!(first.len(), 1, "checked once: {first:?}");
    a.stop().await;
}

/// A replica gives shards up to a newcomer and goes on with the ones it
/// keeps. Its engine reports one published-through figure for all its
/// shards, and that figure goes on rising with the kept ones; the release
/// must carry how far the given-up shards were published when the engine
/// stopped them. (Released with the figure of the lease round that released
/// them, the newcomer resumed past the slots due in between and nobody
/// published them: the chaos bench lost about a renewal's worth of every
/// moved shard's slots this way.)
#[tokio::test]
async fn shards_given_up_to_a_newcomer_lose_no_slot_while_the_giver_goes_on() {
    let env = env().await;
    // Enough monitors that every stretch of a second holds slots of the
    // shards kept and of the shards given up.
    let ids = monitors(&env, 200).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let a = start_replica_on(&env, &clock).await;
    eventually(
        "the first replica to take all 8 shards",
        Duration::from_secs(10),
        || a.stats.shards() == 8,
    )
    .await;
    for _ in 0..12 {
        step(&clock, &[&a]).await;
    }

    // B joins; at one of its lease rounds A stops the shards it gives up.
    let b = start_replica_on(&env, &clock).await;
    let mut rounds = 0;
    loop {
        step(&clock, &[&a, &b]).await;
        rounds += 1;
        // The engine applies the grants moments after the lease round.
        let start = std::time::Instant::now();
        while a.stats.shards() != 4 && start.elapsed() < Duration::from_secs(2) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if a.stats.shards() == 4 {
            break;
        }
        assert!(rounds < 10, "A never gave shards up");
    }
    let stopped_at = clock.now_ms();

    // Most of a renewal passes before A's next lease round: its engine goes
    // on publishing the shards it kept (a slot of theirs shows it did).
    clock.advance(Duration::from_millis(900));
    feed.wait_for(1, Duration::from_secs(10), |d| {
        let due = d.due_at.timestamp_millis();
        due > stopped_at && due <= stopped_at + 900
    })
    .await;

    // The next round releases them and B takes them.
    step_until(&clock, &[&a, &b], 10, "two replicas balanced", || {
        shards(&[&a, &b]) == [4, 4]
    })
    .await;
    for _ in 0..20 {
        step(&clock, &[&a, &b]).await;
    }
    let last = clock.now_ms() - INTERVAL_MS;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > last
        })
        .await;
    }
    assert_every_slot_once(&feed, &ids);
    let duplicates = a.stats.duplicates() + b.stats.duplicates();
    assert_eq!(duplicates, 0, "a slot was published by both");
    a.stop().await;
    b.stop().await;
}
