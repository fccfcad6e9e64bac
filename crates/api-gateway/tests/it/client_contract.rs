//! What lets a client (a provider, an SDK, `uptimectl`) retry and pace
//! itself: `Idempotency-Key` on POSTs and the rate-limit headers.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;
use uptime_db::idempotency::Claim;

const MONITORS: &str = "/api/v1/monitors";

fn monitor(name: &str) -> Value {
    json!({"name": name, "type": "http", "target": "https://example.com/health"})
}

/// POSTs `body` to `path` with `key` and `Idempotency-Key: idem`.
async fn keyed_post(
    app: &TestApp,
    path: &str,
    key: &str,
    idem: &str,
    body: &Value,
) -> reqwest::Response {
    app.client
        .post(app.url(path))
        .bearer_auth(key)
        .header("Idempotency-Key", idem)
        .json(body)
        .send()
        .await
        .expect("request sent")
}

async fn monitor_count(app: &TestApp, key: &str) -> usize {
    let (status, body) = app.get(&format!("{MONITORS}?limit=100"), key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["monitors"].as_array().unwrap().len()
}

#[tokio::test]
async fn a_retried_create_replays_the_first_response_and_creates_once() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("idem").await;

    let first = keyed_post(&app, MONITORS, &key, "create-1", &monitor("a")).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    assert!(first.headers().get("idempotent-replayed").is_none());
    let first: Value = first.json().await.unwrap();

    let again = keyed_post(&app, MONITORS, &key, "create-1", &monitor("a")).await;
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(again.headers()["idempotent-replayed"], "true");
    let again: Value = again.json().await.unwrap();
    assert_eq!(again["id"], first["id"], "the same monitor, not a second");
    assert_eq!(monitor_count(&app, &key).await, 1);

    // Another key is another request.
    let other = keyed_post(&app, MONITORS, &key, "create-2", &monitor("a")).await;
    assert_eq!(other.status(), StatusCode::CREATED);
    assert_eq!(monitor_count(&app, &key).await, 2);
    // Without a key nothing is remembered.
    let (status, _) = app.post(MONITORS, &key, monitor("a")).await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(monitor_count(&app, &key).await, 3);
}

#[tokio::test]
async fn a_replay_carries_the_first_answers_location_and_etag() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("idem-headers").await;
    let first = keyed_post(&app, MONITORS, &key, "create-h", &monitor("h")).await;
    assert_eq!(first.status(), StatusCode::CREATED);
    let header = |res: &reqwest::Response, name: &str| {
        res.headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_string())
    };
    let (location, etag) = (header(&first, "location"), header(&first, "etag"));
    assert!(location.is_some() && etag.is_some(), "{first:?}");
    let created: Value = first.json().await.unwrap();
    assert_eq!(
        location.as_deref(),
        Some(format!("/api/v1/monitors/{}", created["id"]).as_str())
    );

    let again = keyed_post(&app, MONITORS, &key, "create-h", &monitor("h")).await;
    assert_eq!(again.status(), StatusCode::CREATED);
    assert_eq!(
        header(&again, "idempotent-replayed").as_deref(),
        Some("true")
    );
    assert_eq!(header(&again, "location"), location, "the same Location");
    assert_eq!(header(&again, "etag"), etag, "the same ETag");
    // The tag is the one `If-Match` needs: a PATCH with it is taken.
    let patched = send(
        &app,
        reqwest::Method::PATCH,
        &format!("{MONITORS}/{}", created["id"]),
        &key,
        &[("If-Match", etag.as_deref().unwrap())],
        Some(json!({"name": "h2"})),
    )
    .await;
    assert_eq!(patched.status(), StatusCode::OK, "{patched:?}");
}

#[tokio::test]
async fn a_retried_bulk_create_creates_its_monitors_once() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("idem-bulk").await;
    let batch = json!({"monitors": (0..50).map(|i| monitor(&format!("m{i}"))).collect::<Vec<_>>()});
    for _ in 0..3 {
        let res = keyed_post(&app, "/api/v1/monitors/bulk", &key, "bulk-1", &batch).await;
        assert_eq!(res.status(), StatusCode::CREATED);
    }
    assert_eq!(monitor_count(&app, &key).await, 50);
}

