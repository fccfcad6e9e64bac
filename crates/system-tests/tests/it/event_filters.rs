//! What each contact receives: the kinds of alerts it asked for, from the
//! least severity it asked for. A filtered-out alert makes no delivery.

use crate::common::{check_now, wait_status, webhook_contact, Receiver};
use reqwest::{Method, StatusCode};
use serde_json::json;
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::target::TargetServer;

/// The event types of the deliveries made for `contact_id`, oldest first.
async fn delivered_types(stack: &Stack, contact_id: i64) -> Vec<String> {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::alert_deliveries;
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await.unwrap();
    alert_deliveries::table
        .filter(alert_deliveries::contact_id.eq(contact_id))
        .order(alert_deliveries::seq.asc())
        .select(alert_deliveries::event_type)
        .load(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn a_contact_gets_only_the_kinds_and_severities_it_asked_for() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let target = TargetServer::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let everything = webhook_contact(&stack, &key, &receiver.url).await;
    let filtered = |body: serde_json::Value| {
        let stack = &stack;
        let key = &key;
        async move {
            let (s, c) = stack
                .call(Method::POST, "/api/v1/alert-contacts", key, Some(body))
                .await
                .unwrap();
            assert_eq!(s, StatusCode::CREATED, "{c}");
            c
        }
    };
    let downs_only = filtered(json!({"name": "downs", "type": "webhook",
        "value": receiver.url, "events": ["down"]}))
    .await;
    assert_eq!(downs_only["events"], json!(["down"]));
    let critical_only = filtered(json!({"name": "critical", "type": "webhook",
        "value": receiver.url, "min_severity": "critical"}))
    .await;
    assert_eq!(critical_only["min_severity"], "critical");
    assert_eq!(critical_only["events"], serde_json::Value::Null);

    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(
                json!({"name": "shop", "type": "http", "target": target.url("/"),
                "interval_secs": 3600, "confirmation_count": 1,
                "alert_contact_ids": [everything["id"], downs_only["id"], critical_only["id"]]}),
            ),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;
    target.set_status(503);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;
    target.set_status(200);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "up").await;

    // Every contact's deliveries of an event are written by one statement,
    // so once the unfiltered contact has all three, the others have theirs.
    let all = ["monitor.up", "monitor.down", "monitor.up"];
    stack
        .eventually(Duration::from_secs(30), || async {
            (delivered_types(&stack, everything["id"].as_i64().unwrap()).await == all).then_some(())
        })
        .await
        .expect("the unfiltered contact is told of every change");
    assert_eq!(
        delivered_types(&stack, downs_only["id"].as_i64().unwrap()).await,
        ["monitor.down"]
    );
    // The first `up` is info; the outage and its recovery are critical.
    assert_eq!(
        delivered_types(&stack, critical_only["id"].as_i64().unwrap()).await,
        ["monitor.down", "monitor.up"]
    );
}
