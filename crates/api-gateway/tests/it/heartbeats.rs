use crate::check_support::{insert_heartbeat_monitor, insert_monitor, stream_messages};
use crate::common::{spawn_app, spawn_app_with, TestApp};
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, CheckResult, Message};
use uptime_db::schema::monitors;

async fn last_heartbeat_at(app: &TestApp, monitor_id: i64) -> Option<DateTime<Utc>> {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .find(monitor_id)
        .select(monitors::last_heartbeat_at)
        .first(&mut conn)
        .await
        .unwrap()
}

/// The check results the gateway published, oldest first.
async fn published_results(app: &TestApp) -> Vec<(Option<String>, CheckResult)> {
    stream_messages(&app.state.js, streams::RESULTS_STREAM)
        .await
        .into_iter()
        .map(|(subject, msg_id, payload)| {
            assert_eq!(subject, CheckResult::SUBJECT);
            (msg_id, serde_json::from_value(payload).unwrap())
        })
        .collect()
}

#[tokio::test]
async fn a_ping_needs_no_key_stores_the_time_and_publishes_a_passing_result() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'a', true).await;
    assert!(last_heartbeat_at(&app, monitor.id).await.is_none());

    let before = Utc::now() - Duration::seconds(1);
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"status": "ok"}));

    let pinged = last_heartbeat_at(&app, monitor.id)
        .await
        .expect("ping stored");
    assert!(pinged >= before && pinged <= Utc::now(), "{pinged}");

    let results = published_results(&app).await;
    assert_eq!(results.len(), 1);
    let (msg_id, result) = &results[0];
    assert_eq!(
        msg_id.as_deref(),
        Some(result.check_id.to_string().as_str())
    );
    assert_eq!(result.monitor_id, monitor.id);
    assert_eq!(result.trigger.as_str(), "heartbeat");
    assert_eq!(result.outcome, uptime_contracts::CheckOutcome::Pass);
    assert_eq!(result.reporter, "api-gateway");
    assert_eq!(result.definition_version, monitor.definition_version);
    assert!(result.error.is_none() && result.due_at.is_none());
    assert_eq!(
        result.checked_at.timestamp_micros(),
        pinged.timestamp_micros(),
        "the result is the ping the row recorded"
    );
}

#[tokio::test]
async fn post_and_head_ping_too_and_head_has_no_body() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (_, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'b', true).await;
    let url = app.url(&format!("/api/v1/heartbeat/{token}"));

    let res = app.client.post(&url).body("ignored").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));

    let res = app.client.head(&url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.bytes().await.unwrap().is_empty());

    // An Authorization header is irrelevant here, even a bad one.
    let res = app
        .client
        .get(&url)
        .bearer_auth("not-a-key")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let results = published_results(&app).await;
    assert_eq!(results.len(), 3);
    let ids: std::collections::HashSet<_> = results.iter().map(|(_, r)| r.check_id).collect();
    assert_eq!(ids.len(), 3, "every ping is its own check");
}

#[tokio::test]
async fn fail_reports_a_failed_check_with_the_clients_message() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'c', true).await;
    let url = app.url(&format!("/api/v1/heartbeat/{token}/fail"));

    let res = app.client.get(&url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));
    let res = app
        .client
        .post(&url)
        .body("  disk full\n")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let res = app
        .client
        .post(&url)
        .body("x".repeat(5000))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let results = published_results(&app).await;
    let errors: Vec<String> = results
        .iter()
        .map(|(_, r)| {
            assert_eq!(r.outcome, uptime_contracts::CheckOutcome::Fail);
            assert_eq!(r.monitor_id, monitor.id);
            assert_eq!(r.trigger.as_str(), "heartbeat");
            r.error.clone().unwrap()
        })
        .collect();
    assert_eq!(errors[0], "failure reported by the client");
    assert_eq!(errors[1], "failure reported by the client: disk full");
    assert_eq!(
        errors[2],
        format!("failure reported by the client: {}", "x".repeat(1000)),
        "long reports are cut to 1000 characters"
    );

    // Over the API's 64 KiB body limit.
    let res = app
        .client
        .post(&url)
        .body("x".repeat(70 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn unknown_malformed_and_non_heartbeat_tokens_are_404() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    insert_heartbeat_monitor(&app.state.pool, user_id, 'd', true).await;
    // A token on a non-heartbeat row (which the API never creates) is still no heartbeat.
    let stray = format!("hb_{}", "e".repeat(32));
    insert_monitor(&app.state.pool, user_id, |m| {
        m.heartbeat_token = Some(stray.clone())
    })
    .await;

    for token in [
        format!("hb_{}", "f".repeat(32)),
        stray,
        "hb_short".to_string(),
        format!("hb_{}", "D".repeat(32)),
        "nothing".to_string(),
    ] {
        for suffix in ["", "/fail", "/start", "/0", "/3"] {
            let path = format!("/api/v1/heartbeat/{token}{suffix}");
            let (status, body) = app.call(Method::GET, &path, None, None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(body, json!({"error": "not found"}));
        }
    }
    assert!(published_results(&app).await.is_empty());
}

#[tokio::test]
async fn paused_monitors_accept_pings() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '9', false).await;
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(last_heartbeat_at(&app, monitor.id).await.is_some());
    assert_eq!(published_results(&app).await.len(), 1);
}

#[tokio::test]
async fn other_methods_get_a_json_405() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (_, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '1', true).await;
    let (status, body) = app
        .call(
            Method::DELETE,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(body["error"].is_string());
}

/// The row's last ping and run start.
async fn ping_and_start(
    app: &TestApp,
    monitor_id: i64,
) -> (Option<DateTime<Utc>>, Option<DateTime<Utc>>) {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .find(monitor_id)
        .select((monitors::last_heartbeat_at, monitors::heartbeat_started_at))
        .first(&mut conn)
        .await
        .unwrap()
}

