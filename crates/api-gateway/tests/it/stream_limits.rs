//! A full work-queue stream: the gateway accepts nothing it cannot queue.
//! Manual checks and heartbeat pings answer 503 with `Retry-After` while the
//! stream refuses publishes, nothing is reported as queued, operators see the
//! refusals in `nats_publish_refused_total`, and the API works again once the
//! stream has room.

use crate::check_support::{insert_heartbeat_monitor, insert_monitor, stream_messages};
use crate::common::{spawn_app_with, TestApp};
use async_nats::jetstream;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use uptime_contracts::streams;

/// Small enough to fill with a few messages.
const TINY: u64 = 4096;

async fn app_with_tiny_work_queues() -> TestApp {
    spawn_app_with(|s| {
        s.nats.streams.checks_max_bytes = TINY;
        s.nats.streams.results_max_bytes = TINY;
    })
    .await
}

/// Publishes filler on `subject` until its stream refuses one; returns how
/// many messages the stream then holds.
async fn fill(js: &jetstream::Context, stream: &str, subject: &str) -> u64 {
    for n in 0..1000 {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert("Nats-Msg-Id", format!("filler-{n}").as_str());
        let published = js
            .publish_with_headers(
                subject.to_string(),
                headers,
                format!(r#"{{"filler":"{}"}}"#, "x".repeat(200)).into(),
            )
            .await
            .expect("sent");
        if published.await.is_err() {
            let stored = js
                .get_stream(stream)
                .await
                .unwrap()
                .cached_info()
                .state
                .messages;
            assert!(stored > 0, "{stream} refused its first message");
            return stored;
        }
    }
    panic!("{stream} never filled up");
}

/// The response's status, `Retry-After` and JSON body.
async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    key: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    let mut req = app.client.request(method, app.url(path));
    if let Some(key) = key {
        req = req.bearer_auth(key).json(&serde_json::json!({}));
    }
    let res = req.send().await.expect("request sent");
    let status = res.status();
    let retry_after = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_string());
    let body = res.json().await.unwrap_or(Value::Null);
    (status, retry_after, body)
}

async fn refused_count(app: &TestApp, stream: &str) -> f64 {
    let text = app
        .client
        .get(format!("http://{}/metrics", app.ops_addr))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix = format!("nats_publish_refused_total{{stream=\"{stream}\"}} ");
    text.lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or(0.0)
}

fn assert_unavailable(what: &str, status: StatusCode, retry_after: Option<String>, body: &Value) {
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{what}: {body}");
    assert!(retry_after.is_some(), "{what}: Retry-After");
    assert_eq!(body["error"], "service unavailable", "{what}: {body}");
}

#[tokio::test]
async fn a_manual_check_that_cannot_be_queued_is_refused_with_503_and_not_reported_queued() {
    let app = app_with_tiny_work_queues().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/check", monitor.id);
    let js = &app.state.js;
    let stored = fill(js, streams::CHECKS_STREAM, "uptime.checks.due.filler").await;
    let refused_before = refused_count(&app, streams::CHECKS_STREAM).await;

    let (status, retry_after, body) = send(&app, Method::POST, &path, Some(&key)).await;
    assert_unavailable("manual check", status, retry_after, &body);
    // Not "in flight" either: a retry tries to queue again rather than
    // answering 202 with a check that was never queued.
    let (status, retry_after, body) = send(&app, Method::POST, &path, Some(&key)).await;
    assert_unavailable("retried manual check", status, retry_after, &body);
    assert_eq!(
        stream_messages(js, streams::CHECKS_STREAM).await.len() as u64,
        stored,
        "nothing queued, nothing dropped"
    );
    assert!(
        refused_count(&app, streams::CHECKS_STREAM).await >= refused_before + 2.0,
        "refusals are counted"
    );

    // Once the checkers made room, the same request is queued.
    js.get_stream(streams::CHECKS_STREAM)
        .await
        .unwrap()
        .purge()
        .await
        .unwrap();
    let (status, _, body) = send(&app, Method::POST, &path, Some(&key)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let queued = stream_messages(js, streams::CHECKS_STREAM).await;
    assert_eq!(queued.len(), 1);
    assert_eq!(queued[0].2["check_id"], body["check_id"]);
}

#[tokio::test]
async fn a_ping_that_cannot_be_queued_is_refused_with_503() {
    let app = app_with_tiny_work_queues().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'e', true).await;
    let path = format!("/api/v1/heartbeat/{token}");
    let js = &app.state.js;
    let stored = fill(js, streams::RESULTS_STREAM, "uptime.checks.result.filler").await;
    let refused_before = refused_count(&app, streams::RESULTS_STREAM).await;

    for method in [Method::GET, Method::POST] {
        let (status, retry_after, body) = send(&app, method.clone(), &path, None).await;
        assert_unavailable(&format!("{method} ping"), status, retry_after, &body);
    }
    let (status, retry_after, body) = send(&app, Method::POST, &format!("{path}/fail"), None).await;
    assert_unavailable("failure report", status, retry_after, &body);
    let results = stream_messages(js, streams::RESULTS_STREAM).await;
    assert_eq!(
        results.len() as u64,
        stored,
        "nothing queued, nothing dropped"
    );
    assert!(
        results
            .iter()
            .all(|(_, _, r)| r["monitor_id"] != monitor.id),
        "no result of the monitor"
    );
    assert!(
        refused_count(&app, streams::RESULTS_STREAM).await >= refused_before + 3.0,
        "refusals are counted"
    );
    assert_eq!(
        last_heartbeat_at(&app, monitor.id).await,
        None,
        "a refused ping leaves no trace: the scheduler's deadline must not move"
    );

    js.get_stream(streams::RESULTS_STREAM)
        .await
        .unwrap()
        .purge()
        .await
        .unwrap();
    let (status, _, body) = send(&app, Method::GET, &path, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let results = stream_messages(js, streams::RESULTS_STREAM).await;
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].2["monitor_id"], monitor.id);
    assert!(last_heartbeat_at(&app, monitor.id).await.is_some());
}

async fn last_heartbeat_at(
    app: &TestApp,
    monitor_id: i64,
) -> Option<chrono::DateTime<chrono::Utc>> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::monitors;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .find(monitor_id)
        .select(monitors::last_heartbeat_at)
        .first(&mut conn)
        .await
        .unwrap()
}
