//! `POST /api/v1/apply` with escalation policies, maintenance windows and
//! status pages beside monitors and contacts: refs between all of them
//! resolved within one apply, plans that are unchanged the second time,
//! an edit that updates only its field, prunes of managed resources only.

use crate::common::{spawn_app, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn apply(app: &TestApp, key: &str, resources: &[Value], prune: bool) -> Value {
    let (status, plan) = app
        .post(
            "/api/v1/apply",
            key,
            json!({"resources": resources, "prune": prune}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    plan
}

fn entry<'a>(plan: &'a Value, kind: &str, r#ref: &str) -> &'a Value {
    plan["plan"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == kind && e["ref"] == r#ref)
        .unwrap_or_else(|| panic!("no {kind} {ref} in {plan}"))
}

fn changed_fields(entry: &Value) -> Vec<String> {
    entry["changes"]
        .as_array()
        .map(|changes| {
            changes
                .iter()
                .map(|c| c["field"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

/// The set: a page and a window naming a monitor, the monitor alerting
/// through a policy, the policy calling a contact; listed in the reverse
/// of the order they must be written in.
fn the_set(start: &str, end: &str) -> Vec<Value> {
    vec![
        json!({"kind": "StatusPage", "ref": "public", "spec": {"slug": "acme", "title": "Acme",
            "groups": [{"name": "API", "monitor_refs": ["api"]}]}}),
        json!({"kind": "MaintenanceWindow", "ref": "deploy", "spec": {"name": "Deploy",
            "monitor_refs": ["api"], "starts_at": start, "ends_at": end}}),
        json!({"kind": "Monitor", "ref": "api", "spec": {"name": "API", "type": "http",
            "target": "https://api.example.com/health", "escalation_policy_ref": "escalate"}}),
        json!({"kind": "EscalationPolicy", "ref": "escalate", "spec": {"name": "Escalate",
            "steps": [{"contact_refs": ["oncall"], "delay_secs": 300}]}}),
        json!({"kind": "AlertContact", "ref": "oncall", "spec": {"name": "On call",
            "type": "webhook", "value": "https://hooks.example.com/oncall"}}),
    ]
}

fn hour_from_now(days: i64, hours: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::days(days) + chrono::Duration::hours(hours))
        .format("%Y-%m-%dT%H:00:00Z")
        .to_string()
}

#[tokio::test]
async fn policies_windows_and_pages_are_applied_unchanged_edited_and_pruned() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (start, end) = (hour_from_now(1, 0), hour_from_now(1, 1));
    let set = the_set(&start, &end);

    // A dry run resolves refs to resources it would create.
    let (status, dry) = app
        .post(
            "/api/v1/apply",
            &key,
            json!({"resources": set, "dry_run": true}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{dry}");
    assert_eq!(dry["summary"]["create"], 5, "{dry}");

    let first = apply(&app, &key, &set, false).await;
    assert_eq!(
        first["summary"],
        json!({"create": 5, "update": 0, "unchanged": 0, "delete": 0}),
        "{first}"
    );
    let id = |kind: &str, r: &str| entry(&first, kind, r)["id"].as_i64().unwrap();
    let (monitor, policy, contact) = (
        id("Monitor", "api"),
        id("EscalationPolicy", "escalate"),
        id("AlertContact", "oncall"),
    );
    let (_, link) = app
        .get(
            &format!("/api/v1/monitors/{monitor}/escalation-policy"),
            &key,
        )
        .await;
    assert_eq!(link["escalation_policy_id"], policy, "{link}");
    let (_, window) = app
        .get(
            &format!(
                "/api/v1/maintenance-windows/{}",
                id("MaintenanceWindow", "deploy")
            ),
            &key,
        )
        .await;
    assert_eq!(window["monitor_ids"], json!([monitor]), "{window}");
    assert_eq!(window["ref"], "deploy");
    let (_, page) = app
        .get(
            &format!("/api/v1/status-pages/{}", id("StatusPage", "public")),
            &key,
        )
        .await;
    assert_eq!(page["groups"][0]["monitor_ids"], json!([monitor]), "{page}");
    let (_, steps) = app
        .get(&format!("/api/v1/escalation-policies/{policy}"), &key)
        .await;
    assert_eq!(
        steps["steps"][0]["contact_ids"],
        json!([contact]),
        "{steps}"
    );

    // The same set again: nothing to do.
    let second = apply(&app, &key, &set, false).await;
    assert_eq!(
        second["summary"],
        json!({"create": 0, "update": 0, "unchanged": 5, "delete": 0}),
        "{second}"
    );

    // One field each: only it changes, in place.
    let mut edited = set.clone();
    edited[0]["spec"]["title"] = json!("Acme status");
    edited[1]["spec"]["name"] = json!("Database upgrade");
    edited[3]["spec"]["repeat_count"] = json!(2);
    let third = apply(&app, &key, &edited, false).await;
    assert_eq!(third["summary"]["update"], 3, "{third}");
    assert_eq!(
        changed_fields(entry(&third, "StatusPage", "public")),
        ["title"]
    );
    assert_eq!(
        changed_fields(entry(&third, "MaintenanceWindow", "deploy")),
        ["name"]
    );
    assert_eq!(
        changed_fields(entry(&third, "EscalationPolicy", "escalate")),
        ["repeat_count"]
    );
    assert_eq!(entry(&third, "EscalationPolicy", "escalate")["id"], policy);
    assert_eq!(
        apply(&app, &key, &edited, false).await["summary"]["unchanged"],
        5
    );

    // Hand-made resources of each kind, never pruned.
    for (path, body) in [
        (
            "/api/v1/status-pages",
            json!({"slug": "hand", "title": "Hand made"}),
        ),
        (
            "/api/v1/maintenance-windows",
            json!({"name": "Hand", "monitor_ids": [monitor],
            "starts_at": start, "ends_at": end}),
        ),
        (
            "/api/v1/escalation-policies",
            json!({"name": "Hand",
            "steps": [{"contact_ids": [contact], "delay_secs": 300}]}),
        ),
    ] {
        let (status, made) = app.post(path, &key, body).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }

    // Without the page, the window and the policy (and the monitor's
    // policy): deletes planned, not done without prune.
    let mut monitor_alone = edited[2].clone();
    monitor_alone["spec"]
        .as_object_mut()
        .unwrap()
        .remove("escalation_policy_ref");
    let rest = vec![monitor_alone, edited[4].clone()];
    let listed = apply(&app, &key, &rest, false).await;
    assert_eq!(listed["summary"]["delete"], 3, "{listed}");
    for (kind, r) in [
        ("StatusPage", "public"),
        ("MaintenanceWindow", "deploy"),
        ("EscalationPolicy", "escalate"),
    ] {
        assert_eq!(entry(&listed, kind, r)["pruned"], false);
    }
    assert_eq!(
        changed_fields(entry(&listed, "Monitor", "api")),
        ["escalation_policy_id"]
    );
    let (status, _) = app
        .get("/api/v1/escalation-policies/by-ref/escalate", &key)
        .await;
    assert_eq!(status, StatusCode::OK, "not deleted without prune");

    let pruned = apply(&app, &key, &rest, true).await;
    assert_eq!(pruned["summary"]["delete"], 3, "{pruned}");
    for (collection, list) in [
        ("/api/v1/status-pages", "status_pages"),
        ("/api/v1/maintenance-windows", "maintenance_windows"),
        ("/api/v1/escalation-policies", "escalation_policies"),
    ] {
        let (_, page) = app.get(collection, &key).await;
        let left = page[list].as_array().unwrap();
        assert_eq!(left.len(), 1, "only the hand-made one is left: {page}");
        assert_eq!(left[0]["ref"], Value::Null);
    }
    assert_eq!(
        apply(&app, &key, &rest, true).await["summary"]["unchanged"],
        2
    );
}

#[tokio::test]
async fn an_invalid_resource_of_each_kind_is_named_by_index_kind_ref_and_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let set = json!({"resources": [
        {"kind": "StatusPage", "ref": "bad-page", "spec": {"slug": "Not A Slug", "title": "x"}},
        {"kind": "MaintenanceWindow", "ref": "bad-window", "spec": {"name": "x",
            "monitor_refs": ["nothing"], "duration_minutes": 30}},
        {"kind": "EscalationPolicy", "ref": "bad-policy", "spec": {"name": "x",
            "steps": [{"contact_ids": [1], "delay_secs": 1}]}},
    ]});
    let (status, refused) = app.post("/api/v1/apply", &key, set).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let errors: Vec<(u64, String, String, String)> = refused["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["index"].as_u64().unwrap(),
                e["kind"].as_str().unwrap().to_string(),
                e["ref"].as_str().unwrap().to_string(),
                e["field"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    for expected in [
        (0, "StatusPage", "bad-page", "spec.slug"),
        (1, "MaintenanceWindow", "bad-window", "spec.monitor_refs"),
        (
            2,
            "EscalationPolicy",
            "bad-policy",
            "spec.steps[0].delay_secs",
        ),
    ] {
        let wanted = (
            expected.0,
            expected.1.to_string(),
            expected.2.to_string(),
            expected.3.to_string(),
        );
        assert!(errors.contains(&wanted), "{wanted:?} in {refused}");
    }
    let (_, pages) = app.get("/api/v1/status-pages", &key).await;
    assert_eq!(pages["status_pages"], json!([]), "nothing written");
}
