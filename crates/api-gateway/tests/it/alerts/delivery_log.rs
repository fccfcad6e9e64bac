//! A contact's delivery log: newest first, and its limit.

use super::contact;
use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;
use uptime_testkit::receiver::WebhookReceiver;

#[tokio::test]
async fn the_delivery_log_lists_newest_first_and_checks_its_limit() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let hook = WebhookReceiver::start().await;
    let c = contact(&app, user, "webhook", &hook.url("/h"), true).await;
    for _ in 0..3 {
        let (status, _) = app
            .post(
                &format!("/api/v1/alert-contacts/{}/test", c.id),
                &key,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let path = format!("/api/v1/alert-contacts/{}/deliveries", c.id);
    let (_, all) = app.get(&path, &key).await;
    let created: Vec<&str> = all["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["created_at"].as_str().unwrap())
        .collect();
    assert_eq!(created.len(), 3);
    assert!(
        created.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {created:?}"
    );

    let (status, two) = app.get(&format!("{path}?limit=2"), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(two["deliveries"].as_array().unwrap().len(), 2);
    for bad in ["0", "101", "x"] {
        let (status, body) = app.get(&format!("{path}?limit={bad}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}
