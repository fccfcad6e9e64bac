//! Monitoring as code: `ref` on monitors and contacts, `PUT .../by-ref/{ref}`
//! and `POST /api/v1/apply` (plan, dry run, prune, refs across kinds, all or
//! nothing, quotas of the end state).

use crate::check_support::insert_result;
use crate::common::{spawn_app, spawn_app_with, TestApp};
use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const APPLY: &str = "/api/v1/apply";

fn contact(r#ref: &str) -> Value {
    json!({"kind": "AlertContact", "ref": r#ref,
        "spec": {"name": "On call", "type": "webhook", "value": "https://hooks.example.com/oncall"}})
}

fn monitor(r#ref: &str, interval: i64) -> Value {
    json!({"kind": "Monitor", "ref": r#ref,
        "spec": {"name": format!("Monitor {}", r#ref), "type": "http",
                 "target": format!("https://{}.example.com/health", r#ref),
                 "interval_secs": interval, "alert_contact_refs": ["oncall"],
                 "labels": {"team": "payments"}}})
}

async fn apply(
    app: &TestApp,
    key: &str,
    resources: Vec<Value>,
    dry_run: bool,
    prune: bool,
) -> (StatusCode, Value) {
    app.post(
        APPLY,
        key,
        json!({"resources": resources, "dry_run": dry_run, "prune": prune}),
    )
    .await
}

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

async fn monitors_of(app: &TestApp, key: &str) -> Vec<Value> {
    let (status, page) = app.get("/api/v1/monitors?limit=100", key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["monitors"].as_array().unwrap().clone()
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

async fn put(
    app: &TestApp,
    path: &str,
    key: &str,
    body: Value,
    if_match: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    let mut req = app
        .client
        .request(Method::PUT, app.url(path))
        .bearer_auth(key)
        .json(&body);
    if let Some(tag) = if_match {
        req = req.header("If-Match", tag);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let tag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    (
        status,
        tag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn put_by_ref_creates_then_replaces_idempotently_and_honours_if_match() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let path = "/api/v1/monitors/by-ref/checkout";
    let body = json!({"name": "Checkout", "type": "http", "target": "https://checkout.example.com", "interval_secs": 120});
    let (status, first_tag, created) = put(&app, path, &key, body.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["ref"], "checkout");
    let (status, second_tag, again) = put(&app, path, &key, body.clone(), None).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["id"], created["id"]);
    assert_eq!(
        again["updated_at"], created["updated_at"],
        "nothing written"
    );
    assert_eq!(second_tag, first_tag);
    assert_eq!(monitors_of(&app, &key).await.len(), 1);

    // A replacement: fields not given go back to their defaults.
    let (status, _, replaced) = put(
        &app,
        path,
        &key,
        json!({"name": "Checkout", "type": "http", "target": "https://checkout.example.com"}),
        first_tag.as_deref(),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["interval_secs"], 300);
    let (status, _, stale) = put(&app, path, &key, body.clone(), first_tag.as_deref()).await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{stale}");
    let (status, _, _) = put(
        &app,
        "/api/v1/monitors/by-ref/nothing-yet",
        &key,
        body.clone(),
        Some("\"x\""),
    )
    .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED);
    let (status, _, other) = put(
        &app,
        path,
        &key,
        json!({"name": "x", "type": "http", "target": "https://x.example.com", "ref": "other"}),
        None,
    )
    .await;
    assert_eq!(
        (status, other["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ref"))
    );

    // Contacts too.
    let contact_path = "/api/v1/alert-contacts/by-ref/oncall";
    let contact_body =
        json!({"name": "On call", "type": "webhook", "value": "https://hooks.example.com/a"});
    let (status, tag, c1) = put(&app, contact_path, &key, contact_body.clone(), None).await;
    assert_eq!(status, StatusCode::CREATED, "{c1}");
    let (status, tag2, c2) = put(&app, contact_path, &key, contact_body, None).await;
    assert_eq!(
        (status, c2["id"].clone(), tag2),
        (StatusCode::OK, c1["id"].clone(), tag)
    );
}

#[tokio::test]
async fn a_ref_is_unique_per_kind_settable_once_and_immutable() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = |r: Option<&str>| {
        let mut body = json!({"name": "m", "type": "http", "target": "https://m.example.com"});
        if let Some(r) = r {
            body["ref"] = json!(r);
        }
        body
    };
    let (status, first) = app.post("/api/v1/monitors", &key, m(Some("shared"))).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    assert_eq!(first["ref"], "shared");
    let (status, taken) = app.post("/api/v1/monitors", &key, m(Some("shared"))).await;
    assert_eq!(
        (status, taken["details"][0]["field"].as_str()),
        (StatusCode::CONFLICT, Some("ref"))
    );
    // Another kind may use it; another organisation too.
    let (status, c) = app
        .post("/api/v1/alert-contacts", &key, json!({"name": "c", "type": "webhook", "value": "https://h.example.com", "ref": "shared"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let (_, other_key) = app.new_user("other").await;
    let (status, _) = app
        .post("/api/v1/monitors", &other_key, m(Some("shared")))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, bad) = app
        .post("/api/v1/monitors", &key, m(Some("Not-Lower")))
        .await;
    assert_eq!(
        (status, bad["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ref"))
    );

    // A hand-made monitor takes a ref by PATCH, once.
    let (_, plain) = app.post("/api/v1/monitors", &key, m(None)).await;
    assert_eq!(plain["ref"], Value::Null);
    let path = format!("/api/v1/monitors/{}", plain["id"]);
    let (status, taken) = app.patch(&path, &key, json!({"ref": "shared"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{taken}");
    let (status, set) = app.patch(&path, &key, json!({"ref": "mine"})).await;
    assert_eq!(
        (status, set["ref"].as_str()),
        (StatusCode::OK, Some("mine"))
    );
    let (status, _) = app.patch(&path, &key, json!({"ref": "mine"})).await;
    assert_eq!(status, StatusCode::OK);
    for change in [json!({"ref": "yours"}), json!({"ref": null})] {
        let (status, refused) = app.patch(&path, &key, change).await;
        assert_eq!(
            (status, refused["details"][0]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("ref"))
        );
    }
}

async fn audit_actions(app: &TestApp, key: &str) -> Vec<(String, String)> {
    crate::audit_log::entries(app, key, "?limit=100")
        .await
        .iter()
        .rev()
        // A key's first use is an entry of its own.
        .filter(|e| e["resource_kind"] != "api_key")
        .map(|e| {
            (
                e["action"].as_str().unwrap().to_string(),
                e["resource_kind"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn audited(action: &str, kind: &str) -> (String, String) {
    (action.to_string(), kind.to_string())
}

#[tokio::test]
async fn every_write_by_ref_or_apply_leaves_its_audit_entries_and_no_write_none() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let body =
        json!({"name": "Checkout", "type": "http", "target": "https://checkout.example.com"});
    let res = app
        .client
        .put(app.url("/api/v1/monitors/by-ref/checkout"))
        .bearer_auth(&key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let location = res.headers()["location"].to_str().unwrap().to_string();
    let created: Value = res.json().await.unwrap();
    assert_eq!(location, format!("/api/v1/monitors/{}", created["id"]));
    // Unchanged: no entry; replaced: one.
    put(&app, "/api/v1/monitors/by-ref/checkout", &key, body, None).await;
    let renamed =
        json!({"name": "Checkout 2", "type": "http", "target": "https://checkout.example.com"});
    let (status, _, _) = put(
        &app,
        "/api/v1/monitors/by-ref/checkout",
        &key,
        renamed,
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let contact_body = json!({"name": "c", "type": "webhook", "value": "https://h.example.com/a"});
    put(
        &app,
        "/api/v1/alert-contacts/by-ref/oncall",
        &key,
        contact_body,
        None,
    )
    .await;
    assert_eq!(
        audit_actions(&app, &key).await,
        vec![
            audited("create", "monitor"),
            audited("update", "monitor"),
            audited("create", "alert_contact")
        ]
    );

    // A dry run and a refusal: nothing; an apply: an entry per contact
    // written and per monitor updated or deleted, one for the monitors
    // created together.
    let before = audit_actions(&app, &key).await.len();
    apply(
        &app,
        &key,
        vec![monitor("a", 60), contact("oncall")],
        true,
        false,
    )
    .await;
    apply(
        &app,
        &key,
        vec![monitor("a", 5), contact("oncall")],
        false,
        false,
    )
    .await;
    assert_eq!(audit_actions(&app, &key).await.len(), before);
    let (status, _) = apply(
        &app,
        &key,
        vec![monitor("a", 60), monitor("b", 60), contact("oncall")],
        false,
        true,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let after = audit_actions(&app, &key).await;
    assert_eq!(
        after[before..].to_vec(),
        vec![
            audited("update", "alert_contact"),
            audited("bulk_create", "monitor"),
            audited("delete", "monitor")
        ]
    );
}