#[tokio::test]
async fn a_key_reused_for_another_request_is_refused_naming_the_header() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("idem-reuse").await;
    let first = keyed_post(&app, MONITORS, &key, "k", &monitor("a")).await;
    assert_eq!(first.status(), StatusCode::CREATED);

    let other = keyed_post(&app, MONITORS, &key, "k", &monitor("b")).await;
    assert_eq!(other.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = other.json().await.unwrap();
    assert_eq!(body["details"][0]["field"], "Idempotency-Key", "{body}");
    assert_eq!(monitor_count(&app, &key).await, 1);

    // Another organisation's identical key is its own.
    let (_, stranger) = app.new_user("idem-other").await;
    let theirs = keyed_post(&app, MONITORS, &stranger, "k", &monitor("b")).await;
    assert_eq!(theirs.status(), StatusCode::CREATED);
}

#[tokio::test]
async fn a_malformed_key_is_a_400_naming_the_header() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("idem-bad").await;
    let long = "k".repeat(api_gateway::idempotency::MAX_KEY_LEN + 1);
    let res = keyed_post(&app, MONITORS, &key, &long, &monitor("a")).await;
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let body: Value = res.json().await.unwrap();
    assert_eq!(body["details"][0]["field"], "Idempotency-Key", "{body}");
    assert_eq!(monitor_count(&app, &key).await, 0);
}

#[tokio::test]
async fn a_claim_in_flight_is_refused_until_abandoned_then_taken_over() {
    let app = spawn_app().await;
    let (org, _) = app.new_user("idem-flight").await;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let day = Duration::from_secs(86_400);
    let claim = |abandoned_after| {
        let pool = app.state.pool.clone();
        async move {
            let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
            uptime_db::idempotency::claim(&mut conn, org, "f", b"digest", day, abandoned_after)
                .await
                .unwrap()
        }
    };
    assert_eq!(claim(day).await, Claim::Claimed);
    assert_eq!(claim(day).await, Claim::InFlight, "the first is running");
    assert_eq!(
        claim(Duration::ZERO).await,
        Claim::Claimed,
        "a claim older than abandoned_after is taken over"
    );
    // A request that left nothing to replay gives its key up.
    uptime_db::idempotency::release(&mut conn, org, "f")
        .await
        .unwrap();
    assert_eq!(claim(day).await, Claim::Claimed);
}

