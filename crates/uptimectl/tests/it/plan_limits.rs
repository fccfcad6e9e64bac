//! Issue 35, section 5: `uptimectl plan` and `apply` of a set larger than
//! the API's rate-limit bucket (the deployment's defaults: 20 a second,
//! bursts of 100) are served, and a plan that the quotas would refuse
//! says so, as the apply would.

use crate::harness::{gateway_with, stderr, stdout, write};

/// `count` tcp monitors, one YAML document each.
fn monitors(count: usize) -> String {
    (0..count)
        .map(|i| {
            format!(
                "kind: Monitor\nref: m{i}\nspec: {{name: m{i}, type: tcp, target: 'example.com:{}'}}\n",
                1000 + i
            )
        })
        .collect::<Vec<_>>()
        .join("---\n")
}

#[tokio::test]
async fn a_plan_and_an_apply_of_150_monitors_are_served_under_the_default_rate_limit() {
    // The rate limit as deployed (the harness's default turns it off).
    let gw = gateway_with(|_| {}).await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "monitors.yaml", &monitors(150));
    let files = dir.path().to_str().unwrap();

    let planned = gw.run(&["plan", "-f", files]).await;
    assert_eq!(planned.status.code(), Some(2), "{planned:?}");
    assert!(
        stdout(&planned).contains("Plan: 150 to create, 0 to update, 0 to delete, 0 unchanged."),
        "{planned:?}"
    );
    // Its plan and then the apply: two requests of a full bucket each, the
    // second waiting out its Retry-After.
    let applied = gw.run(&["apply", "-f", files]).await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    assert!(
        stdout(&applied).contains("Applied: 150 created, 0 updated, 0 deleted, 0 unchanged."),
        "{applied:?}"
    );
    // The bucket is empty now: a read through the CLI waits its turn.
    let listed = gw.run(&["get", "monitors", "-o", "json"]).await;
    assert_eq!(listed.status.code(), Some(0), "{listed:?}");
    let listed: serde_json::Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed.as_array().map(Vec::len), Some(150), "{listed}");
}

#[tokio::test]
async fn a_plan_over_the_quota_fails_as_the_apply_would() {
    let gw = gateway_with(|s| {
        s.rate_limit.per_second = 0;
        s.quotas.monitors = 50;
    })
    .await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "monitors.yaml", &monitors(60));
    let files = dir.path().to_str().unwrap();

    let planned = gw.run(&["plan", "-f", files]).await;
    assert_eq!(planned.status.code(), Some(1), "{planned:?}");
    let said = stderr(&planned);
    assert!(
        said.contains("403") && said.contains("at most 50 monitors"),
        "the plan warns: {said}"
    );
    let applied = gw.run(&["apply", "-f", files]).await;
    assert_eq!(applied.status.code(), Some(1), "{applied:?}");
    assert_eq!(stderr(&applied), said, "the same refusal");
    assert!(gw.list("monitors", "monitors").await.is_empty());
}
