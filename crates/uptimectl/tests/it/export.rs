//! `uptimectl export` → `apply` on an empty organisation → `export` gives
//! the same files, byte for byte, for every kind, references and secrets
//! included.

use crate::harness::{gateway, stderr, Gateway};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// Monitors and contacts made by hand through the API (no refs but one),
/// with references between them and write-only secrets.
async fn monitors_and_contacts(gw: &Gateway) {
    let hook = gw
        .post(
            "alert-contacts",
            json!({"name": "Hook", "type": "webhook", "value": "https://example.com/hook"}),
        )
        .await;
    gw.post(
        "alert-contacts",
        json!({"name": "Pager", "type": "pagerduty", "secret": "0123456789abcdef0123456789abcdef", "min_severity": "critical"}),
    )
    .await;
    let core = gw
        .post(
            "monitors",
            json!({"name": "Core switch", "type": "tcp", "target": "example.com:22", "ref": "core-switch"}),
        )
        .await;
    gw.post(
        "monitors",
        json!({"name": "Web", "type": "http", "target": "https://example.com/", "interval_secs": 60,
            "headers": [{"name": "Accept", "value": "text/html"}],
            "basic_auth": {"username": "probe", "password": "hunter2"},
            "alert_contact_ids": [hook["id"]], "depends_on": [core["id"]],
            "labels": {"team": "web", "env": "prod"}}),
    )
    .await;
    gw.post(
        "monitors",
        json!({"name": "Backup", "type": "heartbeat", "schedule": "0 3 * * *", "timezone": "Europe/Berlin", "timeout_secs": 120}),
    )
    .await;
}

/// Maintenance windows, status pages and escalation policies over
/// contacts and monitors, all made by hand (some with refs), referring to
/// each other: a policy's contacts, a monitor's policy, a window's and a
/// page's monitors.
async fn windows_pages_and_policies(gw: &Gateway) {
    let hook = gw
        .post(
            "alert-contacts",
            json!({"name": "Hook", "type": "webhook", "value": "https://example.com/hook", "ref": "hook"}),
        )
        .await;
    let mail = gw
        .post(
            "alert-contacts",
            json!({"name": "Mail", "type": "webhook", "value": "https://example.com/mail"}),
        )
        .await;
    let night = gw
        .post(
            "escalation-policies",
            json!({"name": "Night", "ref": "night",
                "steps": [{"contact_ids": [hook["id"]], "delay_secs": 300},
                          {"contact_ids": [hook["id"], mail["id"]], "delay_secs": 600}],
                "repeat_count": 1}),
        )
        .await;
    gw.post(
        "escalation-policies",
        json!({"name": "Day", "steps": [{"contact_ids": [mail["id"]], "delay_secs": 300}]}),
    )
    .await;
    let web = gw
        .post(
            "monitors",
            json!({"name": "Web", "type": "tcp", "target": "example.com:443", "labels": {"tier": "edge"}}),
        )
        .await;
    let api = gw
        .post(
            "monitors",
            json!({"name": "API", "type": "tcp", "target": "example.com:8443", "ref": "api"}),
        )
        .await;
    gw.put(
        &format!("monitors/{}/escalation-policy", api["id"]),
        json!({"escalation_policy_id": night["id"]}),
    )
    .await;
    let starts = (chrono::Utc::now() + chrono::Duration::days(1)).format("%Y-%m-%dT02:00:00Z");
    gw.post(
        "maintenance-windows",
        json!({"name": "Sunday patching", "monitor_ids": [web["id"], api["id"]], "effect": "silence",
            "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2", "timezone": "Europe/Berlin", "duration_secs": 3600,
            "starts_at": starts.to_string()}),
    )
    .await;
    gw.post(
        "maintenance-windows",
        json!({"name": "Edge by label", "label_selector": {"tier": "edge"}, "effect": "pause",
            "ref": "edge", "starts_at": starts.to_string(), "duration_minutes": 30}),
    )
    .await;
    gw.post(
        "status-pages",
        json!({"slug": "public-status", "title": "Status", "ref": "public",
            "groups": [{"name": "Site", "monitor_ids": [web["id"], api["id"]]},
                       {"name": "Edge", "selector": {"tier": "edge"}}]}),
    )
    .await;
}

fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&path).unwrap())
        })
        .collect()
}

