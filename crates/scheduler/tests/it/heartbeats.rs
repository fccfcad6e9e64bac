//! Heartbeat monitors: a period without a ping is reported as a failed check.

use crate::common::*;
use chrono::{DateTime, Utc};
use scheduler::{slots, Clock};
use std::time::Duration;
use uptime_contracts::{CheckOutcome, CheckResult, Trigger};

fn at_ms(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

fn assert_missed(received: &Received<CheckResult>, monitor_id: i64, deadline_ms: i64) {
    let result = &received.message;
    assert_eq!(result.monitor_id, monitor_id);
    assert_eq!(result.trigger, Trigger::Heartbeat);
    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.checked_at, at_ms(deadline_ms));
    assert_eq!(result.due_at, Some(at_ms(deadline_ms)));
    assert_eq!(
        result.error.as_deref(),
        Some("no ping received within 10s + 1s grace")
    );
    assert_eq!(result.reporter, "scheduler");
    assert_eq!(result.definition_version, 1, "the row's version");
    assert_eq!(
        result.check_id,
        slots::missed_heartbeat_id(monitor_id, deadline_ms)
    );
    assert_eq!(received.msg_id, Some(result.check_id.to_string()));
    assert!(
        received.received_ms >= deadline_ms,
        "reported before its deadline"
    );
}

/// The scheduler's clock is moved to each deadline instead of waiting for it.
#[tokio::test]
async fn a_silent_heartbeat_monitor_fails_after_interval_plus_grace() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, heartbeat_monitor(user, 10, 1)).await;
    let clock = Clock::system();
    let feed = result_feed_on(&env, &clock).await;
    let dues = due_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    eventually("the monitor loaded", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 1
    })
    .await;

    let deadline = monitor.created_at.timestamp_millis() + 11_000;
    clock.advance_to(deadline);
    let results = feed
        .wait_for(1, Duration::from_secs(10), |r| r.monitor_id == monitor.id)
        .await;
    assert_missed(&results[0], monitor.id, deadline);
    // Still silent: the next period is one more failed check.
    clock.advance_to(deadline + 10_000);
    let results = feed
        .wait_for(2, Duration::from_secs(10), |r| r.monitor_id == monitor.id)
        .await;
    assert_missed(&results[1], monitor.id, deadline + 10_000);
    assert!(
        dues.all().is_empty(),
        "heartbeat monitors are never sent to checkers"
    );
    scheduler.stop().await;
}

#[tokio::test]
async fn a_ping_before_the_deadline_moves_it() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, heartbeat_monitor(user, 10, 1)).await;
    let clock = Clock::system();
    let feed = result_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    eventually("the monitor loaded", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 1
    })
    .await;

    let created = monitor.created_at.timestamp_millis();
    clock.advance_to(created + 5_000);
    let ping = at_ms(clock.now_ms());
    set_last_heartbeat(&env, monitor.id, ping).await;

    // Past the first deadline and the one a period after the ping: the first
    // passes quietly (had it not, its miss would be published first).
    clock.advance_to(ping.timestamp_millis() + 11_000);
    let results = feed
        .wait_for(1, Duration::from_secs(10), |r| r.monitor_id == monitor.id)
        .await;
    assert_missed(&results[0], monitor.id, ping.timestamp_millis() + 11_000);
    scheduler.stop().await;
}

/// The absence of a result proves something only if the scheduler is
/// running: a control monitor that is left active must be reported.
#[tokio::test]
async fn a_paused_heartbeat_monitor_is_not_reported() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, heartbeat_monitor(user, 10, 1)).await;
    let control = insert_monitor(&env, heartbeat_monitor(user, 10, 1)).await;
    let clock = Clock::system();
    let feed = result_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    eventually("both monitors loaded", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 2
    })
    .await;
    set_active(&env, monitor.id, false).await;
    publish_change(&env, monitor.id, uptime_contracts::MonitorChange::Upserted).await;
    eventually(
        "the paused monitor dropped",
        Duration::from_secs(10),
        || scheduler.stats.monitors() == 1,
    )
    .await;

    // Past both deadlines. The paused monitor's is the earlier one, so its
    // miss, were it reported, would come before the control's.
    clock.advance_to(control.created_at.timestamp_millis() + 13_000);
    feed.wait_for(1, Duration::from_secs(10), |r| r.monitor_id == control.id)
        .await;
    let paused = feed.matching(|r| r.monitor_id == monitor.id);
    assert!(paused.is_empty(), "{:?}", paused[0].json);
    assert_eq!(scheduler.stats.monitors(), 1);
    scheduler.stop().await;
}

