//! Scheduler replicas on a three-node NATS cluster (the lease bucket and
//! the streams at R3): they share the shards, and a killed replica's shards
//! are taken over with no slot skipped or published twice.

use crate::common::*;
use crate::leadership::{assert_every_slot_once, monitors, shards, step, step_until, INTERVAL_MS};
use scheduler::{Clock, Scheduler};
use std::time::Duration;
use uptime_contracts::streams::CHECKS_STREAM;
use uptime_testkit::{TestNatsCluster, CLUSTER_NODES};

async fn replica_on(
    env: &uptime_testkit::TestEnv,
    cluster: &TestNatsCluster,
    clock: &Clock,
) -> Running {
    let (_client, js) = cluster.jetstream().await;
    run(Scheduler::new(env.db.pool.clone(), js, fast_config())
        .with_clock(clock.clone())
        .with_lease_clock(clock.clone())
        .with_lease_replicas(CLUSTER_NODES))
}

#[tokio::test]
async fn two_replicas_on_a_cluster_share_the_shards_and_a_killed_ones_move_losing_no_slot() {
    let (env, cluster) = tokio::join!(env(), TestNatsCluster::start());
    let ids = monitors(&env, 16).await;
    let clock = Clock::system();
    let (_client, js) = cluster.jetstream().await;
    let feed =
        Feed::<uptime_contracts::DueCheck>::start_on(&js, CHECKS_STREAM, clock.clone()).await;

    let a = replica_on(&env, &cluster, &clock).await;
    let b = replica_on(&env, &cluster, &clock).await;
    step_until(&clock, &[&a, &b], 15, "two replicas balanced", || {
        shards(&[&a, &b]) == [4, 4]
    })
    .await;
    for _ in 0..5 {
        step(&clock, &[&a, &b]).await;
    }

    // B crashes: nothing released; A takes its shards once their leases ran out.
    b.kill().await;
    let steps = step_until(&clock, &[&a], 20, "B's shards taken over", || {
        a.stats.shards() == 8
    })
    .await;
    assert!(steps <= LEASE_TTL_SECS as usize + 2, "took {steps} steps");
    for _ in 0..20 {
        step(&clock, &[&a]).await;
    }
    let last = clock.now_ms() - INTERVAL_MS;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > last
        })
        .await;
    }
    assert_every_slot_once(&feed, &ids);
    a.stop().await;
}