/// Exports `source`, applies the files to a new, empty gateway (secrets
/// from the environment), checks that a plan then has nothing to do, and
/// exports again: the files of both exports, by name.
async fn round_trip(source: &Gateway) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let first = tempfile::tempdir().unwrap();
    let out = source
        .run(&["export", "--dir", first.path().to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let exported = read_dir(first.path());

    let mut secrets: Vec<(String, String)> = Vec::new();
    for text in exported.values() {
        for var in text.split("from_env: ").skip(1) {
            let var = var.split_whitespace().next().unwrap().to_string();
            // Valid for every secret field (a PagerDuty routing key is 32
            // letters and digits).
            secrets.push((var, "abcdefghijklmnopqrstuvwxyz012345".into()));
        }
    }
    let env: Vec<(&str, &str)> = secrets
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();

    let target = gateway().await;
    let applied = target
        .run_with(&["apply", "-f", first.path().to_str().unwrap()], &env)
        .await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let settled = target
        .run_with(&["plan", "-f", first.path().to_str().unwrap()], &env)
        .await;
    assert_eq!(settled.status.code(), Some(0), "{settled:?}");

    let second = tempfile::tempdir().unwrap();
    let out = target
        .run(&["export", "--dir", second.path().to_str().unwrap()])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    (exported, read_dir(second.path()))
}

#[tokio::test]
async fn export_then_apply_on_an_empty_organisation_then_export_gives_the_same_files() {
    let source = gateway().await;
    monitors_and_contacts(&source).await;
    let (exported, again) = round_trip(&source).await;
    assert_eq!(
        exported.keys().collect::<Vec<_>>(),
        ["alert-contacts.yaml", "monitors.yaml"]
    );
    let monitors = &exported["monitors.yaml"];
    for expected in [
        "ref: core-switch",
        "depends_on_refs:",
        "- core-switch",
        "alert_contact_refs:",
        "- alertcontact-",
        "from_env: UPTIME_SECRET_MONITOR_MONITOR_",
    ] {
        assert!(monitors.contains(expected), "{expected} in\n{monitors}");
    }
    for server_only in [
        "status:",
        "id:",
        "heartbeat_token:",
        "created_at:",
        "password_set:",
    ] {
        assert!(
            !monitors
                .lines()
                .any(|l| l.trim_start().starts_with(server_only)),
            "{server_only} left out:\n{monitors}"
        );
    }
    let contacts = &exported["alert-contacts.yaml"];
    assert!(!contacts.contains("0123456789abcdef"), "{contacts}");
    assert!(
        contacts.contains("from_env: UPTIME_SECRET_ALERTCONTACT_ALERTCONTACT_"),
        "{contacts}"
    );
    assert_eq!(again, exported);
}

#[tokio::test]
async fn export_round_trips_all_five_kinds_and_their_references_by_ref() {
    let source = gateway().await;
    windows_pages_and_policies(&source).await;
    let (exported, again) = round_trip(&source).await;
    assert_eq!(
        exported.keys().collect::<Vec<_>>(),
        [
            "alert-contacts.yaml",
            "escalation-policies.yaml",
            "maintenance-windows.yaml",
            "monitors.yaml",
            "status-pages.yaml"
        ]
    );
    let contains = |file: &str, expected: &[&str]| {
        let text = &exported[file];
        for expected in expected {
            assert!(text.contains(expected), "{expected} in {file}:\n{text}");
        }
        for id_form in ["monitor_ids", "contact_ids", "escalation_policy_id"] {
            assert!(!text.contains(id_form), "{id_form} in {file}:\n{text}");
        }
    };
    contains(
        "escalation-policies.yaml",
        &[
            "ref: night",
            "ref: escalationpolicy-",
            "contact_refs:",
            "- hook",
            "- alertcontact-",
        ],
    );
    contains(
        "monitors.yaml",
        &["ref: api", "escalation_policy_ref: night", "ref: monitor-"],
    );
    contains(
        "maintenance-windows.yaml",
        &["ref: edge", "monitor_refs:", "- api", "label_selector:"],
    );
    contains(
        "status-pages.yaml",
        &["ref: public", "monitor_refs:", "- api", "selector:"],
    );
    assert_eq!(again, exported);
}

#[tokio::test]
async fn export_without_a_directory_prints_every_resource_and_schema_prints_the_schema() {
    let gw = gateway().await;
    gw.create(json!({"name": "api", "type": "tcp", "target": "example.com:22"}))
        .await;
    let out = gw.run(&["export"]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("kind: Monitor"), "{text}");
    assert!(text.contains("ref: monitor-"), "{text}");

    let schema = gw.run(&["schema"]).await;
    assert_eq!(schema.status.code(), Some(0));
    let schema: serde_json::Value = serde_json::from_slice(&schema.stdout).unwrap();
    assert!(schema["$defs"]["MonitorResource"].is_object());
}
