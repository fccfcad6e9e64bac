//! What an entry shows (changes, never secrets), and the list's filters,
//! pages and organisation.

use super::entries;
use crate::common::{spawn_app, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn org_of(app: &TestApp, key: &str) -> Value {
    let (_, organisation) = app.get("/api/v1/organisation", key).await;
    organisation["id"].clone()
}

#[tokio::test]
async fn secrets_never_reach_the_log_and_changes_say_before_and_after() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (_, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "hook", "type": "webhook", "value": "https://hooks.example.com/x"}),
        )
        .await;
    let secret = contact["signing_secret"].as_str().unwrap().to_string();
    let (_, created) = app
        .post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    let raw = created["key"].as_str().unwrap().to_string();
    let id = contact["id"].as_i64().unwrap();
    app.patch(
        &format!("/api/v1/alert-contacts/{id}"),
        &key,
        json!({"name": "hook 2"}),
    )
    .await;

    let log = entries(&app, &key, "").await;
    let text = serde_json::to_string(&log).unwrap();
    assert!(
        !text.contains(&secret),
        "the signing secret is logged: {text}"
    );
    assert!(!text.contains(&raw), "the raw key is logged: {text}");
    assert_eq!(
        log[0]["changes"],
        json!({"name": {"before": "hook", "after": "hook 2"}})
    );
    let contact_created = log
        .iter()
        .find(|e| e["resource_kind"] == "alert_contact" && e["action"] == "create")
        .unwrap();
    assert_eq!(
        contact_created["changes"]["signing_secret"]["after"],
        "[set]"
    );
}

#[tokio::test]
async fn the_log_filters_and_pages_newest_first_and_belongs_to_its_organisation() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (_, other) = app.new_user("other").await;
    let mut monitors = Vec::new();
    for i in 0..3 {
        let (_, m) = app
            .post(
                "/api/v1/monitors",
                &key,
                json!({"name": format!("m{i}"), "type": "heartbeat"}),
            )
            .await;
        monitors.push(m["id"].as_i64().unwrap());
    }
    app.post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    app.patch(
        &format!("/api/v1/monitors/{}", monitors[1]),
        &key,
        json!({"name": "renamed"}),
    )
    .await;

    // Five writes, and the key's first use.
    let all = entries(&app, &key, "").await;
    assert_eq!(all.len(), 6);
    assert_eq!(entries(&app, &key, "?action=use").await.len(), 1);
    let ids: Vec<i64> = all.iter().map(|e| e["id"].as_i64().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] > w[1]), "newest first: {ids:?}");
    assert_eq!(entries(&app, &key, "?resource_kind=monitor").await.len(), 4);
    assert_eq!(entries(&app, &key, "?action=update").await.len(), 1);
    assert_eq!(
        entries(
            &app,
            &key,
            &format!("?resource_kind=monitor&resource_id={}", monitors[1])
        )
        .await
        .len(),
        2
    );
    assert_eq!(entries(&app, &key, "?actor=999999").await.len(), 0);
    assert_eq!(
        entries(&app, &key, "?since=2999-01-01T00:00:00Z")
            .await
            .len(),
        0
    );
    assert_eq!(
        entries(&app, &key, "?until=2999-01-01T00:00:00Z")
            .await
            .len(),
        6
    );
    let (org, other_org) = (all[0]["org_id"].clone(), org_of(&app, &other).await);
    assert!(
        entries(&app, &other, "")
            .await
            .iter()
            .all(|e| e["org_id"] == other_org && e["org_id"] != org),
        "another organisation sees none"
    );

    // Two at a time, following the cursor, gives the same entries.
    let mut paged = Vec::new();
    let mut query = "?limit=2".to_string();
    loop {
        let (status, page) = app.get(&format!("/api/v1/audit-log{query}"), &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        paged.extend(
            page["entries"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["id"].as_i64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => query = format!("?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(paged, ids);
    let (status, _) = app.get("/api/v1/audit-log?cursor=bogus", &key).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}
