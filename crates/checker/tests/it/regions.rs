//! Regions against a real nats-server: each region's checkers take only
//! their region's due checks and answer naming region and round, requests
//! name the region, checkers announce themselves in the presence bucket,
//! and a bad region name refuses to start.

use crate::common::{due_in, http_spec, Harness, RunningChecker, RESULT_DEADLINE};
use async_nats::jetstream::consumer::PullConsumer;
use std::time::Duration;
use uptime_contracts::{presence, streams, subjects, CheckerPresenceV1, DEFAULT_REGION};
use uptime_testkit::target::TargetServer;
use uuid::Uuid;

fn user_agent_in(region: &str) -> String {
    format!(
        "{} (region {region})",
        checker::settings::CheckerSection::default().user_agent
    )
}

#[tokio::test]
async fn a_regional_due_check_is_taken_only_by_its_regions_checker() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.record_requests();
    let default_checker = RunningChecker::start(h.settings("c-default")).await;

    // Queued while only the default region's checker runs: it must leave it.
    let round_id = Uuid::new_v4();
    let eu_due = due_in(http_spec(&target.url("/eu")), "eu", round_id, 2);
    h.publish_due_as(&eu_due, &eu_due.check_id.to_string())
        .await;
    let default_due = due_in(http_spec(&target.url("/default")), "default", round_id, 2);
    h.publish_due_as(&default_due, &default_due.check_id.to_string())
        .await;
    let (subject, default_result) = h.raw_result_of(default_due.check_id).await;
    assert_eq!(subject, subjects::CHECK_RESULT_V3);
    assert_eq!(default_result["region"], "default");
    assert_eq!(default_result["reporter"], "c-default");
    h.wait_until_consumer_idle().await;
    assert!(
        h.raw_results()
            .await
            .iter()
            .all(|(_, r)| r["check_id"] != eu_due.check_id.to_string().as_str()),
        "the default region's checker took eu's check"
    );

    let eu_checker = RunningChecker::start(h.settings_in("c-eu", "eu")).await;
    let (subject, eu_result) = h.raw_result_of(eu_due.check_id).await;
    assert_eq!(subject, subjects::CHECK_RESULT_V3);
    assert_eq!(eu_result["region"], "eu");
    assert_eq!(eu_result["round_id"], round_id.to_string().as_str());
    assert_eq!(eu_result["reporter"], "c-eu");
    assert_eq!(eu_result["outcome"], "pass", "{eu_result}");
    assert_eq!(eu_result["definition_version"], 1);

    // Each request names the region it came from.
    let requests = target.requests();
    let ua_of = |path: &str| {
        let request = requests
            .iter()
            .find(|r| r.path == path)
            .unwrap_or_else(|| panic!("no request for {path}: {requests:?}"));
        request.header("user-agent").join(",")
    };
    assert_eq!(ua_of("/eu"), user_agent_in("eu"));
    assert_eq!(ua_of("/default"), user_agent_in(DEFAULT_REGION));

    eu_checker.stop().await;
    default_checker.stop().await;
}

async fn live(h: &Harness) -> Vec<CheckerPresenceV1> {
    let store =
        h.js.get_key_value(presence::BUCKET)
            .await
            .expect("the checkers created the bucket");
    presence::live(&store).await.expect("live checkers")
}

