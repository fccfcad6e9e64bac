//! Delivery leases: a notifier that dies mid-send is replaced within seconds
//! (a restarted one releases its own earlier leases), and a slow send is
//! never taken over by another notifier while it is still in progress.

use crate::common::*;
use chrono::Utc;
use std::collections::HashMap;
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_testkit::receiver::{Reply, WebhookReceiver};

const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::test]
async fn a_restarted_notifier_takes_up_its_in_flight_deliveries_at_once() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let hook = WebhookReceiver::start().await;
    // The first request to every contact is held far longer than the test
    // runs; the retries after the restart are answered at once.
    hook.set_default(Reply::status(200));
    hook.script((0..6).map(|_| Reply::status(200).after(Duration::from_secs(300))));
    let mut events = Vec::new();
    for i in 0..6 {
        let monitor = world.monitor(user, &format!("API {i}"), true).await;
        world
            .contact(
                user,
                monitor.id,
                "webhook",
                &hook.url(&format!("/h{i}")),
                true,
            )
            .await;
        let now = Utc::now();
        events.push(change(
            &monitor,
            MonitorStatus::Up,
            MonitorStatus::Down,
            now,
            now,
        ));
    }
    let mut settings = world.settings();
    settings.notifier.instance_id = "notifier-0".into();
    // A lease far longer than the test: only recognising its own leases lets
    // the restarted notifier send these again before the deadline.
    settings.notifier.lease_secs = 600.0;
    settings.notifier.http_timeout_secs = 500.0;
    let doomed = Running::start(settings.clone()).await;
    for event in &events {
        world.publish_change(event).await;
    }
    hook.wait_for(6, DEADLINE).await;
    doomed.kill().await;

    let _restarted = Running::start(settings).await;
    for event in &events {
        let rows = world.settled(event.event_id, 1, DEADLINE).await;
        assert_eq!(rows[0].0.status, "delivered", "{rows:?}");
    }
    let requests = hook.received();
    assert_eq!(
        requests.len(),
        12,
        "each alert: the killed try and one more"
    );
    let mut ids_by_path: HashMap<String, Vec<String>> = HashMap::new();
    for r in &requests {
        assert_signed(r);
        ids_by_path
            .entry(r.path.clone())
            .or_default()
            .push(r.header("webhook-id").unwrap().to_string());
    }
    for (path, ids) in &ids_by_path {
        assert_eq!(ids.len(), 2, "{path}: {ids:?}");
        assert_eq!(ids[0], ids[1], "{path}: one alert under two ids");
    }
}

#[tokio::test]
async fn a_slow_send_keeps_its_lease_and_is_sent_once() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let hook = WebhookReceiver::start().await;
    // Three times as long as the lease: only renewing it keeps the second
    // notifier from taking the delivery over and sending it again.
    hook.script([Reply::status(200).after(Duration::from_secs(3))]);
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    let mut first = world.settings();
    first.notifier.instance_id = "notifier-a".into();
    first.notifier.lease_secs = 1.0;
    first.notifier.http_timeout_secs = 10.0;
    let mut second = first.clone();
    second.notifier.instance_id = "notifier-b".into();
    let a = Running::start(first).await;

    let now = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&event).await;
    hook.wait_for(1, DEADLINE).await;
    let b = Running::start(second).await;

    let rows = world.settled(event.event_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.status, "delivered");
    // A takeover is a claim made while the first send was still going: once
    // the delivery is settled nothing pending is left to claim. A graceful
    // stop returns only when every send its notifier claimed has finished
    // (the worker joins them, a claim is never dropped between the query and
    // its send), so after these two a second request would be at the hook
    // and its attempt logged, whenever it was made.
    b.stop().await;
    a.stop().await;
    assert_eq!(hook.received().len(), 1, "sent by two notifiers");
    let rows = world.deliveries_of(event.event_id).await;
    let (delivery, attempts) = &rows[0];
    assert_eq!(delivery.status, "delivered");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
}

#[tokio::test]
async fn an_absurd_retry_after_fails_the_delivery_and_unblocks_the_contact() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let hook = WebhookReceiver::start().await;
    let mut busy = Reply::status(503);
    busy.retry_after_secs = Some(u64::MAX);
    hook.script([busy]);
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    let mut settings = world.settings();
    settings.notifier.lease_secs = 1.0;
    let _notifier = Running::start(settings).await;

    let now = Utc::now();
    let down = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    let up = change(&monitor, MonitorStatus::Down, MonitorStatus::Up, now, now);
    world.publish_change(&down).await;
    world.publish_change(&up).await;

    let rows = world.settled(down.event_id, 1, DEADLINE).await;
    let (failed, attempts) = &rows[0];
    assert_eq!(failed.status, "failed", "{rows:?}");
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    assert_eq!(attempts[0].http_status, Some(503));
    let rows = world.settled(up.event_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.status, "delivered", "the contact is not blocked");
}
