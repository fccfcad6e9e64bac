//! `POST /api/v1/apply`: the plan, dry run, prune, all or nothing, quotas.

use super::{apply, contact, monitor, monitors_of};
use crate::check_support::insert_result;
use crate::common::{spawn_app, spawn_app_with};
use chrono::{Duration, Utc};
use reqwest::StatusCode;
use serde_json::{json, Value};

fn actions(plan: &Value) -> Vec<(String, String)> {
    plan["plan"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["ref"].as_str().unwrap().to_string(),
                e["action"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pair(r: &str, a: &str) -> (String, String) {
    (r.to_string(), a.to_string())
}

#[tokio::test]
async fn an_apply_creates_the_set_and_a_second_is_all_unchanged() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let set = vec![
        monitor("payments-api", 60),
        contact("oncall"),
        monitor("web", 300),
    ];
    let (status, first) = apply(&app, &key, set.clone(), false, false).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["applied"], true);
    assert_eq!(
        first["summary"],
        json!({"create": 3, "update": 0, "unchanged": 0, "delete": 0})
    );
    assert_eq!(
        actions(&first),
        vec![
            pair("payments-api", "create"),
            pair("oncall", "create"),
            pair("web", "create")
        ]
    );
    let contact_id = first["plan"][1]["id"].as_i64().unwrap();
    let monitors = monitors_of(&app, &key).await;
    assert_eq!(monitors.len(), 2);
    for m in &monitors {
        // The ref across kinds resolved to the contact created with it.
        assert_eq!(m["alert_contact_ids"], json!([contact_id]), "{m}");
        assert!(m["ref"].is_string());
    }
    let (_, shown) = app
        .get(&format!("/api/v1/alert-contacts/{contact_id}"), &key)
        .await;
    assert_eq!(shown["ref"], "oncall");

    let (status, second) = apply(&app, &key, set, false, false).await;
    assert_eq!(status, StatusCode::OK, "{second}");
    assert_eq!(
        second["summary"],
        json!({"create": 0, "update": 0, "unchanged": 3, "delete": 0})
    );
    assert_eq!(monitors_of(&app, &key).await.len(), 2);
}

#[tokio::test]
async fn editing_one_field_updates_only_it_and_the_monitor_keeps_its_history() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (status, first) = apply(
        &app,
        &key,
        vec![contact("oncall"), monitor("api", 300)],
        false,
        false,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    let id = first["plan"][1]["id"].as_i64().unwrap();
    insert_result(
        &app.state.pool,
        id,
        Utc::now() - Duration::minutes(1),
        "up",
        "scheduled",
    )
    .await;

    let (status, plan) = apply(
        &app,
        &key,
        vec![contact("oncall"), monitor("api", 60)],
        true,
        false,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{plan}");
    assert_eq!(plan["applied"], false);
    assert_eq!(
        plan["plan"][1],
        json!({"kind": "Monitor", "ref": "api", "action": "update", "id": id,
            "changes": [{"field": "interval_secs", "before": 300, "after": 60}]})
    );
    let (_, still) = app.get(&format!("/api/v1/monitors/{id}"), &key).await;
    assert_eq!(still["interval_secs"], 300, "a dry run writes nothing");

    let (status, done) = apply(
        &app,
        &key,
        vec![contact("oncall"), monitor("api", 60)],
        false,
        false,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{done}");
    assert_eq!(done["plan"][1]["changes"], plan["plan"][1]["changes"]);
    assert_eq!(done["plan"][0]["action"], "unchanged");
    let (_, after) = app.get(&format!("/api/v1/monitors/{id}"), &key).await;
    assert_eq!(
        (after["id"].as_i64(), after["interval_secs"].as_i64()),
        (Some(id), Some(60))
    );
    let (_, results) = app
        .get(&format!("/api/v1/monitors/{id}/results"), &key)
        .await;
    assert_eq!(results["results"].as_array().unwrap().len(), 1, "{results}");
}

#[tokio::test]
async fn a_removed_resource_is_deleted_only_with_prune_and_hand_made_ones_never() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (status, hand_made) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "by hand", "type": "http", "target": "https://hand.example.com"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{hand_made}");
    let set = vec![contact("oncall"), monitor("a", 300), monitor("b", 300)];
    let (status, _) = apply(&app, &key, set, false, false).await;
    assert_eq!(status, StatusCode::OK);

    let smaller = vec![contact("oncall"), monitor("a", 300)];
    let (status, kept) = apply(&app, &key, smaller.clone(), false, false).await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    let last = kept["plan"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (
            last["ref"].as_str(),
            last["action"].as_str(),
            last["pruned"].as_bool()
        ),
        (Some("b"), Some("delete"), Some(false))
    );
    assert_eq!(
        monitors_of(&app, &key).await.len(),
        3,
        "no prune: nothing deleted"
    );

    let (status, pruned) = apply(&app, &key, smaller, false, true).await;
    assert_eq!(status, StatusCode::OK, "{pruned}");
    assert_eq!(pruned["summary"]["delete"], 1);
    assert_eq!(pruned["plan"][2]["pruned"], true);
    let names: Vec<String> = monitors_of(&app, &key)
        .await
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, vec!["by hand".to_string(), "Monitor a".to_string()]);

    // Even an empty set with prune leaves the hand-made monitor.
    let (status, emptied) = apply(&app, &key, vec![], false, true).await;
    assert_eq!(status, StatusCode::OK, "{emptied}");
    assert_eq!(emptied["summary"]["delete"], 2);
    assert_eq!(monitors_of(&app, &key).await.len(), 1);
}

#[tokio::test]
async fn an_invalid_set_fails_as_a_whole_naming_each_resource_and_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let mut bad_interval = monitor("slow", 5);
    bad_interval["spec"]["alert_contact_refs"] = json!([]);
    let set = vec![
        contact("oncall"),
        monitor("fine", 60),
        bad_interval,
        json!({"kind": "Monitor", "ref": "Bad Ref", "spec": {}}),
        monitor("fine", 60),
        json!({"kind": "Monitor", "ref": "lost", "spec": {"name": "x", "type": "http",
            "target": "https://x.example.com", "alert_contact_refs": ["nobody"]}}),
    ];
    let (status, refused) = apply(&app, &key, set, false, false).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let errors: Vec<(u64, String)> = refused["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["index"].as_u64().unwrap(),
                e["field"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        errors,
        vec![
            (2, "spec.interval_secs".to_string()),
            (3, "ref".to_string()),
            (4, "ref".to_string()),
            (5, "spec.alert_contact_refs".to_string()),
        ]
    );
    assert_eq!(refused["errors"][0]["ref"], "slow");
    assert_eq!(refused["errors"][0]["kind"], "Monitor");
    assert_eq!(
        refused["details"][0]["field"],
        "resources[2].spec.interval_secs"
    );
    assert!(monitors_of(&app, &key).await.is_empty(), "nothing written");
    let (_, contacts) = app.get("/api/v1/alert-contacts", &key).await;
    assert_eq!(contacts["alert_contacts"], json!([]));
}

#[tokio::test]
async fn an_apply_over_the_quota_writes_nothing() {
    let app = spawn_app_with(|s| s.quotas.monitors = 2).await;
    let (_, key) = app.new_user("ops").await;
    let set = vec![
        contact("oncall"),
        monitor("a", 300),
        monitor("b", 300),
        monitor("c", 300),
    ];
    let (status, refused) = apply(&app, &key, set, false, false).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{refused}");
    assert_eq!(refused["details"][0]["field"], "monitors");
    assert!(monitors_of(&app, &key).await.is_empty());
    let (_, contacts) = app.get("/api/v1/alert-contacts", &key).await;
    assert_eq!(
        contacts["alert_contacts"],
        json!([]),
        "the contact went with the rest"
    );
    // A set that fits is applied.
    let (status, _) = apply(
        &app,
        &key,
        vec![monitor("a", 300), contact("oncall")],
        false,
        false,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
}