/// Polls until the live checkers, as (region, instance id), are `expected`.
async fn wait_for_live(h: &Harness, expected: &[(&str, &str)]) {
    let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
    loop {
        let now: Vec<(String, String)> = live(h)
            .await
            .into_iter()
            .map(|p| (p.region, p.instance_id))
            .collect();
        let want: Vec<(String, String)> = expected
            .iter()
            .map(|(r, i)| (r.to_string(), i.to_string()))
            .collect();
        if now == want {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "live checkers {now:?}, expected {want:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn checkers_announce_themselves_and_withdraw_on_stop() {
    let h = Harness::start().await;
    let eu = RunningChecker::start(h.settings_in("c-eu", "eu")).await;
    // An instance id that is no key token (dots): still listed as itself.
    let us = RunningChecker::start(h.settings_in("pod.us.1", "us")).await;
    wait_for_live(&h, &[("eu", "c-eu"), ("us", "pod.us.1")]).await;

    us.stop().await;
    // Withdrawn at once: no waiting for the TTL (30 s here).
    let still = live(&h).await;
    assert_eq!(still.len(), 1, "{still:?}");
    assert_eq!(still[0].instance_id, "c-eu");
    eu.stop().await;
    assert!(live(&h).await.is_empty());
}

#[tokio::test]
async fn a_killed_checkers_presence_expires_and_a_running_ones_is_renewed() {
    let h = Harness::start().await;
    let settings_with_short_ttl = |id: &str| {
        let mut settings = h.settings_in(id, "ap");
        settings.regions.presence_ttl_secs = 1;
        settings
    };
    let killed = RunningChecker::start(settings_with_short_ttl("c-killed")).await;
    let running = RunningChecker::start(settings_with_short_ttl("c-running")).await;
    wait_for_live(&h, &[("ap", "c-killed"), ("ap", "c-running")]).await;

    killed.kill().await;
    wait_for_live(&h, &[("ap", "c-running")]).await;
    // The running one outlives many TTLs: it is renewed, not just put once.
    let first_seen = live(&h).await[0].seen_at;
    let mut renewals = 0;
    while renewals < 3 {
        let now = live(&h).await;
        assert_eq!(now.len(), 1, "the running checker stays live: {now:?}");
        if now[0].seen_at > first_seen {
            renewals += 1;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    running.stop().await;
}

#[tokio::test]
async fn an_invalid_region_refuses_to_start() {
    let h = Harness::start().await;
    for bad in ["EU", "eu.west", "", "-eu"] {
        let settings = h.settings_in("c", bad);
        match checker::CheckerService::build(settings).await {
            Err(checker::CheckerError::Region(message)) => {
                assert!(message.contains("checker.region"), "{message}")
            }
            Err(other) => panic!("{bad:?}: wrong error {other}"),
            Ok(_) => panic!("{bad:?}: the checker started"),
        }
    }
}

#[tokio::test]
async fn a_consumer_from_before_regions_gets_the_default_filter() {
    let h = Harness::start().await;
    // The `checker` consumer as releases before regions created it: no filter.
    let stream = h.js.get_stream(streams::CHECKS_STREAM).await.unwrap();
    stream
        .create_consumer(streams::durable_pull(
            streams::CHECKER_CONSUMER,
            Duration::from_secs(5),
            10,
        ))
        .await
        .unwrap();

    // A regional checker starts beside it (the default region's checkers
    // not upgraded yet): a work queue refuses overlapping consumers, so it
    // restricts the old one first.
    let eu = RunningChecker::start(h.settings_in("c-eu", "eu")).await;
    let filters = |name: &'static str| {
        let stream = stream.clone();
        async move {
            let mut consumer: PullConsumer = stream.get_consumer(name).await.unwrap();
            consumer
                .info()
                .await
                .unwrap()
                .config
                .filter_subjects
                .clone()
        }
    };
    assert_eq!(
        filters(streams::CHECKER_CONSUMER).await,
        checker::region::filter_subjects(DEFAULT_REGION)
    );
    assert_eq!(filters("checker-eu").await, ["uptime.checks.due.v5.eu"]);

    // The default region's checker keeps working on its consumer.
    let default_checker = RunningChecker::start(h.settings("c-default")).await;
    let target = TargetServer::start().await;
    let due = due_in(http_spec(&target.url("/")), "default", Uuid::new_v4(), 1);
    h.publish_due_as(&due, &due.check_id.to_string()).await;
    let (_, result) = h.raw_result_of(due.check_id).await;
    assert_eq!(result["reporter"], "c-default");
    default_checker.stop().await;
    eu.stop().await;
}

#[tokio::test]
async fn an_upgraded_default_checker_filters_its_own_consumer() {
    let h = Harness::start().await;
    let stream = h.js.get_stream(streams::CHECKS_STREAM).await.unwrap();
    stream
        .create_consumer(streams::durable_pull(
            streams::CHECKER_CONSUMER,
            Duration::from_secs(5),
            10,
        ))
        .await
        .unwrap();

    let default_checker = RunningChecker::start(h.settings("c-default")).await;
    let mut consumer: PullConsumer = stream
        .get_consumer(streams::CHECKER_CONSUMER)
        .await
        .unwrap();
    assert_eq!(
        consumer.info().await.unwrap().config.filter_subjects,
        checker::region::filter_subjects(DEFAULT_REGION)
    );
    // So a regional consumer can now be created beside it.
    let eu = RunningChecker::start(h.settings_in("c-eu", "eu")).await;
    eu.stop().await;
    default_checker.stop().await;
}

#[tokio::test]
async fn a_default_consumer_of_the_release_before_drops_the_retired_due_versions() {
    let h = Harness::start().await;
    let stream = h.js.get_stream(streams::CHECKS_STREAM).await.unwrap();
    // `checker` as an older release left it: the retired unregioned
    // versions (1 to 3), the region's retired v4 and its v5. (Subjects of
    // retired versions come from the versions table: no source names them.)
    let mut old = streams::durable_pull(streams::CHECKER_CONSUMER, Duration::from_secs(5), 10);
    old.filter_subjects = uptime_contracts::versions::VERSIONS
        .iter()
        .filter(|v| v.family == "check-due" && !v.status.is_live())
        .map(|v| match v.version {
            1..=3 => v.subject.to_string(),
            _ => format!("{}.{DEFAULT_REGION}", v.subject),
        })
        .chain(checker::region::filter_subjects(DEFAULT_REGION))
        .collect();
    assert_eq!(old.filter_subjects.len(), 5);
    stream.create_consumer(old).await.unwrap();

    // An upgraded checker updates the filter at start (create-or-update).
    let default_checker = RunningChecker::start(h.settings("c-default")).await;
    let mut consumer: PullConsumer = stream
        .get_consumer(streams::CHECKER_CONSUMER)
        .await
        .unwrap();
    assert_eq!(
        consumer.info().await.unwrap().config.filter_subjects,
        ["uptime.checks.due.v5.default"]
    );
    default_checker.stop().await;
}