/// A heartbeat on a five-field cron schedule, stored as the API stores it.
fn cron_monitor(
    user: i64,
    schedule: &str,
    timezone: Option<&str>,
    grace_secs: i32,
) -> uptime_db::models::NewMonitor {
    let mut monitor = heartbeat_monitor(user, 60, grace_secs);
    monitor.definition.heartbeat_schedule = Some(schedule.to_string());
    monitor.definition.heartbeat_timezone = timezone.map(str::to_string);
    monitor
}

/// Every minute: the run after the creation must ping within the grace.
#[tokio::test]
async fn a_silent_cron_heartbeat_fails_after_its_next_run_plus_grace() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(
        &env,
        cron_monitor(user, "* * * * *", Some("Asia/Kolkata"), 5),
    )
    .await;
    let clock = Clock::system();
    let feed = result_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    eventually("the monitor loaded", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 1
    })
    .await;

    let created = monitor.created_at.timestamp_millis();
    let run = (created / 60_000 + 1) * 60_000;
    clock.advance_to(run + 5_000);
    let results = feed
        .wait_for(1, Duration::from_secs(10), |r| r.monitor_id == monitor.id)
        .await;
    let result = &results[0].message;
    assert_eq!(result.checked_at, at_ms(run + 5_000));
    assert_eq!(
        (result.trigger, result.outcome),
        (Trigger::Heartbeat, CheckOutcome::Fail)
    );
    assert_eq!(
        result.error.as_deref(),
        Some(
            format!(
                "no ping after the run scheduled for {} (\"* * * * *\" in Asia/Kolkata) within 5s grace",
                at_ms(run).to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
            .as_str()
        )
    );
    assert_eq!(
        result.check_id,
        slots::missed_heartbeat_id(monitor.id, run + 5_000)
    );
    scheduler.stop().await;
}

/// A start ping announced as a change: the run fails when its grace ends,
/// long before the yearly schedule's own deadline.
#[tokio::test]
async fn a_started_run_without_a_finish_fails_after_the_grace() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, cron_monitor(user, "0 0 1 1 *", None, 30)).await;
    let clock = Clock::system();
    let feed = result_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;
    eventually("the monitor loaded", Duration::from_secs(10), || {
        scheduler.stats.monitors() == 1
    })
    .await;

    let started = at_ms(clock.now_ms());
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::update(uptime_db::schema::monitors::table.find(monitor.id))
        .set(uptime_db::schema::monitors::heartbeat_started_at.eq(started))
        .execute(&mut conn)
        .await
        .unwrap();
    drop(conn);
    publish_change(&env, monitor.id, uptime_contracts::MonitorChange::Upserted).await;
    // Re-read before or after the clock moves, the run's deadline is the
    // same: put on the timeline, or caught up at once when already passed.

    let deadline = started.timestamp_millis() + 30_000;
    clock.advance_to(deadline);
    let results = feed
        .wait_for(1, Duration::from_secs(10), |r| r.monitor_id == monitor.id)
        .await;
    let result = &results[0].message;
    assert_eq!(result.checked_at, at_ms(deadline));
    assert_eq!(
        result.error.as_deref(),
        Some(
            format!(
                "the run started at {} did not finish within 30s grace (no success or failure ping)",
                started.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )
            .as_str()
        )
    );
    scheduler.stop().await;
}
