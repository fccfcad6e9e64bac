//! Per-user quotas: defaults from the configuration, overrides set by the
//! operator's `set-quota` command, 403 `quota exceeded` past them.

use crate::common::spawn_app_with;
use reqwest::StatusCode;
use serde_json::json;
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
               "details": [{"field": "api_keys", "message": "at most 2 api keys per user"}]})
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
        "at most 1 alert contacts per user"
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
async fn an_operator_override_applies_to_one_user_only() {
    let app = spawn_app_with(|s| s.quotas.monitors = 5).await;
    let (_, key) = app.new_user("small").await;
    let (_, other) = app.new_user("normal").await;
    let (user, effective) = api_gateway::quotas::set_for_user(
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
        json!([{"field": "monitors", "message": "at most 1 monitors per user"}])
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
    api_gateway::quotas::set_for_user(&app.state.pool, defaults, &id, &changes)
        .await
        .unwrap();
    let (status, _) = app.post("/api/v1/monitors", &key, monitor).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(
        api_gateway::quotas::set_for_user(&app.state.pool, defaults, "nobody", &changes)
            .await
            .is_err()
    );
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
