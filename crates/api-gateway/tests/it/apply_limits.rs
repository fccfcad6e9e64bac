//! Issue 35, section 5: an apply as a provider plans and applies it. An
//! apply larger than the rate-limit bucket is served when the bucket is
//! full and otherwise refused with a `Retry-After` after which it is
//! served (never a 429 for ever), and its 429 says `remaining=0` and
//! `reset` = `Retry-After`. A dry run is refused by the quotas exactly as
//! the apply would be, so a plan can warn.

use crate::common::{spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};
use std::time::Duration;

const APPLY: &str = "/api/v1/apply";

fn monitors(count: usize) -> Vec<Value> {
    (0..count)
        .map(|i| {
            json!({"kind": "Monitor", "ref": format!("m{i}"),
                "spec": {"name": format!("Monitor {i}"), "type": "http",
                         "target": format!("https://m{i}.example.com/health")}})
        })
        .collect()
}

async fn apply(app: &TestApp, key: &str, resources: &[Value], dry_run: bool) -> reqwest::Response {
    app.client
        .post(app.url(APPLY))
        .bearer_auth(key)
        .json(&json!({"resources": resources, "dry_run": dry_run}))
        .send()
        .await
        .expect("request sent")
}

fn header(res: &reqwest::Response, name: &str) -> String {
    res.headers()
        .get(name)
        .unwrap_or_else(|| panic!("no {name} in {res:?}"))
        .to_str()
        .unwrap()
        .to_string()
}

#[tokio::test]
async fn an_apply_larger_than_the_bucket_is_served_when_it_is_full_and_after_its_retry_after() {
    let app = spawn_app_with(|s| {
        s.rate_limit.per_second = 50;
        s.rate_limit.burst = 100;
    })
    .await;
    let (_, key) = app.new_user("big-apply").await;
    let set = monitors(150);

    let first = apply(&app, &key, &set, true).await;
    assert_eq!(first.status(), StatusCode::OK, "a full bucket pays for it");
    let planned: Value = first.json().await.unwrap();
    assert_eq!(planned["summary"]["create"], 150, "{planned}");

    // At once again: the bucket was emptied. Refused once, with the wait.
    let refused = apply(&app, &key, &set, false).await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    let retry_after: u64 = header(&refused, "retry-after").parse().unwrap();
    assert!(
        (1..=2).contains(&retry_after),
        "100 tokens at 50/s: {retry_after}"
    );
    assert_eq!(
        header(&refused, "ratelimit"),
        format!("limit=100, remaining=0, reset={retry_after}")
    );
    assert_eq!(header(&refused, "x-ratelimit-remaining"), "0");
    assert_eq!(
        header(&refused, "x-ratelimit-reset"),
        retry_after.to_string()
    );
    let body: Value = refused.json().await.unwrap();
    let said = body["details"][0]["message"].as_str().unwrap_or_default();
    assert!(
        said.contains("150") && said.contains("100"),
        "names the cost and the maximum: {body}"
    );

    // Waiting what it said is enough: the next try is served.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    let applied = apply(&app, &key, &set, false).await;
    assert_eq!(applied.status(), StatusCode::OK, "served after Retry-After");
    let applied: Value = applied.json().await.unwrap();
    assert_eq!(applied["applied"], true);
    assert_eq!(applied["summary"]["create"], 150, "{applied}");
}

#[tokio::test]
async fn a_dry_run_is_refused_by_the_quotas_as_the_apply_is() {
    let app = spawn_app_with(|s| s.quotas.monitors = 50).await;
    let (_, key) = app.new_user("quota-plan").await;
    let set = monitors(60);

    let planned = apply(&app, &key, &set, true).await;
    let planned_status = planned.status();
    let planned: Value = planned.json().await.unwrap();
    let applied = apply(&app, &key, &set, false).await;
    let applied_status = applied.status();
    let applied: Value = applied.json().await.unwrap();
    assert_eq!(applied_status, StatusCode::FORBIDDEN, "{applied}");
    assert_eq!(planned_status, applied_status, "the plan: {planned}");
    assert_eq!(planned, applied, "the same refusal");

    // Within the quota a dry run plans and writes nothing.
    let fits = &set[..50];
    let planned = apply(&app, &key, fits, true).await;
    assert_eq!(planned.status(), StatusCode::OK);
    let planned: Value = planned.json().await.unwrap();
    assert_eq!(planned["summary"]["create"], 50, "{planned}");
    assert!(planned["plan"][0]["id"].is_null(), "{planned}");
    let (_, listed) = app.get("/api/v1/monitors", &key).await;
    assert_eq!(listed["monitors"], json!([]), "a dry run writes nothing");
    let (_, log) = app
        .get("/api/v1/audit-log?resource_kind=monitor", &key)
        .await;
    assert_eq!(log["entries"], json!([]), "nor an audit entry");
}