#[tokio::test]
async fn every_authenticated_response_says_the_rate_limit_left() {
    let app = spawn_app_with(|s| {
        s.rate_limit.per_second = 1;
        s.rate_limit.burst = 3;
    })
    .await;
    let (_, key) = app.new_user("paced").await;
    let get = || app.client.get(app.url(MONITORS)).bearer_auth(&key).send();

    let res = get().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let headers = res.headers();
    assert_eq!(headers["ratelimit-policy"], "3;w=3");
    assert_eq!(headers["x-ratelimit-limit"], "3");
    let remaining: u32 = headers["x-ratelimit-remaining"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(remaining <= 2, "one taken: {remaining}");
    assert!(headers["ratelimit"]
        .to_str()
        .unwrap()
        .starts_with("limit=3, remaining="));

    let refused = loop {
        let res = get().await.unwrap();
        if res.status() == StatusCode::TOO_MANY_REQUESTS {
            break res;
        }
    };
    assert_eq!(refused.headers()["x-ratelimit-remaining"], "0");
    let reset: u64 = refused.headers()["x-ratelimit-reset"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(reset >= 1);
    assert_eq!(
        refused.headers()["retry-after"].to_str().unwrap(),
        reset.to_string()
    );

    // A public route carries none.
    let public = app
        .client
        .get(app.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert!(public.headers().get("ratelimit").is_none());
}

async fn send(
    app: &TestApp,
    method: reqwest::Method,
    path: &str,
    key: &str,
    headers: &[(&str, &str)],
    body: Option<Value>,
) -> reqwest::Response {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(key);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    if let Some(body) = body {
        req = req.json(&body);
    }
    req.send().await.expect("request sent")
}

fn etag_of(res: &reqwest::Response) -> String {
    res.headers()["etag"].to_str().unwrap().to_string()
}

#[tokio::test]
async fn a_get_answers_304_while_its_etag_is_current() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("etag-get").await;
    let (_, created) = app.post(MONITORS, &key, monitor("a")).await;
    let path = format!("{MONITORS}/{}", created["id"]);
    let get = send(&app, reqwest::Method::GET, &path, &key, &[], None).await;
    let tag = etag_of(&get);
    assert_eq!(get.status(), StatusCode::OK);

    let again = send(
        &app,
        reqwest::Method::GET,
        &path,
        &key,
        &[("If-None-Match", &tag)],
        None,
    )
    .await;
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert_eq!(etag_of(&again), tag);
    assert!(again.bytes().await.unwrap().is_empty());

    let (status, _) = app.patch(&path, &key, json!({"name": "b"})).await;
    assert_eq!(status, StatusCode::OK);
    let changed = send(
        &app,
        reqwest::Method::GET,
        &path,
        &key,
        &[("If-None-Match", &tag)],
        None,
    )
    .await;
    assert_eq!(changed.status(), StatusCode::OK, "an edit changes the tag");
    assert_ne!(etag_of(&changed), tag);
}

#[tokio::test]
async fn a_write_on_a_stale_version_is_refused_with_412_and_changes_nothing() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("etag-write").await;
    let (_, created) = app.post(MONITORS, &key, monitor("a")).await;
    let path = format!("{MONITORS}/{}", created["id"]);
    let read = send(&app, reqwest::Method::GET, &path, &key, &[], None).await;
    let tag = etag_of(&read);

    // Based on the current version: applied, and the answer carries the next.
    let first = send(
        &app,
        reqwest::Method::PATCH,
        &path,
        &key,
        &[("If-Match", &tag)],
        Some(json!({"name": "b"})),
    )
    .await;
    assert_eq!(first.status(), StatusCode::OK);
    let next = etag_of(&first);
    assert_ne!(next, tag);

    // Based on the version before: refused, naming the current one.
    let stale = send(
        &app,
        reqwest::Method::PATCH,
        &path,
        &key,
        &[("If-Match", &tag)],
        Some(json!({"name": "c"})),
    )
    .await;
    assert_eq!(stale.status(), StatusCode::PRECONDITION_FAILED);
    assert_eq!(etag_of(&stale), next);
    let body: Value = stale.json().await.unwrap();
    assert_eq!(body["details"][0]["field"], "If-Match", "{body}");
    let (_, now) = app.get(&path, &key).await;
    assert_eq!(now["name"], "b", "nothing changed");

    let stale_delete = send(
        &app,
        reqwest::Method::DELETE,
        &path,
        &key,
        &[("If-Match", &tag)],
        None,
    )
    .await;
    assert_eq!(stale_delete.status(), StatusCode::PRECONDITION_FAILED);
    let delete = send(
        &app,
        reqwest::Method::DELETE,
        &path,
        &key,
        &[("If-Match", &next)],
        None,
    )
    .await;
    assert_eq!(delete.status(), StatusCode::NO_CONTENT);

    // A write that does not honour If-Match refuses it rather than ignore it.
    let (_, other) = app.post(MONITORS, &key, monitor("d")).await;
    let pause = send(
        &app,
        reqwest::Method::DELETE,
        "/api/v1/api-keys/999999",
        &key,
        &[("If-Match", "\"x\"")],
        None,
    )
    .await;
    assert_eq!(pause.status(), StatusCode::BAD_REQUEST);
    assert!(other["id"].is_i64());
}
