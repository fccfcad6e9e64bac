//! Abuse limits of the gateway: the per-user rate limit, heartbeat throttling,
//! cheap failed authentication and a bounded wait for database connections.

use crate::check_support::{insert_heartbeat_monitor, stream_messages};
use crate::common::{spawn_app_with, TestApp};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use std::time::Duration;
use uptime_contracts::streams;
use uptime_db::schema::monitors;

const KEYS: &str = "/api/v1/api-keys";

/// Another key of `user_id`, inserted the way the API creates one.
async fn second_key(app: &TestApp, user_id: i64) -> String {
    let raw = api_gateway::keys::generate();
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::api_keys::create(
        &mut conn,
        user_id,
        "second",
        &raw[..api_gateway::keys::SHOWN_PREFIX_LEN],
        &api_gateway::keys::digest(&raw),
    )
    .await
    .unwrap();
    raw
}

/// Sends GETs with `key` until one is refused; returns that response.
async fn exhaust(app: &TestApp, key: &str, at_most: usize) -> reqwest::Response {
    for _ in 0..at_most {
        let res = app
            .client
            .get(app.url(KEYS))
            .bearer_auth(key)
            .send()
            .await
            .unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            return res;
        }
        assert_eq!(res.status(), StatusCode::OK);
    }
    panic!("no 429 within {at_most} requests");
}

#[tokio::test]
async fn the_rate_limit_counts_all_of_a_users_keys_together() {
    let app = spawn_app_with(|s| {
        s.rate_limit.per_second = 1;
        s.rate_limit.burst = 5;
    })
    .await;
    let (user_id, first) = app.new_user("ops").await;
    let second = second_key(&app, user_id).await;
    let (_, other_user) = app.new_user("someone else").await;

    let refused = exhaust(&app, &first, 20).await;
    let retry_after: u64 = refused.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1, "{retry_after}");

    // A fresh key of the same user brings no fresh burst.
    let res = app
        .client
        .get(app.url(KEYS))
        .bearer_auth(&second)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["error"], "rate limit exceeded");

    // Other users are not affected.
    assert_eq!(app.get(KEYS, &other_user).await.0, StatusCode::OK);
}

#[tokio::test]
async fn an_exhausted_pool_answers_503_with_a_json_error_instead_of_hanging() {
    let app = spawn_app_with(|s| {
        s.database.max_connections = 1;
        s.database.pool_wait_timeout_ms = 200;
    })
    .await;
    let (_, key) = app.new_user("ops").await;
    // Hold the only connection.
    let held = uptime_db::pool::conn(&app.state.pool).await.unwrap();

    let res = app
        .client
        .get(app.url("/api/v1/monitors"))
        .bearer_auth(&key)
        // A deadline for the test itself: without a pool timeout the request
        // never ends.
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("an answer, not a hang");
    assert_eq!(res.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(res.headers().contains_key("retry-after"));
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["error"], "service unavailable");

    drop(held);
    assert_eq!(app.get("/api/v1/monitors", &key).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_flood_of_unknown_keys_costs_one_query_per_key_at_most() {
    let app = spawn_app_with(|s| {
        s.database.max_connections = 1;
        s.database.pool_wait_timeout_ms = 200;
    })
    .await;
    let unknown = api_gateway::keys::generate();
    let (status, body) = app.get(KEYS, &unknown).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // With the only connection held, the same unknown key must still be
    // refused as unauthorized: it is answered without the database.
    let held = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    for _ in 0..5 {
        let (status, body) = app.get(KEYS, &unknown).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert_eq!(body["error"], "unauthorized");
    }
    drop(held);
}

async fn ping(app: &TestApp, token: &str) -> reqwest::Response {
    app.client
        .request(Method::POST, app.url(&format!("/api/v1/heartbeat/{token}")))
        .send()
        .await
        .unwrap()
}

async fn last_heartbeat_at(app: &TestApp, id: i64) -> Option<chrono::DateTime<chrono::Utc>> {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .find(id)
        .select(monitors::last_heartbeat_at)
        .first(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn heartbeat_pings_beyond_the_burst_answer_429_and_write_nothing() {
    let app = spawn_app_with(|s| {
        s.heartbeat_limit.per_second = 1;
        s.heartbeat_limit.burst = 3;
    })
    .await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'c', true).await;
    let (_, other_token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'd', true).await;

    let mut accepted = 0;
    let refused = loop {
        let res = ping(&app, &token).await;
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            break res;
        }
        assert_eq!(res.status(), StatusCode::OK);
        accepted += 1;
        assert!(accepted <= 10, "pings are not throttled");
    };
    let stored = last_heartbeat_at(&app, monitor.id).await;
    let published = stream_messages(&app.state.js, streams::RESULTS_STREAM)
        .await
        .len();
    assert_eq!(published, accepted, "one result per accepted ping");

    assert!(refused.headers().contains_key("retry-after"));
    let body: serde_json::Value = refused.json().await.unwrap();
    assert_eq!(body["error"], "rate limit exceeded");
    // The refused ping (and any further one now) wrote nothing.
    let again = ping(&app, &token).await;
    assert_eq!(again.status(), StatusCode::TOO_MANY_REQUESTS);
    assert_eq!(last_heartbeat_at(&app, monitor.id).await, stored);
    assert_eq!(
        stream_messages(&app.state.js, streams::RESULTS_STREAM)
            .await
            .len(),
        published
    );

    // Each token has its own bucket.
    assert_eq!(ping(&app, &other_token).await.status(), StatusCode::OK);
}
