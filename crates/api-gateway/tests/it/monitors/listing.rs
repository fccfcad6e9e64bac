//! The list and its pages, and who sees which monitor.

use super::{create, http_monitor, with, MONITORS};
use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn pagination_walks_every_monitor_once_in_id_order() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, other) = app.new_user("other").await;
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(
            create(
                &app,
                &key,
                with(http_monitor(), json!({"name": format!("m{i}")})),
            )
            .await["id"]
                .as_i64()
                .unwrap(),
        );
        // Another user's monitors in between must not show up.
        create(&app, &other, http_monitor()).await;
    }

    let mut seen = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => format!("{MONITORS}?limit=3"),
            Some(c) => format!("{MONITORS}?limit=3&cursor={c}"),
        };
        let (status, page) = app.get(&path, &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        pages += 1;
        let monitors = page["monitors"].as_array().unwrap();
        assert!(monitors.len() <= 3);
        seen.extend(monitors.iter().map(|m| m["id"].as_i64().unwrap()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => {
                assert!(
                    page.get("next_cursor").is_some(),
                    "next_cursor is null, not absent"
                );
                break;
            }
        }
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, created, "every monitor once, in id order");

    // Without a limit: 50 per page.
    let (_, all) = app.get(MONITORS, &key).await;
    assert_eq!(all["monitors"].as_array().unwrap().len(), 7);
    assert!(all["next_cursor"].is_null());
    // An exact fit has no next page.
    let (_, exact) = app.get(&format!("{MONITORS}?limit=7"), &key).await;
    assert_eq!(exact["monitors"].as_array().unwrap().len(), 7);
    assert!(exact["next_cursor"].is_null());
    let (status, _) = app.get(&format!("{MONITORS}?limit=100"), &key).await;
    assert_eq!(status, StatusCode::OK);

    for bad in [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=abc",
        "cursor=not-a-cursor",
        "cursor=",
    ] {
        let (status, body) = app.get(&format!("{MONITORS}?{bad}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(
            body["error"].is_string() && body["details"].is_array(),
            "{bad}: {body}"
        );
    }
}

#[tokio::test]
async fn the_default_page_holds_fifty() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for i in 0..51 {
        create(
            &app,
            &key,
            with(http_monitor(), json!({"name": format!("m{i}")})),
        )
        .await;
    }
    let (_, first) = app.get(MONITORS, &key).await;
    assert_eq!(first["monitors"].as_array().unwrap().len(), 50);
    let cursor = first["next_cursor"].as_str().expect("a second page");
    let (_, second) = app.get(&format!("{MONITORS}?cursor={cursor}"), &key).await;
    assert_eq!(second["monitors"].as_array().unwrap().len(), 1);
    assert!(second["next_cursor"].is_null());
}

#[tokio::test]
async fn users_cannot_see_or_touch_each_others_monitors() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let m = create(&app, &alice, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    for (status, body) in [
        app.get(&path, &bob).await,
        app.patch(&path, &bob, json!({"name": "mine now"})).await,
        app.patch(&path, &bob, json!({"active": false})).await,
        app.delete(&path, &bob).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, json!({"error": "not found"}));
    }
    let (_, bobs) = app.get(MONITORS, &bob).await;
    assert_eq!(bobs["monitors"], json!([]));
    let (status, got) = app.get(&path, &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, m, "untouched by bob");
}
