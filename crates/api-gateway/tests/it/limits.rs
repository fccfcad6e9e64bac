//! Abuse limits of the gateway: the per-user rate limit, heartbeat throttling,
//! cheap failed authentication and a bounded wait for database connections;
//! bulk creates charged per monitor, in a line per user, and validated off
//! the threads that serve everyone (issue 19).

use crate::check_support::{insert_heartbeat_monitor, stream_messages};
use crate::common::{spawn_app, spawn_app_with, TestApp};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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
        user_id,
        uptime_db::organisations::Scope::Admin,
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

const BULK: &str = "/api/v1/monitors/bulk";

fn typical(i: usize) -> Value {
    json!({"name": format!("api {i}"), "type": "http",
           "target": format!("https://shop-{i}.example.com/health"), "interval_secs": 60})
}

async fn monitors_of(app: &TestApp, user_id: i64) -> i64 {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .filter(monitors::org_id.eq(user_id))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap()
}

/// `n` requests of one token each.
async fn spend(app: &TestApp, key: &str, n: usize) {
    for _ in 0..n {
        assert_eq!(app.get(KEYS, key).await.0, StatusCode::OK);
    }
}

#[tokio::test]
async fn a_bulk_create_costs_a_token_per_ten_monitors() {
    let app = spawn_app_with(|s| {
        s.rate_limit.per_second = 1;
        s.rate_limit.burst = 40;
    })
    .await;
    let (user_id, key) = app.new_user("ops").await;
    let batch =
        |from: usize| json!({"monitors": (from..from + 190).map(typical).collect::<Vec<_>>()});

    // 1 + 19 tokens (under 20 KiB of body: the monitors count), then 10
    // requests of one token: 10 of the 40 left.
    let (status, body) = app.post(BULK, &key, batch(0)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    spend(&app, &key, 10).await;
    // Its request's token and the bytes' one are there, the monitors' 18
    // more are not for another 10 s (refilled at 1 a second).
    let res = app
        .client
        .post(app.url(BULK))
        .bearer_auth(&key)
        .json(&batch(1000))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = res.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(retry_after >= 1, "{retry_after}");
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "rate limit exceeded", "{body}");
    assert_eq!(
        monitors_of(&app, user_id).await,
        190,
        "nothing of the second"
    );
    // The refused one took its request's token only.
    assert_eq!(app.get(KEYS, &key).await.0, StatusCode::OK);
}

#[tokio::test]
async fn a_bulk_create_is_charged_for_its_size_before_its_body_is_read() {
    let app = spawn_app_with(|s| {
        s.rate_limit.per_second = 1;
        s.rate_limit.burst = 40;
    })
    .await;
    let (user_id, key) = app.new_user("ops").await;
    // Two monitors in 380 KiB (JSON allows the blanks): 1 + 19 tokens.
    let padded = |from: usize| {
        let mut body =
            serde_json::to_vec(&json!({"monitors": [typical(from), typical(from + 1)]})).unwrap();
        body.resize(380 * 1024, b' ');
        body
    };
    let res = app
        .client
        .post(app.url(BULK))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .body(padded(0))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    spend(&app, &key, 10).await;

    // 10 left, 1 taken by the next request's authentication: the same
    // again is refused before the rest of its body is sent.
    let request = half_sent_bytes(&app, &key, padded(10)).await;
    // A deadline for the test itself: a server reading the body first
    // never answers.
    let (status, body) = tokio::time::timeout(Duration::from_secs(20), request.answer())
        .await
        .expect("an answer before the whole body");
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["error"], "rate limit exceeded", "{body}");
    assert_eq!(monitors_of(&app, user_id).await, 2);
}

/// A bulk create sent over a connection of its own with half of its body:
/// the handler has it until the rest arrives.
struct HalfSent {
    stream: tokio::net::TcpStream,
    rest: Vec<u8>,
}

async fn half_sent(app: &TestApp, key: &str, body: &Value) -> HalfSent {
    half_sent_bytes(app, key, serde_json::to_vec(body).unwrap()).await
}

async fn half_sent_bytes(app: &TestApp, key: &str, body: Vec<u8>) -> HalfSent {
    let addr = app.base.strip_prefix("http://").unwrap();
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {BULK} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {key}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let half = body.len() / 2;
    stream.write_all(&body[..half]).await.unwrap();
    HalfSent {
        stream,
        rest: body[half..].to_vec(),
    }
}

