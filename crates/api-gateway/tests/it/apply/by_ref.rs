//! `PUT .../by-ref/{ref}` and the `ref` field itself.

use super::{monitors_of, put};
use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::{json, Value};

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
