//! Only the replica holding the leader lock schedules; another takes over
//! when it stops.

use crate::common::*;
use scheduler::Clock;
use std::collections::HashSet;
use std::time::Duration;

#[tokio::test]
async fn only_the_leader_publishes_and_a_standby_takes_over() {
    let env = env().await;
    let user = insert_user(&env).await;
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(insert_monitor(&env, http_monitor(user, 10)).await.id);
    }
    // Both replicas read one clock, moved a slot at a time.
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let a = start_scheduler_on(&env, &clock).await;
    let b = start_scheduler_on(&env, &clock).await;

    // Each monitor's first check and its next slot.
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }
    clock.advance(Duration::from_secs(10));
    for id in &ids {
        feed.wait_for(2, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }
    let (leader, standby) = match (a.stats.is_leader(), b.stats.is_leader()) {
        (true, false) => (a, b),
        (false, true) => (b, a),
        other => panic!("exactly one leader expected, got {other:?}"),
    };
    assert_eq!(standby.stats.published() + standby.stats.duplicates(), 0);
    assert_eq!(standby.stats.monitors(), 0, "a standby keeps no timeline");
    assert_eq!(leader.stats.monitors(), 3);
    let all = feed.all();
    let distinct: HashSet<_> = all.iter().map(|r| r.msg_id.clone()).collect();
    assert_eq!(distinct.len(), all.len(), "no check was published twice");
    assert_eq!(leader.stats.published() as usize, all.len());

    // The leader stops: the standby takes the lock and carries on.
    leader.stop().await;
    let seen = all.len();
    eventually("the standby to lead", Duration::from_secs(10), || {
        standby.stats.is_leader()
    })
    .await;
    clock.advance(Duration::from_secs(10));
    feed.wait_for(seen + 3, Duration::from_secs(10), |_| true)
        .await;
    assert!(standby.stats.published() >= 3);
    standby.stop().await;
}
