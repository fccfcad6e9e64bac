//! The pipeline's guarantees: no due check is lost when a checker dies, each
//! check has exactly one result however often it runs, long checks are not
//! handed to a second replica, shutdown finishes the work in flight, and many
//! checks run at once.

use crate::common::{counts_by_check, due_now, eventually, http_spec, Harness, RunningChecker};
use std::collections::HashSet;
use std::time::Duration;
use uptime_contracts::{subjects, CheckOutcome, Trigger};
use uptime_testkit::target::TargetServer;

#[tokio::test]
async fn checks_in_flight_on_a_killed_checker_are_rerun_elsewhere_with_one_result_each() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_secs(3));
    let checks = 5;
    let mut due_ids = HashSet::new();
    for _ in 0..checks {
        due_ids.insert(h.publish_due(http_spec(&target.url("/"))).await.check_id);
    }

    let mut first = h.settings("first");
    first.checker.ack_wait_secs = 2;
    let first = RunningChecker::start(first).await;
    eventually("every check reached the target", || target.hits() == checks).await;
    first.kill().await;

    let mut second = h.settings("second");
    second.checker.ack_wait_secs = 2;
    let second = RunningChecker::start(second).await;
    h.wait_for_results(checks as usize).await;
    h.wait_until_consumer_idle().await;

    // Read again after every delivery was acked: a late duplicate would show now.
    let results = h.results().await;
    let counts = counts_by_check(&results);
    assert_eq!(counts.keys().copied().collect::<HashSet<_>>(), due_ids);
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    assert!(results.iter().all(|r| r.reporter == "second"));
    assert!(results.iter().all(|r| r.outcome == CheckOutcome::Pass));
    assert_eq!(target.hits(), 2 * checks, "each check ran on both checkers");
    second.stop().await;
}

#[tokio::test]
async fn a_check_delivered_twice_has_one_result() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    // The same check published twice under different message ids, so the
    // checks stream keeps both (as after a scheduler retry beyond the
    // stream's duplicate window): it runs twice, but its result is stored once.
    let due = h.publish_due(http_spec(&target.url("/"))).await;
    h.publish_due_as(&due, "a-second-delivery").await;

    eventually("both deliveries ran", || target.hits() == 2).await;
    h.wait_until_consumer_idle().await;
    let results = h.results().await;
    assert_eq!(results.len(), 1, "{results:?}");
    assert_eq!(results[0].check_id, due.check_id);
    checker.stop().await;
}

#[tokio::test]
async fn a_check_longer_than_ack_wait_runs_once() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_secs(5));
    let mut settings = h.settings("c");
    settings.checker.ack_wait_secs = 2;
    let checker = RunningChecker::start(settings).await;

    let due = h
        .publish_due(uptime_contracts::CheckSpec {
            timeout_secs: uptime_contracts::TimeoutSecs::of(20),
            ..http_spec(&target.url("/"))
        })
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    let info = h.wait_until_consumer_idle().await;
    assert_eq!(info.num_redelivered, 0, "progress kept the delivery alive");
    assert_eq!(target.hits(), 1);
    checker.stop().await;
}

#[tokio::test]
async fn shutdown_finishes_the_checks_in_flight() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_millis(1500));
    let checker = RunningChecker::start(h.settings("c")).await;
    let checks = 5;
    for _ in 0..checks {
        h.publish_due(http_spec(&target.url("/"))).await;
    }
    eventually("every check reached the target", || target.hits() == checks).await;

    checker.stop().await;

    // run_until returned only after every result was published and acked.
    let results = h.results().await;
    assert_eq!(results.len(), checks as usize);
    assert!(results.iter().all(|r| r.outcome == CheckOutcome::Pass));
    let info = h.consumer_info().await;
    assert_eq!(info.num_ack_pending, 0);
    assert_eq!(info.num_pending, 0);
}

#[tokio::test]
async fn two_hundred_due_checks_all_get_results() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_millis(200));
    let checker = RunningChecker::start(h.settings("c")).await;

    let checks = 200;
    let mut due_ids = HashSet::new();
    for _ in 0..checks {
        due_ids.insert(h.publish_due(http_spec(&target.url("/"))).await.check_id);
    }
    let results = h.wait_for_results(checks).await;

    let counts = counts_by_check(&results);
    assert_eq!(counts.keys().copied().collect::<HashSet<_>>(), due_ids);
    assert!(counts.values().all(|&n| n == 1));
    assert!(results.iter().all(|r| r.outcome == CheckOutcome::Pass));
    checker.stop().await;
}

