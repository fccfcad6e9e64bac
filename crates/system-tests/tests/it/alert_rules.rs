//! Reminders, dependencies and flapping end to end: real targets checked by
//! a real checker, a real webhook receiver, the whole stack in between
//! (the stack lowers the reminder and flapping floors to seconds and
//! sweeps every 200 ms).

use crate::common::{check_now, marker_alert, monitor, wait_status, webhook_contact, Receiver};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::target::TargetServer;

async fn create(stack: &Stack, key: &str, body: Value) -> i64 {
    let (s, m) = stack
        .call(Method::POST, "/api/v1/monitors", key, Some(body))
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    m["id"].as_i64().unwrap()
}

/// The alerts received about monitor `id`: `(event, incident.alert)`.
fn alerts_of(receiver: &Receiver, id: i64) -> Vec<(String, String)> {
    receiver
        .bodies
        .lock()
        .unwrap()
        .iter()
        .filter(|b| b["monitor"]["id"] == id)
        .map(|b| {
            (
                b["event"].as_str().unwrap_or("").to_string(),
                b["incident"]["alert"]
                    .as_str()
                    .unwrap_or("transition")
                    .to_string(),
            )
        })
        .collect()
}

fn count(receiver: &Receiver, id: i64, alert: &str) -> usize {
    alerts_of(receiver, id)
        .iter()
        .filter(|(_, a)| a == alert)
        .count()
}

async fn incident_of(stack: &Stack, key: &str, id: i64) -> Value {
    let (_, page) = stack
        .call(
            Method::GET,
            &format!("/api/v1/incidents?monitor_id={id}"),
            key,
            None,
        )
        .await
        .unwrap();
    page["incidents"][0].clone()
}

async fn wait_for(stack: &Stack, what: &str, mut check: impl FnMut() -> bool) {
    stack
        .eventually(Duration::from_secs(30), || {
            let done = check();
            async move { done.then_some(()) }
        })
        .await
        .unwrap_or_else(|| panic!("timed out waiting for: {what}"));
}

#[tokio::test]
async fn reminders_repeat_and_stop_on_acknowledge_and_on_recovery() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let target = TargetServer::start().await;
    let body = |name: &str| {
        json!({"name": name, "type": "http", "target": target.url("/"), "interval_secs": 3600,
            "confirmation_count": 1, "reminder_interval_secs": 1,
            "alert_contact_ids": [contact["id"]]})
    };
    let acked = create(&stack, &key, body("acked")).await;
    let recovered = create(&stack, &key, body("recovered")).await;
    for id in [acked, recovered] {
        wait_status(&stack, &key, id, "up").await;
    }
    target.set_status(503);
    for id in [acked, recovered] {
        check_now(&stack, &key, id).await;
        wait_status(&stack, &key, id, "down").await;
    }
    for id in [acked, recovered] {
        wait_for(&stack, "two reminders", || {
            count(&receiver, id, "reminder") >= 2
        })
        .await;
    }
    let reminder = receiver
        .bodies
        .lock()
        .unwrap()
        .iter()
        .find(|b| b["monitor"]["id"] == acked && b["incident"]["alert"] == "reminder")
        .cloned()
        .unwrap();
    assert_eq!(reminder["event"], "monitor.down");
    assert!(reminder["incident"]["down_for_secs"].as_u64().is_some());

    // Acknowledged: its schedule stops at the next due sweep.
    let incident = incident_of(&stack, &key, acked).await;
    let (s, acknowledged) = stack
        .call(
            Method::POST,
            &format!(
                "/api/v1/incidents/{}/acknowledge",
                incident["id"].as_str().unwrap()
            ),
            &key,
            None,
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK, "{acknowledged}");
    stack
        .eventually(Duration::from_secs(30), || async {
            let i = incident_of(&stack, &key, acked).await;
            i["next_reminder_at"].is_null().then_some(i)
        })
        .await
        .expect("the acknowledged incident's reminders stop");
    // Recovered: resolved, never due again.
    target.set_status(200);
    check_now(&stack, &key, recovered).await;
    wait_status(&stack, &key, recovered, "up").await;
    // Everything raised so far has arrived; then wait out a few more sweeps.
    marker_alert(&stack, &key, &contact, &receiver).await;
    let (acked_n, recovered_n) = (
        count(&receiver, acked, "reminder"),
        count(&receiver, recovered, "reminder"),
    );
    let acked_incident = incident_of(&stack, &key, acked).await;
    assert_eq!(acked_incident["reminders_sent"], acked_n as i64);
    // A third monitor's reminders show the sweeper kept running.
    target.set_status(503);
    let canary = create(&stack, &key, body("canary")).await;
    wait_status(&stack, &key, canary, "down").await;
    wait_for(&stack, "the canary's reminders", || {
        count(&receiver, canary, "reminder") >= 2
    })
    .await;
    marker_alert(&stack, &key, &contact, &receiver).await;
    assert_eq!(count(&receiver, acked, "reminder"), acked_n);
    assert_eq!(count(&receiver, recovered, "reminder"), recovered_n);
}

