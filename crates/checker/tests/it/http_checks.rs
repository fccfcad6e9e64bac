//! What a check concludes about a real target: status, keyword, timeout,
//! TLS, and the address rules. Each test runs a real checker against a real
//! NATS server and loopback targets.

use crate::common::{http_spec, keyword_spec, Harness, RunningChecker};
use std::time::Duration;
use uptime_contracts::{CheckOutcome, KeywordType, Trigger};
use uptime_testkit::target::TargetServer;

#[tokio::test]
async fn a_200_passes_and_the_result_carries_the_due_check() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("checker-a")).await;

    let due = h.publish_due(http_spec(&target.url("/health"))).await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    assert_eq!(result.http_status, Some(200));
    assert_eq!(result.error, None);
    assert!(result.latency_ms.is_some());
    assert_eq!(result.ssl_expires_at, None, "plain http has no certificate");
    assert_eq!(result.monitor_id, due.monitor_id);
    assert_eq!(result.trigger, Trigger::Scheduled);
    assert_eq!(result.due_at, Some(due.due_at));
    assert!(result.checked_at >= due.due_at);
    assert_eq!(result.reporter, "checker-a");
    assert_eq!(target.hits(), 1);
    // The due check was acked once its result was stored.
    let info = h.wait_until_consumer_idle().await;
    assert_eq!(info.num_redelivered, 0);

    let ops = format!("http://{}", checker.ops_addr);
    let ready = reqwest::get(format!("{ops}/readyz")).await.unwrap();
    assert_eq!(ready.status(), 200);
    let ready: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(ready["checks"]["nats"], "ok");
    assert_eq!(ready["checks"]["progress"], "ok", "its loops are watched");
    let metrics = reqwest::get(format!("{ops}/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for name in [
        "checks_total{outcome=\"pass\"} 1",
        "check_duration_seconds_count 1",
        "check_start_lateness_seconds_count 1",
        "checks_in_flight 0",
    ] {
        assert!(metrics.contains(name), "{name} missing from:\n{metrics}");
    }
    checker.stop().await;
}

#[tokio::test]
async fn an_unexpected_status_fails_with_both_statuses_named() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_status(503);
    let checker = RunningChecker::start(h.settings("c")).await;

    let result = h
        .result_of(h.publish_due(http_spec(&target.url("/"))).await.check_id)
        .await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.http_status, Some(503));
    assert_eq!(
        result.error.as_deref(),
        Some("expected status 200, got 503")
    );
    checker.stop().await;
}

#[tokio::test]
async fn the_expected_status_need_not_be_200() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    target.set_status(404);
    let gone = h
        .publish_due(uptime_contracts::CheckSpec {
            expected_status: uptime_contracts::ExpectedStatus::of(404),
            ..http_spec(&target.url("/gone"))
        })
        .await;
    let gone = h.result_of(gone.check_id).await;
    assert_eq!(gone.outcome, CheckOutcome::Pass, "{gone:?}");
    assert_eq!(gone.http_status, Some(404));

    target.set_status(200);
    let created = h
        .publish_due(uptime_contracts::CheckSpec {
            expected_status: uptime_contracts::ExpectedStatus::of(201),
            ..http_spec(&target.url("/"))
        })
        .await;
    let created = h.result_of(created.check_id).await;
    assert_eq!(created.outcome, CheckOutcome::Fail);
    assert_eq!(
        created.error.as_deref(),
        Some("expected status 201, got 200")
    );
    checker.stop().await;
}

#[tokio::test]
async fn keywords_are_matched_both_ways_and_case_sensitively() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_body("<h1>All Systems Operational</h1>");
    let checker = RunningChecker::start(h.settings("c")).await;
    let url = target.url("/status");

    let cases = [
        ("Operational", KeywordType::Contains, None),
        (
            "operational",
            KeywordType::Contains,
            Some("keyword \"operational\" not found"),
        ),
        ("Outage", KeywordType::NotContains, None),
        (
            "Systems",
            KeywordType::NotContains,
            Some("keyword \"Systems\" found"),
        ),
    ];
    let mut dues = Vec::new();
    for (keyword, keyword_type, _) in &cases {
        dues.push(
            h.publish_due(keyword_spec(&url, keyword, *keyword_type))
                .await,
        );
    }
    for ((keyword, keyword_type, expected_error), due) in cases.iter().zip(dues) {
        let result = h.result_of(due.check_id).await;
        let expected_outcome = if expected_error.is_some() {
            CheckOutcome::Fail
        } else {
            CheckOutcome::Pass
        };
        assert_eq!(
            result.outcome, expected_outcome,
            "{keyword} {keyword_type:?}: {result:?}"
        );
        assert_eq!(
            result.error.as_deref(),
            *expected_error,
            "{keyword} {keyword_type:?}"
        );
        assert_eq!(result.http_status, Some(200));
    }
    checker.stop().await;
}

