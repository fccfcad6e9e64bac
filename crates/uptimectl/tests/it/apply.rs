//! `uptimectl apply` and `plan` against a real api-gateway, as the binary a
//! CI job runs (no terminal): exit codes, the plan's diff, prune, and files
//! refused as a whole.

use crate::harness::{gateway, stderr, stdout, write, Gateway};
use serde_json::{json, Value};
use std::path::Path;

const CONTACTS: &str = "\
kind: AlertContact
ref: oncall
spec: {name: On call, type: webhook, value: 'https://example.com/hook'}
";

fn monitors(api_interval: u32, with_db: bool) -> String {
    let mut text = format!(
        "- kind: Monitor\n  ref: api\n  spec:\n    name: API\n    type: http\n    target: 'https://example.com/health'\n    interval_secs: {api_interval}\n    alert_contact_refs: [oncall]\n    labels: {{team: payments}}\n"
    );
    if with_db {
        text.push_str("- kind: Monitor\n  ref: db\n  spec: {name: DB, type: tcp, target: 'example.com:5432'}\n");
    }
    text
}

async fn monitors_by_ref(gw: &Gateway) -> Vec<(Option<String>, i64, Value)> {
    let mut found: Vec<_> = gw
        .list("monitors", "monitors")
        .await
        .into_iter()
        .map(|m| {
            (
                m["ref"].as_str().map(String::from),
                m["id"].as_i64().unwrap(),
                m,
            )
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    found
}

fn files(dir: &Path) -> &str {
    dir.to_str().unwrap()
}

#[tokio::test]
async fn apply_creates_a_set_a_second_plan_is_unchanged_and_an_edit_updates_only_its_field() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contacts.yaml", CONTACTS);
    write(dir.path(), "monitors.yaml", &monitors(300, true));

    let applied = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let out = stdout(&applied);
    for expected in [
        "+ AlertContact/oncall",
        "+ Monitor/api",
        "+ Monitor/db",
        "Plan: 3 to create, 0 to update, 0 to delete, 0 unchanged.",
        "Applied: 3 created, 0 updated, 0 deleted, 0 unchanged.",
    ] {
        assert!(out.contains(expected), "{expected} in\n{out}");
    }
    let contacts = gw.list("alert-contacts", "alert_contacts").await;
    let contact_id = contacts[0]["id"].as_i64().unwrap();
    let created = monitors_by_ref(&gw).await;
    assert_eq!(created.len(), 2);
    let (api_ref, api_id, api) = &created[0];
    assert_eq!(api_ref.as_deref(), Some("api"));
    assert_eq!(api["alert_contact_ids"], serde_json::json!([contact_id]));
    assert_eq!(api["interval_secs"], 300);

    let again = gw.run(&["plan", "-f", files(dir.path())]).await;
    assert_eq!(again.status.code(), Some(0), "{again:?}");
    assert!(
        stdout(&again).contains("Plan: 0 to create, 0 to update, 0 to delete, 3 unchanged."),
        "{again:?}"
    );

    write(dir.path(), "monitors.yaml", &monitors(60, true));
    let edited = gw.run(&["plan", "-f", files(dir.path())]).await;
    assert_eq!(edited.status.code(), Some(2), "{edited:?}");
    let out = stdout(&edited);
    assert!(out.contains("~ Monitor/api"), "{out}");
    let changes: Vec<&str> = out.lines().filter(|l| l.starts_with("    ")).collect();
    assert_eq!(changes, ["    interval_secs: 300 → 60"], "{out}");
    assert!(
        out.contains("Plan: 0 to create, 1 to update, 0 to delete, 2 unchanged."),
        "{out}"
    );

    let applied = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let after = monitors_by_ref(&gw).await;
    // Updated in place: the same id, so its results and incidents stay.
    assert_eq!(after[0].1, *api_id);
    assert_eq!(after[0].2["interval_secs"], 60);
    let settled = gw
        .run(&["apply", "--dry-run", "-f", files(dir.path())])
        .await;
    assert_eq!(settled.status.code(), Some(0), "{settled:?}");
}

#[tokio::test]
async fn a_removed_resource_is_deleted_only_with_prune_and_yes_and_hand_made_ones_never() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contacts.yaml", CONTACTS);
    write(dir.path(), "monitors.yaml", &monitors(300, true));
    let applied = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let hand_made = gw
        .create(serde_json::json!({"name": "by hand", "type": "tcp", "target": "example.com:22"}))
        .await;

    write(dir.path(), "monitors.yaml", &monitors(300, false));
    let kept = gw.run(&["plan", "-f", files(dir.path())]).await;
    assert_eq!(kept.status.code(), Some(0), "{kept:?}");
    assert!(stdout(&kept).contains("- Monitor/db (id"), "{kept:?}");
    assert!(
        stdout(&kept).contains("deleted only with --prune"),
        "{kept:?}"
    );

    let pruning = gw.run(&["plan", "--prune", "-f", files(dir.path())]).await;
    assert_eq!(pruning.status.code(), Some(2), "{pruning:?}");
    let out = stdout(&pruning);
    assert!(
        out.contains("Plan: 0 to create, 0 to update, 1 to delete, 2 unchanged."),
        "{out}"
    );
    assert!(!out.contains(&format!("(id {hand_made})")), "{out}");

    // No terminal to ask at and no --yes: refused, nothing deleted.
    let refused = gw.run(&["apply", "--prune", "-f", files(dir.path())]).await;
    assert_eq!(refused.status.code(), Some(1), "{refused:?}");
    assert!(stderr(&refused).contains("pass --yes"), "{refused:?}");
    assert_eq!(monitors_by_ref(&gw).await.len(), 3);

    let pruned = gw
        .run(&["apply", "--prune", "--yes", "-f", files(dir.path())])
        .await;
    assert_eq!(pruned.status.code(), Some(0), "{pruned:?}");
    let left: Vec<i64> = monitors_by_ref(&gw).await.iter().map(|m| m.1).collect();
    assert_eq!(left.len(), 2, "{left:?}");
    assert!(left.contains(&hand_made));
}

