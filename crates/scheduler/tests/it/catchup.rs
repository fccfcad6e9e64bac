//! Catch-up through the service: the settings reach the planner, checks
//! already overdue at the start wait for the budget (and the stats say so),
//! and the next slots take over those the budget did not reach in time.

use crate::common::*;
use scheduler::settings::ScheduleSettings;
use scheduler::{slots, Clock};
use std::collections::HashSet;
use std::time::Duration;

const FIVE_MIN: i64 = 300_000;

#[tokio::test]
async fn overdue_checks_wait_for_the_budget_and_the_next_slots_take_over() {
    let env = env().await;
    let user = insert_user(&env).await;
    let n = 200;
    let mut ids = Vec::new();
    for _ in 0..n {
        ids.push(insert_monitor(&env, http_monitor(user, 300)).await.id);
    }
    // One check a second: far slower than this test runs, so nearly all of
    // them are still waiting when the next slots come.
    let config = ScheduleSettings {
        catchup_headroom: 0.0,
        catchup_min_per_sec: 1.0,
        ..fast_config()
    };
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    // Before the scheduler loads. A regular slot can come between this and
    // `start` below (real time passes): the count of those bounds how many
    // checks due before `start` are not releases (at most one per monitor,
    // the test runs for well under an interval).
    let loaded = clock.now_ms();
    let scheduler = start_scheduler_with_clock(&env, config, clock.clone()).await;
    eventually("the first release", Duration::from_secs(20), || {
        scheduler.stats.catchup_released() >= 1
    })
    .await;
    let start = clock.now_ms();
    let waiting = scheduler.stats.catchup_waiting();
    assert!(
        waiting >= n - 30,
        "{waiting} waiting: the budget was not applied"
    );

    // An interval later every monitor has had its next slot.
    clock.advance(Duration::from_millis(FIVE_MIN as u64));
    eventually(
        "every overdue check settled",
        Duration::from_secs(20),
        || {
            let stats = &scheduler.stats;
            stats.catchup_waiting() == 0
                && stats.catchup_released() + stats.catchup_superseded() == n
        },
    )
    .await;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(20), |d| {
            d.monitor_id == *id && d.due_at.timestamp_millis() > start
        })
        .await;
    }
    let all = feed.matching(|_| true);
    let mut check_ids = HashSet::new();
    let mut caught_up = 0;
    for received in &all {
        let due = &received.message;
        let due_ms = due.due_at.timestamp_millis();
        assert!(check_ids.insert(due.check_id), "{} twice", due.check_id);
        assert_eq!(due.check_id, slots::check_id(due.monitor_id, due_ms));
        if due_ms <= start {
            caught_up += 1;
        } else {
            assert_eq!(
                due_ms.rem_euclid(FIVE_MIN),
                slots::offset_ms(due.monitor_id, FIVE_MIN),
                "a regular slot"
            );
        }
    }
    // Every released check is one of a slot before the load, so before
    // `start`; besides them only the regular slots that came between the
    // load and `start` are (a monitor whose slot came then had its held
    // check superseded by it, or released before it: either way one message
    // more than the releases, at most one per such monitor).
    let released = scheduler.stats.catchup_released();
    let slots_before_start = ids
        .iter()
        .filter(|id| slots::slot_at_or_before(**id, FIVE_MIN, start) > loaded)
        .count() as u64;
    assert!(
        released <= caught_up && caught_up <= released + slots_before_start,
        "{caught_up} checks due before the first release's time, {released} released, \
         {slots_before_start} regular slots came between the load and then"
    );
    assert_eq!(scheduler.stats.duplicates(), 0);
    scheduler.stop().await;
}
