//! Per-user quotas: defaults from the configuration, overrides set by the
//! operator's `set-quota` command, 403 `quota exceeded` past them, and
//! `GET /api/v1/usage`.

use crate::common::spawn_app_with;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_db::quotas::QuotaOverrides;

#[tokio::test]
async fn creating_past_a_default_quota_answers_403_naming_it() {
    let app = spawn_app_with(|s| {
        s.quotas.api_keys = 2;
        s.quotas.alert_contacts = 1;
    })
    .await;
    let (_, key) = app.new_user("ops").await;

    // The first key counts: one more fits, the third does not.
    let (status, body) = app
        .post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app
        .post("/api/v1/api-keys", &key, json!({"name": "x"}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body,
        json!({"error": "quota exceeded",
               "details": [{"field": "api_keys", "message": "at most 2 api keys per organisation"}]})
    );
    // Revoking a key frees its place.
    let id = app.get("/api/v1/api-keys", &key).await.1["api_keys"][1]["id"]
        .as_i64()
        .unwrap();
    app.delete(&format!("/api/v1/api-keys/{id}"), &key).await;
    let (status, _) = app
        .post("/api/v1/api-keys", &key, json!({"name": "y"}))
        .await;
    assert_eq!(status, StatusCode::CREATED);

    let slack = |n: &str| json!({"name": n, "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"});
    assert_eq!(
        app.post("/api/v1/alert-contacts", &key, slack("a")).await.0,
        StatusCode::CREATED
    );
    let (status, body) = app.post("/api/v1/alert-contacts", &key, slack("b")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["details"][0]["field"], "alert_contacts");
    assert_eq!(
        body["details"][0]["message"],
        "at most 1 alert contacts per organisation"
    );
    assert_eq!(
        app.get("/api/v1/alert-contacts", &key).await.1["alert_contacts"]
            .as_array()
            .unwrap()
            .len(),
        1,
        "nothing was created"
    );
}

#[tokio::test]
async fn an_operator_override_applies_to_one_organisation_only() {
    let app = spawn_app_with(|s| s.quotas.monitors = 5).await;
    let (_, key) = app.new_user("small").await;
    let (_, other) = app.new_user("normal").await;
    let (user, effective) = api_gateway::quotas::set_for_organisation(
        &app.state.pool,
        &app.state.settings.quotas,
        "small",
        &QuotaOverrides {
            monitors: Some(1),
            ..QuotaOverrides::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(user.name, "small");
    assert!(effective.contains(&("monitors", 1)), "{effective:?}");

    let monitor = json!({"name": "m", "type": "heartbeat"});
    let (status, body) = app.post("/api/v1/monitors", &key, monitor.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app.post("/api/v1/monitors", &key, monitor.clone()).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(
        body["details"],
        json!([{"field": "monitors", "message": "at most 1 monitors per organisation"}])
    );
    for _ in 0..2 {
        let (status, _) = app.post("/api/v1/monitors", &other, monitor.clone()).await;
        assert_eq!(
            status,
            StatusCode::CREATED,
            "the default still holds for others"
        );
    }

    // Raising it by id keeps the other overrides.
    let id = user.id.to_string();
    let changes = QuotaOverrides {
        monitors: Some(3),
        ..QuotaOverrides::default()
    };
    let defaults = &app.state.settings.quotas;
    api_gateway::quotas::set_for_organisation(&app.state.pool, defaults, &id, &changes)
        .await
        .unwrap();
    let (status, _) = app.post("/api/v1/monitors", &key, monitor).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(api_gateway::quotas::set_for_organisation(
        &app.state.pool,
        defaults,
        "nobody",
        &changes
    )
    .await
    .is_err());
}

#[tokio::test]
async fn concurrent_creates_cannot_overshoot_a_quota() {
    let app = spawn_app_with(|s| s.quotas.monitors = 3).await;
    let (_, key) = app.new_user("ops").await;
    let monitor = json!({"name": "m", "type": "heartbeat"});
    let answers = futures::future::join_all(
        (0..8).map(|_| app.post("/api/v1/monitors", &key, monitor.clone())),
    )
    .await;
    let created = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    assert_eq!(created, 3, "{answers:?}");
    assert!(answers
        .iter()
        .all(|(s, _)| *s == StatusCode::CREATED || *s == StatusCode::FORBIDDEN));
}

// ---------------------------------------------------------------------------
// The checks-per-minute budget (issue 19): regions × 60 / interval_secs over
// the user's active monitors; heartbeats and paused monitors cost nothing.
// ---------------------------------------------------------------------------

/// An app whose users may make `budget` checks a minute, with regions eu, us
/// and ap, the first two the default ones (a monitor naming none costs 2).
async fn spawn_with_budget(budget: i64) -> crate::common::TestApp {
    spawn_app_with(|s| {
        s.quotas.checks_per_minute = budget;
        s.regions.known = ["eu", "us", "ap"].map(String::from).to_vec();
        s.regions.default = ["eu", "us"].map(String::from).to_vec();
    })
    .await
}

fn http(regions: Option<&[&str]>, interval_secs: i64) -> Value {
    let mut monitor = json!({"name": "m", "type": "http", "target": "http://127.0.0.1:9/",
                             "interval_secs": interval_secs});
    if let Some(regions) = regions {
        monitor["regions"] = json!(regions);
    }
    monitor
}

/// The 403 a change past a budget of `limit` that would make `would` gets.
fn over_budget(limit: i64, would: &str) -> Value {
    json!({"error": "quota exceeded", "details": [{"field": "checks_per_minute",
        "message": format!("at most {limit} checks per minute per organisation; this change would make {would}")}]})
}

async fn monitor_count(app: &crate::common::TestApp, key: &str) -> usize {
    let (status, body) = app.get("/api/v1/monitors?limit=100", key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    body["monitors"].as_array().unwrap().len()
}

async fn checks_used(app: &crate::common::TestApp, key: &str) -> f64 {
    let (status, usage) = app.get("/api/v1/usage", key).await;
    assert_eq!(status, StatusCode::OK, "{usage}");
    usage["checks_per_minute"]["used"].as_f64().unwrap()
}

async fn created_id(app: &crate::common::TestApp, key: &str, monitor: Value) -> i64 {
    let (status, body) = app.post("/api/v1/monitors", key, monitor).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_i64().unwrap()
}

#[tokio::test]
async fn a_create_past_the_check_budget_answers_403_and_creates_nothing() {
    let app = spawn_with_budget(10).await;
    let (_, key) = app.new_user("ops").await;
    // The default regions (eu, us) every 20 s: 6 a minute.
    created_id(&app, &key, http(None, 20)).await;
    assert_eq!(checks_used(&app, &key).await, 6.0);

    // Three regions every 40 s: 4.5 more.
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &key,
            http(Some(&["eu", "us", "ap"]), 40),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(10, "10.5"));
    assert_eq!(monitor_count(&app, &key).await, 1, "nothing was created");

    // Costing nothing fits even at the budget: a heartbeat, a paused monitor.
    let heartbeat = json!({"name": "hb", "type": "heartbeat", "interval_secs": 10});
    created_id(&app, &key, heartbeat).await;
    let mut paused = http(Some(&["eu", "us", "ap"]), 10);
    paused["active"] = json!(false);
    created_id(&app, &key, paused).await;
    // Three regions every 60 s: 3 more, 9 in all.
    created_id(&app, &key, http(Some(&["eu", "us", "ap"]), 60)).await;
    assert_eq!(checks_used(&app, &key).await, 9.0);
}

#[tokio::test]
async fn a_bulk_create_past_the_check_budget_answers_403_and_creates_nothing() {
    let app = spawn_with_budget(10).await;
    let (_, key) = app.new_user("ops").await;
    // 6 and 5 a minute: 11.
    let batch = json!({"monitors": [http(None, 20), http(Some(&["ap"]), 12)]});
    let (status, body) = app.post("/api/v1/monitors/bulk", &key, batch).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(10, "11"));
    assert_eq!(monitor_count(&app, &key).await, 0, "nothing was created");

    // 6 and 4: exactly the budget.
    let batch = json!({"monitors": [http(None, 20), http(Some(&["ap"]), 15)]});
    let (status, body) = app.post("/api/v1/monitors/bulk", &key, batch).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(checks_used(&app, &key).await, 10.0);
}

#[tokio::test]
async fn a_change_that_raises_the_load_past_the_budget_is_refused_and_lowering_always_goes() {
    let app = spawn_with_budget(10).await;
    let (_, key) = app.new_user("ops").await;
    let a = created_id(&app, &key, http(Some(&["eu"]), 20)).await; // 3
    let b = created_id(&app, &key, http(None, 20)).await; // 6
    let mut paused = http(Some(&["eu"]), 60); // 1 once resumed
    paused["active"] = json!(false);
    let c = created_id(&app, &key, paused).await;
    let path = |id: i64| format!("/api/v1/monitors/{id}");

    // More regions: 3 → 6.
    let (status, body) = app
        .patch(&path(a), &key, json!({"regions": ["eu", "us"]}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(10, "12"));
    assert_eq!(app.get(&path(a), &key).await.1["regions"], json!(["eu"]));
    // A shorter interval: 3 → 4 fits (10), 4 → 5 does not.
    let (status, body) = app
        .patch(&path(a), &key, json!({"interval_secs": 15}))
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app
        .patch(&path(a), &key, json!({"interval_secs": 12}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(10, "11"));
    assert_eq!(app.get(&path(a), &key).await.1["interval_secs"], 15);
    // Resuming: 0 → 1.
    let (status, body) = app.patch(&path(c), &key, json!({"active": true})).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(10, "11"));
    assert_eq!(app.get(&path(c), &key).await.1["active"], false);
    assert_eq!(checks_used(&app, &key).await, 10.0);

    // The operator lowers the budget below what the user uses.
    let (_, effective) = api_gateway::quotas::set_for_organisation(
        &app.state.pool,
        &app.state.settings.quotas,
        "ops",
        &QuotaOverrides {
            checks_per_minute: Some(1),
            ..QuotaOverrides::default()
        },
    )
    .await
    .unwrap();
    assert!(
        effective.contains(&("checks_per_minute", 1)),
        "{effective:?}"
    );
    // Keeping the load (a new name), lowering it (a longer interval,
    // pausing) all go through over the budget.
    for (id, change) in [
        (a, json!({"name": "renamed"})),
        (a, json!({"interval_secs": 30})),
        (b, json!({"active": false})),
    ] {
        let (status, body) = app.patch(&path(id), &key, change.clone()).await;
        assert_eq!(status, StatusCode::OK, "{change}: {body}");
    }
    assert_eq!(checks_used(&app, &key).await, 2.0);
    // Raising it is still refused: 2 → 3.
    let (status, body) = app
        .patch(&path(a), &key, json!({"interval_secs": 20}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body, over_budget(1, "3"));
}

#[tokio::test]
async fn usage_shows_each_quota_used_and_its_limit() {
    let app = spawn_app_with(|s| {
        s.quotas.monitors = 5;
        s.quotas.checks_per_minute = 100;
        s.regions.known = ["eu", "us"].map(String::from).to_vec();
        s.regions.default = ["eu"].map(String::from).to_vec();
    })
    .await;
    let (_, key) = app.new_user("ops").await;
    let (_, other) = app.new_user("other").await;
    let usage = |monitors: i64, checks: f64, contacts: i64, keys: i64| {
        json!({"monitors": {"used": monitors, "limit": 5},
               "checks_per_minute": {"used": checks, "limit": 100},
               "alert_contacts": {"used": contacts, "limit": 200},
               "api_keys": {"used": keys, "limit": 100}})
    };
    assert_eq!(
        app.get("/api/v1/usage", &key).await,
        (StatusCode::OK, usage(0, 0.0, 0, 1))
    );

    let one = created_id(&app, &key, http(None, 60)).await; // 1
    let two = created_id(&app, &key, http(Some(&["eu", "us"]), 80)).await; // 1.5
    created_id(&app, &key, json!({"name": "hb", "type": "heartbeat"})).await;
    created_id(&app, &other, http(None, 10)).await;
    let slack =
        json!({"name": "s", "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"});
    assert_eq!(
        app.post("/api/v1/alert-contacts", &key, slack).await.0,
        StatusCode::CREATED
    );
    assert_eq!(
        app.post("/api/v1/api-keys", &key, json!({"name": "ci"}))
            .await
            .0,
        StatusCode::CREATED
    );
    assert_eq!(app.get("/api/v1/usage", &key).await.1, usage(3, 2.5, 1, 2));

    let (status, _) = app
        .patch(
            &format!("/api/v1/monitors/{two}"),
            &key,
            json!({"active": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(app.get("/api/v1/usage", &key).await.1, usage(3, 1.0, 1, 2));
    app.delete(&format!("/api/v1/monitors/{one}"), &key).await;
    assert_eq!(app.get("/api/v1/usage", &key).await.1, usage(2, 0.0, 1, 2));

    // An operator's override is the limit shown.
    api_gateway::quotas::set_for_organisation(
        &app.state.pool,
        &app.state.settings.quotas,
        "ops",
        &QuotaOverrides {
            monitors: Some(7),
            checks_per_minute: Some(3),
            ..QuotaOverrides::default()
        },
    )
    .await
    .unwrap();
    let (_, shown) = app.get("/api/v1/usage", &key).await;
    assert_eq!(shown["monitors"], json!({"used": 2, "limit": 7}));
    assert_eq!(shown["checks_per_minute"], json!({"used": 0.0, "limit": 3}));
    assert_eq!(
        app.get("/api/v1/usage", &other).await.1["checks_per_minute"]["used"],
        6.0
    );
}

#[tokio::test]
async fn concurrent_creates_and_resumes_cannot_overshoot_the_check_budget() {
    let app = spawn_with_budget(10).await;
    let (_, key) = app.new_user("ops").await;
    // 3 a minute each: three fit.
    let answers = futures::future::join_all(
        (0..8).map(|_| app.post("/api/v1/monitors", &key, http(Some(&["eu"]), 20))),
    )
    .await;
    let created = answers
        .iter()
        .filter(|(s, _)| *s == StatusCode::CREATED)
        .count();
    assert_eq!(created, 3, "{answers:?}");
    assert!(answers
        .iter()
        .all(|(s, _)| *s == StatusCode::CREATED || *s == StatusCode::FORBIDDEN));

    // 1 a minute each once resumed: one of them fits.
    let mut paused = http(Some(&["eu"]), 60);
    paused["active"] = json!(false);
    let mut paths = Vec::new();
    for _ in 0..6 {
        let id = created_id(&app, &key, paused.clone()).await;
        paths.push(format!("/api/v1/monitors/{id}"));
    }
    let answers = futures::future::join_all(
        paths
            .iter()
            .map(|path| app.patch(path, &key, json!({"active": true}))),
    )
    .await;
    let resumed = answers.iter().filter(|(s, _)| *s == StatusCode::OK).count();
    assert_eq!(resumed, 1, "{answers:?}");
    assert_eq!(checks_used(&app, &key).await, 10.0);
}