#[tokio::test]
async fn an_invalid_set_fails_as_a_whole_naming_file_resource_and_field() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "contacts.yaml", "kind: AlertContact\nref: pd\nspec: {name: PD, type: pagerduty, secret: {from_env: UPTIMECTL_TEST_UNSET_PD_KEY}}\n");
    write(
        dir.path(),
        "monitors.yaml",
        "kind: Monitor\nref: good\nspec: {name: good, type: tcp, target: 'example.com:22'}\n---\nkind: Monitor\nref: bad\nspec: {name: bad, type: tcp, target: 'example.com:22', interval_secs: 5}\n",
    );
    let out = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("2 problems in the files; nothing was sent"),
        "{err}"
    );
    assert!(
        err.contains("monitors.yaml: document 2 (Monitor/bad): spec.interval_secs:"),
        "{err}"
    );
    assert!(
        err.contains("contacts.yaml: document 1 (AlertContact/pd): spec.secret: the environment variable UPTIMECTL_TEST_UNSET_PD_KEY is not set"),
        "{err}"
    );
    assert!(gw.list("monitors", "monitors").await.is_empty());

    // What only the server can tell (a ref that names nothing) is told by
    // file and resource as well, and nothing of the set is created.
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "monitors.yaml",
        "kind: Monitor\nref: good\nspec: {name: good, type: tcp, target: 'example.com:22'}\n---\nkind: Monitor\nref: orphan\nspec: {name: orphan, type: tcp, target: 'example.com:22', alert_contact_refs: [nobody]}\n",
    );
    let out = gw.run(&["plan", "-f", files(dir.path())]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("monitors.yaml: document 2 (Monitor/orphan): spec.alert_contact_refs"),
        "{err}"
    );
    assert!(gw.list("monitors", "monitors").await.is_empty());
}

#[tokio::test]
async fn a_directory_is_merged_and_a_ref_defined_twice_names_both_files() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "team-a/contacts.yaml", CONTACTS);
    write(
        dir.path(),
        "team-a/nested/monitors.yml",
        &monitors(300, false),
    );
    write(
        dir.path(),
        "team-b/db.json",
        r#"{"resources": [{"kind": "Monitor", "ref": "db", "spec": {"name": "DB", "type": "tcp", "target": "example.com:5432"}}]}"#,
    );
    let out = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let refs: Vec<Option<String>> = monitors_by_ref(&gw)
        .await
        .into_iter()
        .map(|m| m.0)
        .collect();
    assert_eq!(refs, [Some("api".to_string()), Some("db".to_string())]);

    write(
        dir.path(),
        "team-c/db.yaml",
        "kind: Monitor\nref: db\nspec: {name: Another DB, type: tcp, target: 'example.com:5433'}\n",
    );
    let out = gw.run(&["plan", "-f", files(dir.path())]).await;
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let err = stderr(&out);
    assert!(
        err.contains("team-c/db.yaml: document 1 (Monitor/db): ref: defined twice"),
        "{err}"
    );
    assert!(err.contains("team-b/db.json: document 1, item 1"), "{err}");
}

