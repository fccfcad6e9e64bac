//! A PostgreSQL outage takes no shard away (the leases live in NATS) and
//! stops no check the replica has read before: those go out on time from
//! its configuration cache. A monitor whose configuration it never read
//! waits, and goes out under its own slot once the database answers.

use crate::common::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use scheduler::{slots, Clock};
use std::collections::{BTreeMap, HashSet};
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

/// Moves the clock to `to` (at most a second at a time), waiting for a lease
/// round each time a second has passed since `*lease_wait_at`.
async fn advance(clock: &Clock, replica: &Running, to: i64, lease_wait_at: &mut (i64, u64)) {
    clock.advance_to(to);
    if clock.now_ms() - lease_wait_at.0 >= 1_000 {
        let before = lease_wait_at.1;
        eventually("a lease round", Duration::from_secs(10), || {
            replica.stats.lease_rounds() > before
        })
        .await;
        *lease_wait_at = (clock.now_ms(), replica.stats.lease_rounds());
    }
}

#[tokio::test]
async fn during_a_database_outage_read_monitors_are_checked_on_time_and_others_wait() {
    let env = env().await;
    let user = insert_user(&env).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(insert_monitor(&env, http_monitor(user, 10)).await.id);
    }
    // A monitor whose first slot comes 12-25 s from now: the outage begins
    // before its configuration is ever read (candidates that do not fit go).
    let clock = Clock::system();
    let mut unread = None;
    for _ in 0..60 {
        let id = insert_monitor(&env, http_monitor(user, 60)).await.id;
        let now = clock.now_ms();
        let first = slots::slot_after(id, 60_000, now);
        if unread.is_none() && (now + 12_000..now + 25_000).contains(&first) {
            set_last_checked(
                &env,
                id,
                chrono::DateTime::from_timestamp_millis(now).unwrap(),
            )
            .await;
            unread = Some((id, first));
        } else {
            delete_monitor(&env, id).await;
        }
        if unread.is_some() {
            break;
        }
    }
    let (unread, unread_slot) = unread.expect("an id with its first slot 12-25 s away");

    let feed = due_feed_on(&env, &clock).await;
    let replica = start_replica_on(&env, &clock).await;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }
    assert_eq!(replica.stats.shards(), 8);
    // The shell records the cache's tally after the round that published:
    // a message can be seen before its round's figures.
    eventually(
        "the three read monitors cached",
        Duration::from_secs(10),
        || replica.stats.config_cache_entries() >= 3,
    )
    .await;
    assert!(
        feed.all().iter().all(|r| r.message.monitor_id != unread),
        "not read yet"
    );

    // Down until well past the unread monitor's slot. Every slot of the
    // other three goes out when the clock reaches it.
    set_database_up(&env, false).await;
    let down_at = clock.now_ms();
    assert!(
        unread_slot > down_at + 2_000,
        "cut before its slot was staged"
    );
    let up_at = unread_slot + 5_000;
    let mut outage_slots: Vec<(i64, i64)> = Vec::new();
    for id in &ids {
        let mut slot = slots::slot_after(*id, INTERVAL_MS, down_at);
        while slot <= up_at {
            outage_slots.push((slot, *id));
            slot += INTERVAL_MS;
        }
    }
    outage_slots.sort_unstable();
    let mut lease_wait_at = (clock.now_ms(), replica.stats.lease_rounds());
    let mut pending = outage_slots.iter().peekable();
    while clock.now_ms() < up_at {
        let next_second = clock.now_ms() + 1_000;
        match pending.peek() {
            Some((slot, id)) if *slot <= next_second => {
                let (slot, id) = (*slot, *id);
                pending.next();
                advance(&clock, &replica, slot, &mut lease_wait_at).await;
                let sent = feed
                    .wait_for(1, Duration::from_secs(10), |d| {
                        d.monitor_id == id && d.due_at.timestamp_millis() == slot
                    })
                    .await;
                let late = sent[0].received_ms - slot;
                assert!(
                    late < 1_000,
                    "monitor {id}'s slot {slot} went out {late} ms late"
                );
            }
            _ => advance(&clock, &replica, next_second, &mut lease_wait_at).await,
        }
        assert_eq!(replica.stats.shards(), 8, "a shard was lost");
    }
    assert!(outage_slots.len() >= 3, "{outage_slots:?}");
    assert!(
        feed.all().iter().all(|r| r.message.monitor_id != unread),
        "the unread monitor went out without its configuration"
    );
    let hits = outage_slots.len() as u64;
    eventually(
        "a cache hit per outage slot",
        Duration::from_secs(10),
        || replica.stats.config_cache_hits() >= hits,
    )
    .await;
    assert!(replica.stats.config_cache_misses() >= 1);

    // Back: the unread monitor's slot goes out, late, under its own id.
    set_database_up(&env, true).await;
    for _ in 0..3 {
        step(&clock, &replica).await;
    }
    let sent = feed
        .wait_for(1, Duration::from_secs(20), |d| d.monitor_id == unread)
        .await;
    assert_eq!(sent[0].message.due_at.timestamp_millis(), unread_slot);
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(20), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > up_at
        })
        .await;
    }

    // Nothing twice, no slot skipped.
    let mut seen = HashSet::new();
    let mut dues: BTreeMap<i64, Vec<i64>> = BTreeMap::new();
    for r in feed.all() {
        assert!(
            seen.insert(r.message.check_id),
            "published twice: {:?}",
            r.json
        );
        dues.entry(r.message.monitor_id)
            .or_default()
            .push(r.message.due_at.timestamp_millis());
    }
    for id in &ids {
        let mut due_ats = dues.remove(id).unwrap_or_default();
        due_ats.sort_unstable();
        assert!(due_ats.len() >= 3, "monitor {id}: {due_ats:?}");
        for pair in due_ats[1..].windows(2) {
            assert_eq!(pair[1] - pair[0], INTERVAL_MS, "monitor {id}: {due_ats:?}");
        }
    }
    assert_eq!(replica.stats.duplicates(), 0);
    replica.stop().await;
}