#[tokio::test]
async fn a_parent_and_three_children_send_one_alert_and_children_still_down_alert_when_it_recovers()
{
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let switch = TargetServer::start().await;
    let behind = TargetServer::start().await;
    // The parent confirms after its children: they fail while it is failing.
    let parent = create(
        &stack,
        &key,
        json!({"name": "switch", "type": "http", "target": switch.url("/"), "interval_secs": 3600,
            "confirmation_count": 2, "alert_contact_ids": [contact["id"]]}),
    )
    .await;
    let mut children = Vec::new();
    for name in ["a", "b", "c"] {
        children.push(
            create(
                &stack,
                &key,
                json!({"name": name, "type": "http", "target": behind.url("/"),
                    "interval_secs": 3600, "confirmation_count": 1, "depends_on": [parent],
                    "alert_contact_ids": [contact["id"]]}),
            )
            .await,
        );
    }
    for id in children.iter().chain([&parent]) {
        wait_status(&stack, &key, *id, "up").await;
    }
    switch.set_status(503);
    behind.set_status(503);
    check_now(&stack, &key, parent).await;
    stack
        .eventually(Duration::from_secs(15), || async {
            (monitor(&stack, &key, parent).await["consecutive_failures"] == 1).then_some(())
        })
        .await
        .expect("the parent failing");
    for id in &children {
        check_now(&stack, &key, *id).await;
        wait_status(&stack, &key, *id, "down").await;
    }
    check_now(&stack, &key, parent).await;
    wait_status(&stack, &key, parent, "down").await;
    marker_alert(&stack, &key, &contact, &receiver).await;
    let downs: Vec<Value> = receiver
        .bodies
        .lock()
        .unwrap()
        .iter()
        .filter(|b| b["event"] == "monitor.down")
        .cloned()
        .collect();
    assert_eq!(downs.len(), 1, "one alert: {downs:?}");
    assert_eq!(downs[0]["monitor"]["id"], parent);
    assert_eq!(downs[0]["incident"]["held_children"], 3);
    let held = incident_of(&stack, &key, children[0]).await;
    assert_eq!(held["blocked_by"], json!([parent]));
    assert_eq!(held["alert_held"], "blocked_by_parent");

    // The switch comes back, what is behind it does not: they alert now.
    switch.set_status(200);
    check_now(&stack, &key, parent).await;
    wait_status(&stack, &key, parent, "up").await;
    for id in &children {
        wait_for(&stack, "a child's released alert", || {
            alerts_of(&receiver, *id).contains(&("monitor.down".into(), "released".into()))
        })
        .await;
    }
    marker_alert(&stack, &key, &contact, &receiver).await;
    for id in &children {
        assert_eq!(
            alerts_of(&receiver, *id),
            [
                ("monitor.up".to_string(), "transition".to_string()),
                ("monitor.down".to_string(), "released".to_string())
            ]
        );
    }
}

#[tokio::test]
async fn a_flapping_target_sends_one_flapping_alert() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let target = TargetServer::start().await;
    let id = create(
        &stack,
        &key,
        json!({"name": "flappy", "type": "http", "target": target.url("/"), "interval_secs": 3600,
            "confirmation_count": 1, "flap_threshold": 3, "flap_window_secs": 600,
            "flap_stable_secs": 5, "alert_contact_ids": [contact["id"]]}),
    )
    .await;
    wait_status(&stack, &key, id, "up").await;
    // Up (the first change), then down, up, down (the fourth: flapping),
    // up, down: held.
    for (status, expect) in [
        (503, "down"),
        (200, "up"),
        (503, "down"),
        (200, "up"),
        (503, "down"),
    ] {
        target.set_status(status);
        check_now(&stack, &key, id).await;
        wait_status(&stack, &key, id, expect).await;
    }
    assert!(!monitor(&stack, &key, id).await["flapping_since"].is_null());
    // Stable for 5 s and down: one released alert.
    wait_for(&stack, "the release after the flapping", || {
        count(&receiver, id, "released") == 1
    })
    .await;
    marker_alert(&stack, &key, &contact, &receiver).await;
    let got = alerts_of(&receiver, id);
    assert_eq!(count(&receiver, id, "flapping"), 1, "{got:?}");
    assert_eq!(
        got,
        [
            ("monitor.up".to_string(), "transition".to_string()),
            ("monitor.down".to_string(), "transition".to_string()),
            ("monitor.up".to_string(), "transition".to_string()),
            ("monitor.down".to_string(), "flapping".to_string()),
            ("monitor.down".to_string(), "released".to_string()),
        ]
    );
    assert!(monitor(&stack, &key, id).await["flapping_since"].is_null());
}
