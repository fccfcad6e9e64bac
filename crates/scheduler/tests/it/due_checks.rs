//! Due checks: when they are published, what they carry, and how monitor
//! changes and restarts affect them.

use crate::common::*;
use scheduler::settings::ScheduleSettings;
use scheduler::{slots, Clock};
use std::collections::HashSet;
use std::time::Duration;
use uptime_contracts::{DueCheck, KeywordType, MonitorChange, MonitorKind, Trigger};

const TEN_S: i64 = 10_000;

fn due_ms(due: &DueCheck) -> i64 {
    due.due_at.timestamp_millis()
}

fn is_slot(id: i64, interval_ms: i64, t: i64) -> bool {
    t.rem_euclid(interval_ms) == slots::offset_ms(id, interval_ms)
}

#[tokio::test]
async fn a_new_monitor_is_checked_at_once_then_on_its_slots() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, http_monitor(user, 10)).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;

    let dues = feed
        .wait_for(1, Duration::from_secs(10), |d| d.monitor_id == monitor.id)
        .await;
    // The next slot comes when the scheduler's clock reaches it.
    clock.advance_to(slots::slot_after(
        monitor.id,
        TEN_S,
        due_ms(&dues[0].message),
    ));
    let dues = feed
        .wait_for(2, Duration::from_secs(10), |d| d.monitor_id == monitor.id)
        .await;
    let (first, second) = (&dues[0].message, &dues[1].message);
    let created = monitor.created_at.timestamp_millis();
    // At once: under its creation instant, or under the slot that passed
    // between the insert and the scheduler's start.
    assert!(
        due_ms(first) == created
            || (due_ms(first) > created && is_slot(monitor.id, TEN_S, due_ms(first))),
        "first due_at {} vs created {created}",
        due_ms(first)
    );
    assert!(
        dues[0].received_ms - created < 5_000,
        "the first check was not published at once"
    );
    assert_eq!(
        due_ms(second),
        slots::slot_after(monitor.id, TEN_S, due_ms(first))
    );
    assert!(is_slot(monitor.id, TEN_S, due_ms(second)));
    for received in &dues[..2] {
        let due = &received.message;
        assert_eq!(due.check_id, slots::check_id(monitor.id, due_ms(due)));
        assert_eq!(received.msg_id, Some(due.check_id.to_string()));
        assert_eq!(due.trigger, Trigger::Scheduled);
        // One region: a round of one check, on the default region's subject.
        assert_eq!(due.round_id, due.check_id);
        assert_eq!(due.region, "default");
        assert_eq!(received.subject, "uptime.checks.due.v5.default");
    }
    scheduler.stop().await;
}