impl HalfSent {
    /// Sends the rest; the answer's status and JSON body.
    async fn finish(mut self) -> (u16, Value) {
        self.stream.write_all(&self.rest).await.unwrap();
        self.answer().await
    }

    /// The answer's status and JSON body, without sending the rest.
    async fn answer(mut self) -> (u16, Value) {
        let mut answer = Vec::new();
        let mut chunk = [0u8; 4096];
        // A server that answers before reading the whole body resets the
        // connection after its answer: what came before the reset counts.
        while let Ok(n @ 1..) = self.stream.read(&mut chunk).await {
            answer.extend_from_slice(&chunk[..n]);
        }
        let answer = String::from_utf8(answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").expect("an HTTP answer");
        let status = head.split(' ').nth(1).unwrap().parse().unwrap();
        (status, serde_json::from_str(body).unwrap_or(Value::Null))
    }
}

#[tokio::test]
async fn a_users_bulk_creates_wait_in_a_line_of_four_and_a_fifth_is_refused() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let (other_id, other) = app.new_user("someone else").await;

    // Four in line, their bodies still being read.
    let mut in_line = Vec::new();
    for r in 0..4 {
        let body = json!({"monitors": [typical(2 * r), typical(2 * r + 1)]});
        in_line.push(half_sent(&app, &key, &body).await);
    }
    let deadline = Instant::now() + Duration::from_secs(20);
    while app.state.rate_limiter.in_line(&user_id) < 4 {
        assert!(Instant::now() < deadline, "the four never got in line");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let res = app
        .client
        .post(app.url(BULK))
        .bearer_auth(&key)
        .json(&json!({"monitors": [typical(99)]}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["error"], "too many requests", "{body}");
    assert_eq!(body["details"][0]["field"], "monitors", "{body}");
    let message = body["details"][0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("at most 4 bulk creates per organisation at a time"),
        "{message}"
    );

    // Another user's line is their own.
    let (status, body) = app
        .post(BULK, &other, json!({"monitors": [typical(100)]}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(monitors_of(&app, other_id).await, 1);

    // The four are served in turn (whichever got in line first: the rest
    // of every body goes out before any answer is awaited).
    for (status, body) in futures::future::join_all(in_line.into_iter().map(HalfSent::finish)).await
    {
        assert_eq!(status, 201, "{body}");
        assert_eq!(body["monitors"].as_array().unwrap().len(), 2);
    }
    assert_eq!(monitors_of(&app, user_id).await, 8);
    assert_eq!(app.state.rate_limiter.in_line(&user_id), 0);
}

/// An item whose validation is slow: 20 regular expressions near the size
/// the checker allows, each compiled to be judged.
fn heavy(i: usize) -> Value {
    let matches = json!({"source": "text_body", "comparison": "matches",
                         "target": "(a|b|c|d|e)+\\w{20}"});
    json!({"name": format!("heavy {i}"), "type": "http",
           "target": format!("https://h{i}.example.com/"), "assertions": vec![matches; 20]})
}

async fn validations_running(app: &TestApp) -> f64 {
    let metrics = app
        .client
        .get(format!("http://{}/metrics", app.ops_addr))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("api_bulk_validations_running "))
        .map_or(0.0, |v| v.trim().parse().unwrap())
}

/// Two users' bulk validations running at once, as many as the app has
/// HTTP workers: a third user is answered while both still run (they took
/// no worker), not after one of them ended. The ops port, with a worker of
/// its own, tells what runs.
#[tokio::test]
async fn another_user_is_answered_while_bulk_validations_run() {
    let app = spawn_app().await;
    let (_, reader) = app.new_user("reader").await;
    let body = json!({"monitors": (0..60).map(heavy).collect::<Vec<_>>()});
    let mut bulks = Vec::new();
    for name in ["a", "b"] {
        let (_, key) = app.new_user(name).await;
        let request = app.client.post(app.url(BULK)).bearer_auth(key).json(&body);
        bulks.push(tokio::spawn(request.send()));
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while validations_running(&app).await < 2.0 {
        assert!(
            Instant::now() < deadline,
            "the two validations never ran together"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let (status, body) = app.get("/api/v1/monitors", &reader).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        validations_running(&app).await,
        2.0,
        "the reader was answered only once a validation had ended"
    );
    for bulk in bulks {
        bulk.abort();
    }
}