#[tokio::test]
async fn a_target_slower_than_the_timeout_fails_as_timed_out() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_secs(4));
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(uptime_contracts::CheckSpec {
            timeout_secs: uptime_contracts::TimeoutSecs::of(1),
            ..http_spec(&target.url("/"))
        })
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.error.as_deref(), Some("timed out after 1 s"));
    assert_eq!(result.http_status, None);
    checker.stop().await;
}

#[tokio::test]
async fn a_slow_target_within_the_timeout_passes_with_its_latency() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_millis(700));
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(uptime_contracts::CheckSpec {
            timeout_secs: uptime_contracts::TimeoutSecs::of(10),
            ..http_spec(&target.url("/"))
        })
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    let latency = result.latency_ms.expect("latency");
    assert!(
        latency >= 700,
        "latency {latency} ms includes the 700 ms delay"
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_refused_connection_fails_as_such() {
    let h = Harness::start().await;
    // A port that refuses connections, held until the test ends.
    let refusing = uptime_testkit::refusing::RefusingPort::bind();
    let port = refusing.port;
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(http_spec(&format!("http://127.0.0.1:{port}/")))
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.error.as_deref(), Some("connection refused"));
    checker.stop().await;
}

#[tokio::test]
async fn https_records_the_certificate_expiry() {
    let h = Harness::start().await;
    let target = TargetServer::start_https().await;
    let ca = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), target.ca_pem()).unwrap();
    let mut settings = h.settings("c");
    settings.checker.extra_root_ca_pem = Some(ca.path().to_path_buf());
    let checker = RunningChecker::start(settings).await;

    let by_ip = h.publish_due(http_spec(&target.url("/"))).await;
    let by_name = h
        .publish_due(http_spec(&target.url_with_host("localhost", "/")))
        .await;
    for due in [by_ip, by_name] {
        let result = h.result_of(due.check_id).await;
        assert_eq!(
            result.outcome,
            CheckOutcome::Pass,
            "{} {result:?}",
            due.spec.target
        );
        assert_eq!(result.ssl_expires_at, Some(target.not_after()));
    }
    checker.stop().await;
}

#[tokio::test]
async fn an_untrusted_certificate_fails_the_check() {
    let h = Harness::start().await;
    let target = TargetServer::start_https().await;
    // No extra CA: the target's self-made CA is unknown.
    let checker = RunningChecker::start(h.settings("c")).await;

    let result = h
        .result_of(h.publish_due(http_spec(&target.url("/"))).await.check_id)
        .await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    let error = result.error.expect("an error");
    assert!(
        error.starts_with("TLS handshake failed: invalid peer certificate"),
        "{error}"
    );
    assert_eq!(result.http_status, None);
    assert_eq!(
        target.hits(),
        0,
        "no request went over the untrusted connection"
    );
    checker.stop().await;
}

#[tokio::test]
async fn private_targets_are_refused_unless_allowed() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let mut settings = h.settings("c");
    settings.safety.allow_private_targets = false;
    let checker = RunningChecker::start(settings).await;

    let literal = h.publish_due(http_spec(&target.url("/"))).await;
    let named = h
        .publish_due(http_spec(&target.url_with_host("localhost", "/")))
        .await;

    let literal = h.result_of(literal.check_id).await;
    assert_eq!(literal.outcome, CheckOutcome::Fail);
    assert_eq!(
        literal.error.as_deref(),
        Some("target address 127.0.0.1 is loopback")
    );
    // `localhost` resolves to 127.0.0.1 and perhaps ::1: the error names the
    // class, never the address a name resolved to (it is logged instead).
    let named = h.result_of(named.check_id).await;
    assert_eq!(named.outcome, CheckOutcome::Fail);
    let error = named.error.expect("an error");
    assert_eq!(
        error,
        "localhost resolves to a loopback address, which checks may not reach"
    );
    assert!(
        !error.contains("127.0.0.1") && !error.contains("::1"),
        "{error}"
    );
    assert_eq!(target.hits(), 0, "the target was never contacted");
    checker.stop().await;
}