/// The three kinds beside monitors and contacts, each naming the others
/// by ref: a policy's contacts, a monitor's policy, a window's and a
/// page's monitors.
fn linked_set(policy_delay: u32, with_window: bool) -> String {
    let starts = (chrono::Utc::now() + chrono::Duration::days(2)).format("%Y-%m-%dT03:00:00Z");
    let mut text = format!(
        "{CONTACTS}---
kind: EscalationPolicy
ref: night
spec:
  name: Night
  steps: [{{contact_refs: [oncall], delay_secs: {policy_delay}}}]
---
kind: Monitor
ref: api
spec: {{name: API, type: tcp, target: 'example.com:443', escalation_policy_ref: night}}
---
kind: StatusPage
ref: public
spec: {{slug: public-status, title: Status, groups: [{{name: Site, monitor_refs: [api]}}]}}
"
    );
    if with_window {
        text.push_str(&format!(
            "---
kind: MaintenanceWindow
ref: patching
spec: {{name: Patching, monitor_refs: [api], starts_at: '{starts}', duration_minutes: 60}}
"
        ));
    }
    text
}

#[tokio::test]
async fn policies_windows_and_pages_are_applied_by_ref_updated_in_place_and_pruned() {
    let gw = gateway().await;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "set.yaml", &linked_set(300, true));
    let applied = gw.run(&["apply", "-f", files(dir.path())]).await;
    assert_eq!(applied.status.code(), Some(0), "{applied:?}");
    let out = stdout(&applied);
    for expected in [
        "+ EscalationPolicy/night",
        "+ StatusPage/public",
        "+ MaintenanceWindow/patching",
        "Applied: 5 created, 0 updated, 0 deleted, 0 unchanged.",
    ] {
        assert!(out.contains(expected), "{expected} in\n{out}");
    }
    let monitor = &gw.list("monitors", "monitors").await[0];
    let contact = &gw.list("alert-contacts", "alert_contacts").await[0];
    let policy = &gw.list("escalation-policies", "escalation_policies").await[0];
    assert_eq!(policy["steps"][0]["contact_ids"], json!([contact["id"]]));
    let linked = gw
        .get(&format!("monitors/{}/escalation-policy", monitor["id"]))
        .await;
    assert_eq!(linked["escalation_policy_id"], policy["id"]);
    let window = &gw.list("maintenance-windows", "maintenance_windows").await[0];
    assert_eq!(window["monitor_ids"], json!([monitor["id"]]));
    let page = &gw.list("status-pages", "status_pages").await[0];
    assert_eq!(page["groups"][0]["monitor_ids"], json!([monitor["id"]]));

    write(dir.path(), "set.yaml", &linked_set(600, false));
    let planned = gw.run(&["plan", "--prune", "-f", files(dir.path())]).await;
    assert_eq!(planned.status.code(), Some(2), "{planned:?}");
    let out = stdout(&planned);
    for expected in [
        format!("~ EscalationPolicy/night (id {})", policy["id"]),
        "- MaintenanceWindow/patching (id".into(),
        "Plan: 0 to create, 1 to update, 1 to delete, 3 unchanged.".into(),
    ] {
        assert!(out.contains(&expected), "{expected} in\n{out}");
    }
    let pruned = gw
        .run(&["apply", "--prune", "--yes", "-f", files(dir.path())])
        .await;
    assert_eq!(pruned.status.code(), Some(0), "{pruned:?}");
    assert!(gw
        .list("maintenance-windows", "maintenance_windows")
        .await
        .is_empty());
    let after = &gw.list("escalation-policies", "escalation_policies").await[0];
    assert_eq!(after["id"], policy["id"], "updated in place");
    assert_eq!(after["steps"][0]["delay_secs"], 600);
}
