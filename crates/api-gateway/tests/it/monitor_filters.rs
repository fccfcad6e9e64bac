//! The monitor list's filters: `type`, `status`, `active` and `search`,
//! with labels and pagination, all ANDed.

use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::{json, Value};

fn names(body: &Value) -> Vec<String> {
    body["monitors"]
        .as_array()
        .unwrap_or_else(|| panic!("a list: {body}"))
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn the_list_keeps_only_monitors_passing_every_filter() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("filters").await;
    let create = |body: Value| {
        let app = &app;
        let key = key.clone();
        async move {
            let (status, body) = app.post("/api/v1/monitors", &key, body).await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
            body["id"].as_i64().unwrap()
        }
    };
    create(json!({"name": "Payments API", "type": "http", "target": "https://example.com/a", "labels": {"env": "prod"}})).await;
    let paused = create(json!({"name": "payments db", "type": "tcp", "target": "example.com:5432", "labels": {"env": "prod"}})).await;
    create(json!({"name": "100% pay_roll", "type": "tcp", "target": "example.com:22"})).await;
    create(json!({"name": "nightly", "type": "heartbeat", "interval_secs": 3600})).await;
    let (status, _) = app
        .patch(
            &format!("/api/v1/monitors/{paused}"),
            &key,
            json!({"active": false}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    let list = |query: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let (status, body) = app.get(&format!("/api/v1/monitors?{query}"), &key).await;
            assert_eq!(status, StatusCode::OK, "{query}: {body}");
            names(&body)
        }
    };
    assert_eq!(list("type=tcp").await, ["payments db", "100% pay_roll"]);
    assert_eq!(list("type=tcp&active=true").await, ["100% pay_roll"]);
    assert_eq!(list("active=false").await, ["payments db"]);
    assert_eq!(
        list("search=PAYMENTS").await,
        ["Payments API", "payments db"]
    );
    // `%` and `_` are literal, not wildcards.
    assert_eq!(list("search=0%25%20pay_").await, ["100% pay_roll"]);
    assert!(
        list("search=pay_m").await.is_empty(),
        "`_` matches no character"
    );
    assert_eq!(
        list("search=pay&label=env=prod&type=http").await,
        ["Payments API"]
    );
    assert_eq!(list("status=pending").await.len(), 4, "nothing checked yet");
    assert!(list("status=down").await.is_empty());
    // Pages of a filtered list hold only what passes.
    let (_, first) = app.get("/api/v1/monitors?type=tcp&limit=1", &key).await;
    assert_eq!(names(&first), ["payments db"]);
    let cursor = first["next_cursor"].as_str().unwrap();
    let (_, second) = app
        .get(
            &format!("/api/v1/monitors?type=tcp&limit=1&cursor={cursor}"),
            &key,
        )
        .await;
    assert_eq!(names(&second), ["100% pay_roll"]);
}

#[tokio::test]
async fn bad_filters_are_400s_naming_them() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("bad-filters").await;
    for (query, field) in [
        ("type=ftp", "type"),
        ("status=sideways", "status"),
        ("active=maybe", "active"),
        ("search=", "search"),
    ] {
        let (status, body) = app.get(&format!("/api/v1/monitors?{query}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        let fields: Vec<&str> = body["details"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|d| d["field"].as_str())
            .collect();
        assert!(fields.contains(&field), "{query}: {body}");
    }
    let long = "x".repeat(101);
    let (status, _) = app
        .get(&format!("/api/v1/monitors?search={long}"), &key)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
}

#[tokio::test]
async fn the_contact_list_filters_by_type_and_name() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("contact-filters").await;
    for body in [
        json!({"name": "Ops mail", "type": "email", "value": "ops@example.com"}),
        json!({"name": "ops_chat", "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"}),
        json!({"name": "Audit hook", "type": "webhook", "value": "https://example.com/hook"}),
    ] {
        let (status, body) = app.post("/api/v1/alert-contacts", &key, body).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let list = |query: &'static str| {
        let app = &app;
        let key = key.clone();
        async move {
            let (status, body) = app
                .get(&format!("/api/v1/alert-contacts?{query}"), &key)
                .await;
            (status, body)
        }
    };
    let contact_names = |body: &Value| -> Vec<String> {
        body["alert_contacts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (_, body) = list("type=slack").await;
    assert_eq!(contact_names(&body), ["ops_chat"]);
    let (_, body) = list("search=OPS").await;
    assert_eq!(contact_names(&body), ["Ops mail", "ops_chat"]);
    let (_, body) = list("search=s_c").await;
    assert_eq!(contact_names(&body), ["ops_chat"], "`_` is literal");
    let (status, body) = list("type=carrier-pigeon").await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(body["details"][0]["field"], "type", "{body}");
}

#[tokio::test]
async fn search_ignores_case_beyond_ascii() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("unicode").await;
    for name in ["Überwachung Straße", "ÉCOLE Ωmega", "plain"] {
        let (status, body) = app
            .post(
                "/api/v1/monitors",
                &key,
                json!({"name": name, "type": "heartbeat"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = app
            .post(
                "/api/v1/alert-contacts",
                &key,
                json!({"name": name, "type": "webhook", "value": "https://example.com/hook"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    for (search, found) in [
        ("%C3%BCberwachung", "Überwachung Straße"),
        ("stra%C3%9Fe", "Überwachung Straße"),
        ("%C3%A9cole%20%CF%89", "ÉCOLE Ωmega"),
    ] {
        let expected = [found];
        let (status, body) = app
            .get(&format!("/api/v1/monitors?search={search}"), &key)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(names(&body), expected, "monitors, search={search}");
        let (status, body) = app
            .get(&format!("/api/v1/alert-contacts?search={search}"), &key)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let contacts: Vec<&str> = body["alert_contacts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
        assert_eq!(contacts, expected, "contacts, search={search}");
    }
}
