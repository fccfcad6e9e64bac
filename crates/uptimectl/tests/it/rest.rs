//! `uptimectl get/describe/usage/check` against a real api-gateway (its own
//! database and NATS server), run as the binary a user runs.

use crate::harness::{gateway, gateway_with, stdout};
use serde_json::{json, Value};

#[tokio::test]
async fn get_lists_monitors_as_a_table_json_or_yaml_with_filters() {
    let gw = gateway().await;
    gw.create(json!({"name": "payments", "type": "http", "target": "https://example.com/pay", "labels": {"env": "prod"}}))
        .await;
    gw.create(json!({"name": "search", "type": "tcp", "target": "example.com:443"}))
        .await;

    let table = gw.run(&["get", "monitors"]).await;
    assert!(table.status.success(), "{table:?}");
    let text = stdout(&table);
    for expected in ["NAME", "payments", "search", "env=prod", "pending"] {
        assert!(text.contains(expected), "{expected} in\n{text}");
    }

    let json = gw
        .run(&["get", "monitors", "--label", "env=prod", "-o", "json"])
        .await;
    assert!(json.status.success(), "{json:?}");
    let listed: Value = serde_json::from_slice(&json.stdout).unwrap();
    let names: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["payments"]);

    let yaml = gw
        .run(&["get", "monitors", "--type", "tcp", "-o", "yaml"])
        .await;
    let listed: Value = serde_norway::from_slice(&yaml.stdout).unwrap();
    assert_eq!(listed[0]["name"], "search");

    // Paging: a limit below the count stops there; above it follows cursors.
    let one = gw
        .run(&["get", "monitors", "--limit", "1", "-o", "json"])
        .await;
    let listed: Value = serde_json::from_slice(&one.stdout).unwrap();
    assert_eq!(listed.as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn describe_and_usage_show_one_resource_and_refusals_exit_1_in_the_apis_words() {
    let gw = gateway().await;
    let id = gw
        .create(json!({"name": "api", "type": "http", "target": "https://example.com"}))
        .await;
    let out = gw
        .run(&["describe", "monitor", &id.to_string(), "-o", "json"])
        .await;
    assert!(out.status.success(), "{out:?}");
    let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(shown["id"], id);

    let usage = gw.run(&["usage", "-o", "json"]).await;
    assert!(usage.status.success(), "{usage:?}");
    let usage: Value = serde_json::from_slice(&usage.stdout).unwrap();
    assert!(usage.is_object(), "{usage}");

    let missing = gw.run(&["describe", "monitor", "999999"]).await;
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("404: not found"),
        "{missing:?}"
    );
    let bad = gw.run(&["get", "monitors", "--status", "sideways"]).await;
    assert_eq!(bad.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("status: one of"),
        "{bad:?}"
    );
}

#[tokio::test]
async fn check_queues_a_check_and_says_when_no_result_came_in_time() {
    let gw = gateway().await;
    let id = gw
        .create(json!({"name": "api", "type": "http", "target": "https://example.com"}))
        .await;
    // No checker runs here: the check is queued, and no result can come.
    let out = gw
        .run(&["check", &id.to_string(), "--timeout-secs", "0"])
        .await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no result for check"), "{stderr}");
}

#[tokio::test]
async fn completions_are_printed_for_a_shell() {
    let gw = gateway().await;
    let out = gw.run(&["completions", "bash"]).await;
    assert!(out.status.success());
    assert!(stdout(&out).contains("uptimectl"));
}

#[tokio::test]
async fn windows_pages_and_policies_are_listed_and_described_by_id_or_ref() {
    let gw = gateway().await;
    let contact = gw
        .post(
            "alert-contacts",
            json!({"name": "Hook", "type": "webhook", "value": "https://example.com/hook"}),
        )
        .await;
    let monitor = gw
        .post(
            "monitors",
            json!({"name": "api", "type": "tcp", "target": "example.com:22", "ref": "api"}),
        )
        .await;
    let policy = gw
        .post(
            "escalation-policies",
            json!({"name": "Night", "ref": "night", "steps": [{"contact_ids": [contact["id"]], "delay_secs": 300}]}),
        )
        .await;
    let starts = (chrono::Utc::now() + chrono::Duration::days(1)).format("%Y-%m-%dT02:00:00Z");
    gw.post(
        "maintenance-windows",
        json!({"name": "Patching", "ref": "patching", "monitor_ids": [monitor["id"]],
            "starts_at": starts.to_string(), "duration_minutes": 30}),
    )
    .await;
    gw.post(
        "status-pages",
        json!({"slug": "public-status", "title": "Status", "ref": "public",
            "groups": [{"name": "Site", "monitor_ids": [monitor["id"]]}]}),
    )
    .await;

    for (args, expected) in [
        (
            &["get", "maintenance-windows"][..],
            &["REF", "patching", "Patching"][..],
        ),
        (&["get", "pages"], &["SLUG", "public-status", "public"]),
        (&["get", "policies"], &["REPEAT", "Night", "night"]),
        (&["get", "monitors"], &["REF", "api"]),
    ] {
        let out = gw.run(args).await;
        assert!(out.status.success(), "{args:?}: {out:?}");
        let text = stdout(&out);
        for expected in expected {
            assert!(text.contains(expected), "{expected} in {args:?}:\n{text}");
        }
    }

    let by_id = gw
        .run(&[
            "describe",
            "policy",
            &policy["id"].to_string(),
            "-o",
            "json",
        ])
        .await;
    assert!(by_id.status.success(), "{by_id:?}");
    let shown: Value = serde_json::from_slice(&by_id.stdout).unwrap();
    assert_eq!(shown["name"], "Night");
    for (what, reference, field, value) in [
        ("escalation-policy", "night", "name", "Night"),
        ("window", "patching", "name", "Patching"),
        ("status-page", "public", "slug", "public-status"),
        ("monitor", "api", "name", "api"),
    ] {
        let out = gw.run(&["describe", what, reference, "-o", "json"]).await;
        assert!(out.status.success(), "{what} {reference}: {out:?}");
        let shown: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(shown[field], value, "{shown}");
    }
    let missing = gw.run(&["describe", "page", "nothing"]).await;
    assert_eq!(missing.status.code(), Some(1), "{missing:?}");
    assert!(
        String::from_utf8_lossy(&missing.stderr).contains("404"),
        "{missing:?}"
    );

    // A monitor's results and a check name it by ref as well.
    let results = gw.run(&["get", "results", "api", "-o", "json"]).await;
    assert!(results.status.success(), "{results:?}");
    let check = gw.run(&["check", "api", "--timeout-secs", "0"]).await;
    assert!(
        String::from_utf8_lossy(&check.stderr).contains("no result for check"),
        "{check:?}"
    );
}

/// A read refused by the rate limiter waits as `Retry-After` says and is
/// asked again (an export reads more than a bucket holds).
#[tokio::test]
async fn a_rate_limited_read_waits_and_is_asked_again() {
    let gw = gateway_with(|settings| {
        settings.rate_limit.per_second = 1;
        settings.rate_limit.burst = 1;
    })
    .await;
    let first = gw.run(&["get", "monitors", "-o", "json"]).await;
    assert!(first.status.success(), "{first:?}");
    // The bucket is empty now: without waiting this would be a 429.
    let second = gw.run(&["get", "contacts", "-o", "json"]).await;
    assert!(second.status.success(), "{second:?}");
    let listed: Value = serde_json::from_slice(&second.stdout).unwrap();
    assert_eq!(listed, json!([]));
}
