//! Deletion, and the change each write announces to the scheduler.

use super::{create, http_monitor, MONITORS};
use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn delete_answers_204_then_404() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let (status, body) = app.delete(&path, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(body.is_null(), "204 has no body: {body}");
    for (status, body) in [
        app.get(&path, &key).await,
        app.delete(&path, &key).await,
        app.patch(&path, &key, json!({"name": "x"})).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, json!({"error": "not found"}));
    }
    let (_, list) = app.get(MONITORS, &key).await;
    assert_eq!(list["monitors"], json!([]));
}

/// Every change is announced on `UPTIME_MONITORS` for the scheduler.
#[tokio::test]
async fn create_update_and_delete_publish_monitor_changed() {
    use async_nats::jetstream::consumer::pull;
    use futures::StreamExt;
    use uptime_contracts::{Message, MonitorChange, MonitorChangedV1};

    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let id = m["id"].as_i64().unwrap();
    let path = format!("{MONITORS}/{id}");
    app.patch(&path, &key, json!({"active": false})).await;
    assert_eq!(app.delete(&path, &key).await.0, StatusCode::NO_CONTENT);

    let (_client, js) = app.env.nats.jetstream().await;
    let stream = js
        .get_stream(uptime_contracts::streams::MONITORS_STREAM)
        .await
        .expect("monitors stream");
    let consumer = stream
        .create_consumer(pull::Config {
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .expect("consumer");
    let mut messages = consumer
        .fetch()
        .max_messages(10)
        .expires(std::time::Duration::from_secs(2))
        .messages()
        .await
        .expect("fetch");
    let mut changes = Vec::new();
    let mut msg_ids = Vec::new();
    while let Some(msg) = messages.next().await {
        let msg = msg.expect("message");
        assert_eq!(msg.subject.as_str(), MonitorChangedV1::SUBJECT);
        let decoded = MonitorChangedV1::from_bytes(&msg.payload).expect("decodes");
        let msg_id = msg
            .headers
            .as_ref()
            .and_then(|h| h.get(async_nats::header::NATS_MESSAGE_ID))
            .map(|v| v.as_str().to_string())
            .expect("Nats-Msg-Id");
        msg_ids.push(msg_id);
        changes.push((decoded.monitor_id, decoded.change));
    }
    assert_eq!(
        changes,
        vec![
            (id, MonitorChange::Upserted),
            (id, MonitorChange::Upserted),
            (id, MonitorChange::Deleted)
        ]
    );
    msg_ids.sort();
    msg_ids.dedup();
    assert_eq!(msg_ids.len(), 3, "each change has its own message id");
}