#[tokio::test]
async fn due_messages_match_the_schema_and_snapshot_the_row() {
    let env = env().await;
    let user = insert_user(&env).await;
    let http = insert_monitor(&env, http_monitor(user, 60)).await;
    let mut keyword = http_monitor(user, 60);
    keyword.definition = uptime_db::models::MonitorDefinition {
        kind: uptime_contracts::MonitorKind::Keyword,
        target: Some("http://127.0.0.1:9/status".into()),
        timeout_secs: 3,
        expected_status: 200,
        keyword: Some("all good".into()),
        keyword_type: Some("not_contains".into()),
        ..keyword.definition
    };
    let keyword = insert_monitor(&env, keyword).await;
    // Edited since it was created: the dues carry the row's version.
    {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use uptime_db::schema::monitors;
        let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
        diesel::update(monitors::table.find(keyword.id))
            .set(monitors::definition_version.eq(4))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let feed = due_feed(&env).await;
    let scheduler = start_scheduler(&env).await;
    let dues = feed.wait_for(2, Duration::from_secs(20), |_| true).await;

    let schema = uptime_contracts::schema_of::<DueCheck>();
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    for received in &dues {
        assert!(
            validator.is_valid(&received.json),
            "{} does not match the DueCheck schema",
            received.json
        );
    }
    let due_of = |id: i64| {
        dues.iter()
            .find(|r| r.message.monitor_id == id)
            .unwrap()
            .message
            .clone()
    };
    let of = |id: i64| due_of(id).spec;
    assert_eq!(
        (
            due_of(http.id).definition_version,
            due_of(http.id).interval_secs
        ),
        (1, 60)
    );
    assert_eq!(due_of(keyword.id).definition_version, 4);
    let spec = of(http.id);
    assert_eq!(spec.kind, MonitorKind::Http);
    assert_eq!(spec.target, "https://example.com/health");
    assert_eq!(
        (spec.timeout_secs.get(), spec.expected_status.get()),
        (7, 204)
    );
    assert_eq!((spec.keyword, spec.keyword_type), (None, None));
    let spec = of(keyword.id);
    assert_eq!(spec.kind, MonitorKind::Keyword);
    assert_eq!(spec.target, "http://127.0.0.1:9/status");
    assert_eq!(
        (spec.timeout_secs.get(), spec.expected_status.get()),
        (3, 200)
    );
    assert_eq!(spec.keyword.as_deref(), Some("all good"));
    assert_eq!(spec.keyword_type, Some(KeywordType::NotContains));
    scheduler.stop().await;
}

#[tokio::test]
async fn monitors_sharing_an_interval_are_spread_over_it() {
    let env = env().await;
    let user = insert_user(&env).await;
    let mut ids = Vec::new();
    for _ in 0..6 {
        ids.push(insert_monitor(&env, http_monitor(user, 10)).await.id);
    }
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    for id in &ids {
        feed.wait_for(1, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
    }
    // One interval later every monitor has had its next slot.
    clock.advance(Duration::from_millis(TEN_S as u64));

    let mut offsets = HashSet::new();
    for id in &ids {
        let dues = feed
            .wait_for(2, Duration::from_secs(10), |d| d.monitor_id == *id)
            .await;
        let slot = due_ms(&dues[1].message);
        assert_eq!(slot.rem_euclid(TEN_S), slots::offset_ms(*id, TEN_S));
        offsets.insert(slot.rem_euclid(TEN_S));
    }
    assert_eq!(offsets.len(), ids.len(), "every monitor has its own phase");
    scheduler.stop().await;
}

#[tokio::test]
async fn a_monitor_created_while_running_is_picked_up_from_its_change_event() {
    let env = env().await;
    let user = insert_user(&env).await;
    let feed = due_feed(&env).await;
    // No periodic resync within any run of this test, however slow: once the
    // initial load is done, only the change event can bring the monitor in.
    let config = ScheduleSettings {
        resync_secs: 86_400,
        ..fast_config()
    };
    let scheduler = start_scheduler_with(&env, config).await;
    eventually("the initial load", Duration::from_secs(10), || {
        scheduler.stats.loads() >= 1
    })
    .await;

    let monitor = insert_monitor(&env, http_monitor(user, 300)).await;
    publish_change(&env, monitor.id, MonitorChange::Upserted).await;
    let dues = feed
        .wait_for(1, Duration::from_secs(10), |d| d.monitor_id == monitor.id)
        .await;
    // The walk that ran is the initial load, from before the monitor
    // existed: the event, not a walk over the monitors, brought it in.
    assert_eq!(scheduler.stats.loads(), 1, "a walk found the monitor");
    assert_eq!(scheduler.stats.monitors(), 1);
    // And the planner made it due at once (under its creation instant, or
    // the slot that passed before the event arrived), not at a slot to come.
    let first = due_ms(&dues[0].message);
    let created = monitor.created_at.timestamp_millis();
    assert!(
        first == created || (first > created && is_slot(monitor.id, 300_000, first)),
        "due at {first}, created at {created}"
    );
    scheduler.stop().await;
}

/// Waits for a first due check, applies `change`, and asserts that nothing
/// more is published for the monitor through its next slot, while a control
/// monitor keeps being published past it.
async fn stops_after(change: impl AsyncFnOnce(&uptime_testkit::TestEnv, i64)) {
    let env = env().await;
    let user = insert_user(&env).await;
    let stopped = insert_monitor(&env, http_monitor(user, 10)).await;
    let control = insert_monitor(&env, http_monitor(user, 10)).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    let first = feed
        .wait_for(1, Duration::from_secs(10), |d| d.monitor_id == stopped.id)
        .await;
    let first_ms = due_ms(&first[0].message);

    change(&env, stopped.id).await;
    eventually("the change applied", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 1
    })
    .await;
    // Past the stopped monitor's next slot; then the control's first slot
    // after it, which is published after the stopped one's would have been.
    let next_slot = slots::slot_after(stopped.id, TEN_S, first_ms);
    let control_after = slots::slot_after(control.id, TEN_S, next_slot);
    clock.advance_to(control_after);
    feed.wait_for(1, Duration::from_secs(10), |d| {
        d.monitor_id == control.id && due_ms(d) == control_after
    })
    .await;

    let after: Vec<_> = feed
        .matching(|d| d.monitor_id == stopped.id)
        .into_iter()
        .filter(|d| due_ms(&d.message) > first_ms)
        .collect();
    assert!(after.is_empty(), "still scheduled: {:?}", after[0].json);
    assert_eq!(scheduler.stats.monitors(), 1);
    scheduler.stop().await;
}

#[tokio::test]
async fn pausing_a_monitor_stops_its_checks() {
    stops_after(async |env, id| {
        set_active(env, id, false).await;
        publish_change(env, id, MonitorChange::Upserted).await;
    })
    .await;
}

#[tokio::test]
async fn deleting_a_monitor_stops_its_checks() {
    stops_after(async |env, id| {
        delete_monitor(env, id).await;
        publish_change(env, id, MonitorChange::Deleted).await;
    })
    .await;
}

#[tokio::test]
async fn a_restart_publishes_the_slot_it_missed_once() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, http_monitor(user, 10)).await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;

    let before = start_scheduler_on(&env, &clock).await;
    let first = feed
        .wait_for(1, Duration::from_secs(20), |d| d.monitor_id == monitor.id)
        .await[0]
        .message
        .clone();
    // The recorder stores the result of the first check.
    let recorded = chrono::DateTime::from_timestamp_millis(clock.now_ms()).unwrap();
    set_last_checked(&env, monitor.id, recorded).await;
    before.stop().await;
    let seen_before = feed.matching(|d| d.monitor_id == monitor.id);

    // A slot passes while no scheduler runs.
    let missed = seen_before
        .iter()
        .map(|r| due_ms(&r.message))
        .max()
        .map(|last| slots::slot_after(monitor.id, TEN_S, last))
        .unwrap();
    clock.advance_to(missed + 500);

    let after = start_scheduler_on(&env, &clock).await;
    let caught_up = feed
        .wait_for(1, Duration::from_secs(20), |d| {
            d.monitor_id == monitor.id && due_ms(d) == missed
        })
        .await;
    assert_eq!(
        caught_up[0].message.check_id,
        slots::check_id(monitor.id, missed)
    );
    // Through the slot after it: the missed slot stays single, and the first
    // check (already recorded) was not sent again.
    let next = slots::slot_after(monitor.id, TEN_S, missed);
    clock.advance_to(next);
    feed.wait_for(1, Duration::from_secs(10), |d| {
        d.monitor_id == monitor.id && due_ms(d) == next
    })
    .await;
    let all = feed.matching(|d| d.monitor_id == monitor.id);
    assert_eq!(
        all.iter().filter(|r| due_ms(&r.message) == missed).count(),
        1
    );
    assert_eq!(
        all.iter()
            .filter(|r| r.message.check_id == first.check_id)
            .count(),
        1
    );
    assert_eq!(after.stats.duplicates(), 0, "nothing was published twice");
    // Resumed at the watermark its lease carried, not caught up.
    assert_eq!(after.stats.catchup_released(), 0);
    assert_eq!(after.stats.catchup_waiting(), 0);
    assert!(after.stats.published() >= 1);
    after.stop().await;
}
