//! A contact's alerts arrive in the order their state changes happened, even
//! when the receiver is slow and the target flaps.

use crate::common::*;
use chrono::{Duration as ChronoDuration, Utc};
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_testkit::receiver::{Reply, WebhookReceiver};

const DEADLINE: Duration = Duration::from_secs(30);

#[tokio::test]
async fn a_flapping_target_alerts_a_slow_receiver_in_order() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Flappy", true).await;
    let slow = WebhookReceiver::start().await;
    // Slow enough that every later change is written while an earlier one is
    // still being sent, so the claim's ordering decides what goes next.
    slow.set_default(Reply::status(200).after(Duration::from_millis(150)));
    world
        .contact(user, monitor.id, "webhook", &slow.url("/slow"), true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    // down, up, down, up, ... eight changes a second apart.
    let t0 = Utc::now() - ChronoDuration::minutes(5);
    let mut expected = Vec::new();
    let mut previous = MonitorStatus::Up;
    for i in 0..8 {
        let status = if i % 2 == 0 {
            MonitorStatus::Down
        } else {
            MonitorStatus::Up
        };
        let at = t0 + ChronoDuration::seconds(i);
        let event = change(
            &monitor,
            previous,
            status,
            at - ChronoDuration::seconds(1),
            at,
        );
        world.publish_change(&event).await;
        expected.push(event.event_id.to_string());
        previous = status;
    }

    let requests = slow.wait_for(expected.len(), DEADLINE).await;
    let received: Vec<String> = requests
        .iter()
        .map(|r| r.json()["event_id"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(received, expected, "alerts arrived out of order");
    let kinds: Vec<String> = requests
        .iter()
        .map(|r| r.json()["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(kinds[..2], ["monitor.down", "monitor.up"]);
}
