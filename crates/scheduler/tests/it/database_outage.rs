//! A PostgreSQL outage takes no shard away: the leases live in NATS, the
//! replica keeps renewing them and its timeline, and the checks it could not
//! read the configuration of go out under their own slots as soon as the
//! database answers again.

use crate::common::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use scheduler::Clock;
use std::collections::BTreeMap;
use std::time::Duration;

const INTERVAL_MS: i64 = 10_000;

/// Refuses (or allows again) every new connection to the test's database and
/// ends the open ones: the database is down as far as the scheduler can tell.
async fn set_database_up(env: &uptime_testkit::TestEnv, up: bool) {
    let admin_url = std::env::var("UPTIME_TEST_DATABASE_URL").unwrap();
    let mut admin = AsyncPgConnection::establish(&admin_url).await.unwrap();
    let name = &env.db.name;
    diesel::sql_query(format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS {up}"))
        .execute(&mut admin)
        .await
        .unwrap();
    if !up {
        diesel::sql_query(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .execute(&mut admin)
        .await
        .unwrap();
    }
}

async fn step(clock: &Clock, replica: &Running) {
    let before = replica.stats.lease_rounds();
    clock.advance(Duration::from_secs(1));
    eventually("a lease round", Duration::from_secs(10), || {
        replica.stats.lease_rounds() > before
    })
    .await;
}

#[tokio::test]
async fn a_database_outage_takes_no_shard_away_and_skips_no_slot() {
    let env = env().await;
    let user = insert_user(&env).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(insert_monitor(&env, http_monitor(user, 10)).await.id);
    }
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let replica = start_replica_on(&env, &clock).await;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }
    assert_eq!(replica.stats.shards(), 8);

    // Down for two intervals: every lease round still renews every shard,
    // and no configuration can be read, so (past the lookahead already
    // read) nothing goes out.
    set_database_up(&env, false).await;
    let down_at = clock.now_ms();
    for _ in 0..20 {
        step(&clock, &replica).await;
        assert_eq!(replica.stats.shards(), 8, "a shard was lost");
    }
    let during = feed
        .all()
        .iter()
        .filter(|r| r.message.due_at.timestamp_millis() > down_at + 2_000)
        .count();
    assert_eq!(during, 0, "checks went out without their configuration");
    set_database_up(&env, true).await;

    // Back: the slots of the outage go out, late, under their own ids.
    let through = clock.now_ms() - INTERVAL_MS;
    for _ in 0..3 {
        step(&clock, &replica).await;
    }
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(20), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > through
        })
        .await;
    }
    let mut dues: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in feed.all() {
        dues.entry(r.message.monitor_id)
            .or_default()
            .push(r.message.due_at.timestamp_millis());
    }
    for (id, mut slots) in dues {
        slots.sort_unstable();
        assert!(slots.len() >= 3, "monitor {id}: {slots:?}");
        for pair in slots[1..].windows(2) {
            assert_eq!(pair[1] - pair[0], INTERVAL_MS, "monitor {id}: {slots:?}");
        }
    }
    assert_eq!(replica.stats.duplicates(), 0);
    replica.stop().await;
}