#[tokio::test]
async fn a_result_that_cannot_be_published_is_retried_until_it_can() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;
    // Without its stream, a result publish gets no acknowledgement.
    h.js.delete_stream(uptime_contracts::streams::RESULTS_STREAM)
        .await
        .unwrap();

    let due = h.publish_due(http_spec(&target.url("/"))).await;
    eventually("the check was retried after the failed publish", || {
        target.hits() >= 2
    })
    .await;
    uptime_contracts::streams::ensure(&h.js, &h.nats.settings())
        .await
        .unwrap();

    let result = h.result_of(due.check_id).await;
    assert_eq!(result.outcome, CheckOutcome::Pass);
    h.wait_until_consumer_idle().await;
    assert_eq!(h.results().await.len(), 1);
    checker.stop().await;
}

#[tokio::test]
async fn checks_outlasting_the_shutdown_grace_are_handed_back_at_once() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_secs(30));
    // With a long ack_wait, only an explicit hand-back lets another replica
    // run the check soon.
    let mut settings = h.settings("first");
    settings.checker.ack_wait_secs = 120;
    settings.checker.shutdown_grace_secs = 1;
    let first = RunningChecker::start(settings.clone()).await;
    let due = h
        .publish_due(uptime_contracts::CheckSpec {
            timeout_secs: uptime_contracts::TimeoutSecs::of(60),
            ..http_spec(&target.url("/"))
        })
        .await;
    eventually("the check reached the target", || target.hits() == 1).await;

    first.stop().await;
    assert!(
        h.results().await.is_empty(),
        "the slow check did not finish"
    );

    target.set_delay(Duration::ZERO);
    settings.checker.instance_id = "second".into();
    let second = RunningChecker::start(settings).await;
    let result = tokio::time::timeout(Duration::from_secs(30), h.result_of(due.check_id))
        .await
        .expect("the handed-back check ran well before its 120 s ack_wait");
    assert_eq!(result.reporter, "second");
    assert_eq!(result.outcome, CheckOutcome::Pass);
    second.stop().await;
}

#[tokio::test]
async fn a_due_check_is_answered_with_the_current_result_version() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let mut due = due_now(http_spec(&target.url("/")));
    due.definition_version = 9;
    h.publish_due_as(&due, &due.check_id.to_string()).await;

    let (subject, json) = h.raw_result_of(due.check_id).await;
    assert_eq!(subject, subjects::CHECK_RESULT_V3);
    assert_eq!(json["definition_version"], 9, "{json}");
    assert_eq!(
        json["round_id"],
        due.round_id.to_string().as_str(),
        "{json}"
    );
    assert_eq!(json["outcome"], "pass", "{json}");
    checker.stop().await;
}

#[tokio::test]
async fn a_scheduled_check_later_than_its_interval_and_the_grace_is_skipped_but_manual_ones_run() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let url = target.url("/");
    // Queued before the checker starts, as after an outage. The default
    // grace is 300 s.
    let mut stale = due_now(http_spec(&url));
    stale.interval_secs = 10;
    stale.due_at -= chrono::TimeDelta::seconds(400);
    let mut manual = due_now(http_spec(&url));
    manual.trigger = Trigger::Manual;
    manual.due_at -= chrono::TimeDelta::hours(2);
    // Later than its interval, but well within the grace (a fault of a
    // minute): it runs, under its own slot. (Minutes of margin, so a slow
    // machine cannot make it stale before the checker sees it.)
    let mut fresh = due_now(http_spec(&url));
    fresh.interval_secs = 10;
    fresh.due_at -= chrono::TimeDelta::seconds(60);
    for due in [&stale, &manual, &fresh] {
        h.publish_due_as(due, &due.check_id.to_string()).await;
    }

    let checker = RunningChecker::start(h.settings("c")).await;
    h.wait_for_results(2).await;
    h.wait_until_consumer_idle().await;
    let ran: HashSet<_> = h.results().await.iter().map(|r| r.check_id).collect();
    assert_eq!(ran, HashSet::from([manual.check_id, fresh.check_id]));
    assert_eq!(target.hits(), 2, "the stale check never reached the target");

    let metrics = reqwest::get(format!("http://{}/metrics", checker.ops_addr))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("checks_skipped_stale_total") && l.ends_with(" 1")),
        "{metrics}"
    );
    checker.stop().await;
}
