//! Rounds: a monitor checked from several regions gets one due check per
//! region each slot, on that region's subject.

use crate::common::*;
use scheduler::{slots, Clock};
use std::collections::HashSet;
use std::time::Duration;
use uptime_config::RegionsSettings;
use uptime_contracts::check_id_in_round;

const INTERVAL_SECS: i32 = 300;

fn three_regions() -> RegionsSettings {
    RegionsSettings {
        known: ["eu", "us", "ap"].map(String::from).to_vec(),
        ..RegionsSettings::default()
    }
}

async fn set_regions(env: &uptime_testkit::TestEnv, id: i64, regions: &[&str]) {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::monitors;
    let regions: Vec<String> = regions.iter().map(|r| r.to_string()).collect();
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::update(monitors::table.find(id))
        .set(monitors::regions.eq(Some(regions)))
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_three_region_round_goes_out_on_three_subjects_and_a_restart_does_not_resend_it() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, http_monitor(user, INTERVAL_SECS)).await;
    set_regions(&env, monitor.id, &["eu", "us", "ap"]).await;
    // Just past a slot, so the next one is a whole interval away: the
    // restart below republishes this slot's round, not the next one's.
    let clock = Clock::system();
    let slot = slots::slot_after(monitor.id, i64::from(INTERVAL_SECS) * 1000, clock.now_ms());
    clock.advance_to(slot + 1_000);
    let feed = due_feed_on(&env, &clock).await;

    let first = start_scheduler_in(&env, fast_config(), clock.clone(), three_regions()).await;
    let round = feed
        .wait_for(3, Duration::from_secs(20), |d| d.monitor_id == monitor.id)
        .await;
    first.stop().await;

    let round_id = slots::check_id(monitor.id, slot);
    let subjects: HashSet<_> = round.iter().map(|r| r.subject.as_str()).collect();
    assert_eq!(
        subjects,
        HashSet::from([
            "uptime.checks.due.v5.eu",
            "uptime.checks.due.v5.us",
            "uptime.checks.due.v5.ap"
        ])
    );
    let ids: HashSet<_> = round.iter().map(|r| r.message.check_id).collect();
    assert_eq!(ids.len(), 3, "a check id per region");
    for received in &round {
        let due = &received.message;
        assert_eq!(due.round_id, round_id, "one round, named after the slot");
        assert_eq!(due.due_at.timestamp_millis(), slot);
        assert_eq!(received.subject, due.subject());
        assert_eq!(due.check_id, check_id_in_round(round_id, &due.region, 3));
        assert_eq!(received.msg_id, Some(due.check_id.to_string()));
    }

    // Nothing recorded the round, but the leases say it was published: the
    // next replica resumes after it instead of sending it again.
    let second = start_scheduler_in(&env, fast_config(), clock.clone(), three_regions()).await;
    let stats = second.stats.clone();
    eventually("the next replica loaded", Duration::from_secs(20), || {
        stats.shards() == 8 && stats.loads() >= 1
    })
    .await;
    second.stop().await;
    assert_eq!(stats.duplicates(), 0);
    assert_eq!(
        feed.matching(|d| d.monitor_id == monitor.id).len(),
        3,
        "no region's check stored twice"
    );
}

#[tokio::test]
async fn a_monitor_naming_no_region_is_checked_once_in_the_default_region() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, http_monitor(user, INTERVAL_SECS)).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    // Several regions known, one default: the monitor is still checked once.
    let regions = RegionsSettings {
        known: ["default", "eu"].map(String::from).to_vec(),
        ..RegionsSettings::default()
    };
    let scheduler = start_scheduler_in(&env, fast_config(), clock.clone(), regions).await;
    let due = feed
        .wait_for(1, Duration::from_secs(20), |d| d.monitor_id == monitor.id)
        .await[0]
        .clone();
    scheduler.stop().await;
    assert_eq!(due.subject, "uptime.checks.due.v5.default");
    assert_eq!(due.message.region, "default");
    assert_eq!(due.message.round_id, due.message.check_id);
    assert_eq!(
        due.message.check_id,
        slots::check_id(monitor.id, due.message.due_at.timestamp_millis())
    );
    assert_eq!(feed.matching(|d| d.monitor_id == monitor.id).len(), 1);
}