#[tokio::test]
async fn redirects_are_followed_but_never_to_a_refused_address() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let port = target.addr().port();
    // Private targets are off, but this one address is allowlisted, so the
    // first hop is allowed and the redirect's destination decides.
    let mut settings = h.settings("c");
    settings.safety.allow_private_targets = false;
    settings.checker.private_allowlist = vec![target.addr().ip()];
    let checker = RunningChecker::start(settings).await;

    let followed = h
        .publish_due(http_spec(&target.redirect_url(&target.url("/landing"))))
        .await;
    let followed = h.result_of(followed.check_id).await;
    assert_eq!(followed.outcome, CheckOutcome::Pass, "{followed:?}");
    assert_eq!(target.hits(), 2, "the redirect and its destination");

    // 127.0.0.2 is loopback too but not allowlisted; nothing listens there
    // either, so a wrongly followed redirect would fail differently.
    let to_private = h
        .publish_due(http_spec(
            &target.redirect_url(&format!("http://127.0.0.2:{port}/")),
        ))
        .await;
    let to_private = h.result_of(to_private.check_id).await;
    assert_eq!(to_private.outcome, CheckOutcome::Fail);
    assert_eq!(
        to_private.error.as_deref(),
        Some("redirect refused: target address 127.0.0.2 is loopback")
    );

    let to_other_scheme = h
        .publish_due(http_spec(&target.redirect_url("ftp://127.0.0.1/")))
        .await;
    let to_other_scheme = h.result_of(to_other_scheme.check_id).await;
    assert_eq!(to_other_scheme.outcome, CheckOutcome::Fail);
    assert_eq!(
        to_other_scheme.error.as_deref(),
        Some("redirect refused: target scheme \"ftp\" is not http or https")
    );

    // A Location without a host is not a redirect reqwest can follow at all:
    // the 302 itself is the final answer.
    let to_file = h
        .publish_due(http_spec(&target.redirect_url("file:///etc/passwd")))
        .await;
    let to_file = h.result_of(to_file.check_id).await;
    assert_eq!(to_file.outcome, CheckOutcome::Fail);
    assert_eq!(
        to_file.error.as_deref(),
        Some("expected status 200, got 302")
    );
    checker.stop().await;
}

#[tokio::test]
async fn an_undecodable_due_check_is_terminated_and_work_goes_on() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    h.js.publish(
        uptime_contracts::subjects::due_v5(uptime_contracts::DEFAULT_REGION),
        "not json".into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    let due = h.publish_due(http_spec(&target.url("/"))).await;

    let result = h.result_of(due.check_id).await;
    assert_eq!(result.outcome, CheckOutcome::Pass);
    let info = h.wait_until_consumer_idle().await;
    assert_eq!(info.num_redelivered, 0, "the bad message was not retried");
    assert_eq!(h.results().await.len(), 1, "no result for the bad message");
    // Not dropped silently: a copy waits in the dead-letter stream, with why.
    let dead = uptime_consumer::dead::read_all(&h.js).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason(), Some("undecodable"));
    assert_eq!(
        dead[0].original_subject(),
        Some(uptime_contracts::subjects::due_v5(uptime_contracts::DEFAULT_REGION).as_str())
    );
    assert_eq!(dead[0].payload(), b"not json");
    checker.stop().await;
}

#[tokio::test]
async fn a_due_check_for_a_heartbeat_monitor_is_dead_lettered_and_work_goes_on() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let mut heartbeat = http_spec(&target.url("/"));
    heartbeat.kind = uptime_contracts::MonitorKind::Heartbeat;
    let heartbeat = h.publish_due(heartbeat).await;
    let due = h.publish_due(http_spec(&target.url("/"))).await;

    assert_eq!(h.result_of(due.check_id).await.outcome, CheckOutcome::Pass);
    let info = h.wait_until_consumer_idle().await;
    assert_eq!(
        info.num_redelivered, 0,
        "the heartbeat check was not retried"
    );
    assert_eq!(
        h.results().await.len(),
        1,
        "no result for the heartbeat check"
    );
    let dead = uptime_consumer::dead::read_all(&h.js).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason(), Some("unsupported"));
    assert_eq!(
        dead[0].header(uptime_contracts::streams::dead::ORIGINAL_MSG_ID_HEADER),
        Some(heartbeat.check_id.to_string().as_str())
    );
    checker.stop().await;
}