async fn hit(app: &TestApp, method: Method, path: &str, body: &str) -> reqwest::Response {
    app.client
        .request(method, app.url(path))
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

#[tokio::test]
async fn a_start_then_a_ping_records_the_runs_duration() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '5', true).await;

    let res = hit(
        &app,
        Method::POST,
        &format!("/api/v1/heartbeat/{token}/start"),
        "",
    )
    .await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));
    let (pinged, started) = ping_and_start(&app, monitor.id).await;
    let started = started.expect("start stored");
    assert!(pinged.is_none(), "a start is not a ping");
    assert!(
        published_results(&app).await.is_empty(),
        "a start publishes no result"
    );
    // The scheduler is told to re-read the monitor, to hold the run's deadline.
    let changes = stream_messages(&app.state.js, streams::MONITORS_STREAM).await;
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].0, uptime_contracts::MonitorChangedV1::SUBJECT);
    assert_eq!(changes[0].2["monitor_id"], json!(monitor.id));

    let res = hit(&app, Method::GET, &format!("/api/v1/heartbeat/{token}"), "").await;
    assert_eq!(res.status(), StatusCode::OK);
    let (pinged, after) = ping_and_start(&app, monitor.id).await;
    let pinged = pinged.expect("ping stored");
    assert!(after.is_none(), "the ping ended the run");
    let results = published_results(&app).await;
    assert_eq!(results.len(), 1);
    let result = &results[0].1;
    assert_eq!(result.outcome, uptime_contracts::CheckOutcome::Pass);
    let duration = (pinged - started).num_milliseconds();
    assert_eq!(
        result.latency_ms.map(i64::from),
        Some(duration),
        "the run's duration"
    );

    // The next ping ends no run: no duration.
    hit(&app, Method::GET, &format!("/api/v1/heartbeat/{token}"), "").await;
    let results = published_results(&app).await;
    assert_eq!(results[1].1.latency_ms, None);
}

#[tokio::test]
async fn exit_code_0_is_a_success_and_others_a_failure_that_ends_the_run() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '6', true).await;
    let base = format!("/api/v1/heartbeat/{token}");

    let res = hit(&app, Method::POST, &format!("{base}/0"), "ignored").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));
    assert_eq!(
        hit(&app, Method::GET, &format!("{base}/start"), "")
            .await
            .status(),
        StatusCode::OK
    );
    assert_eq!(
        hit(&app, Method::GET, &format!("{base}/3"), "")
            .await
            .status(),
        StatusCode::OK
    );
    let (_, started) = ping_and_start(&app, monitor.id).await;
    assert!(started.is_none(), "a failure ends the run");
    assert_eq!(
        hit(&app, Method::POST, &format!("{base}/255"), "  disk full\n")
            .await
            .status(),
        StatusCode::OK
    );
    let res = hit(&app, Method::HEAD, &format!("{base}/1"), "").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.bytes().await.unwrap().is_empty());

    let results: Vec<CheckResult> = published_results(&app)
        .await
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let seen: Vec<(uptime_contracts::CheckOutcome, Option<&str>)> = results
        .iter()
        .map(|r| (r.outcome, r.error.as_deref()))
        .collect();
    use uptime_contracts::CheckOutcome::{Fail, Pass};
    assert_eq!(
        seen,
        vec![
            (Pass, None),
            (Fail, Some("exit code 3")),
            (Fail, Some("exit code 255: disk full")),
            (Fail, Some("exit code 1")),
        ]
    );
    assert!(results[1].latency_ms.is_some(), "the failed run's duration");
    assert!(results
        .iter()
        .all(|r| r.monitor_id == monitor.id && r.trigger.as_str() == "heartbeat"));
}

#[tokio::test]
async fn exit_codes_outside_0_to_255_are_404_and_touch_nothing() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '7', true).await;
    for code in ["256", "-1", "abc", "1000", "+3", "3.0"] {
        for method in [Method::GET, Method::POST] {
            let path = format!("/api/v1/heartbeat/{token}/{code}");
            let (status, body) = app.call(method, &path, None, None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(body, json!({"error": "not found"}));
        }
    }
    assert_eq!(ping_and_start(&app, monitor.id).await, (None, None));
    assert!(published_results(&app).await.is_empty());
}

#[tokio::test]
async fn starts_and_exit_codes_share_the_tokens_rate_limit() {
    let app = spawn_app_with(|s| {
        s.heartbeat_limit.per_second = 1;
        s.heartbeat_limit.burst = 3;
    })
    .await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '8', true).await;
    // Hammered in turn until each has been refused once: past the burst of
    // 3, refills (one a second) let through only the odd one.
    let mut refused = std::collections::BTreeSet::new();
    for suffix in ["/start", "/3", "/0"].into_iter().cycle().take(300) {
        let before = ping_and_start(&app, monitor.id).await;
        let published = published_results(&app).await.len();
        let res = hit(
            &app,
            Method::POST,
            &format!("/api/v1/heartbeat/{token}{suffix}"),
            "",
        )
        .await;
        if res.status() == StatusCode::OK {
            continue;
        }
        assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS, "{suffix}");
        assert!(res.headers().contains_key("retry-after"));
        let body: Value = res.json().await.unwrap();
        assert_eq!(body["error"], "rate limit exceeded");
        // The refused request wrote and published nothing.
        assert_eq!(ping_and_start(&app, monitor.id).await, before, "{suffix}");
        assert_eq!(published_results(&app).await.len(), published, "{suffix}");
        refused.insert(suffix);
        if refused.len() == 3 {
            return;
        }
    }
    panic!("not throttled: only {refused:?} were refused");
}
