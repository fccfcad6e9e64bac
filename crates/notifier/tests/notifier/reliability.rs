//! Each event reaches each verified contact once; failures are retried with
//! the same webhook id, given up on in time, and survive a notifier crash.

use crate::common::*;
use chrono::{Duration as ChronoDuration, Utc};
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_testkit::receiver::{Reply, WebhookReceiver};

const DEADLINE: Duration = Duration::from_secs(20);

#[tokio::test]
async fn down_then_up_reaches_every_verified_contact_once_per_change() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let first = WebhookReceiver::start().await;
    let second = WebhookReceiver::start().await;
    let unverified = WebhookReceiver::start().await;
    world
        .contact(user, monitor.id, "webhook", &first.url("/a"), true)
        .await;
    world
        .contact(user, monitor.id, "webhook", &second.url("/b"), true)
        .await;
    world
        .contact(user, monitor.id, "webhook", &unverified.url("/c"), false)
        .await;
    world
        .contact(user, monitor.id, "email", "verified@example.com", true)
        .await;
    world
        .contact(user, monitor.id, "email", "unverified@example.com", false)
        .await;
    let notifier = Running::start(world.settings()).await;

    let t0 = Utc::now();
    let down = change(
        &monitor,
        MonitorStatus::Up,
        MonitorStatus::Down,
        t0 - ChronoDuration::hours(1),
        t0,
    );
    let up = change(
        &monitor,
        MonitorStatus::Down,
        MonitorStatus::Up,
        t0,
        t0 + ChronoDuration::seconds(90),
    );
    world.publish_change(&down).await;
    // The same event again under another message id: JetStream keeps both,
    // as it would for an outbox row republished after the dedup window.
    world.publish_with_id("republished-down", &down).await;
    world.publish_change(&up).await;

    world.settled(down.event_id, 3, DEADLINE).await;
    world.settled(up.event_id, 3, DEADLINE).await;
    for receiver in [&first, &second] {
        let requests = receiver.wait_for(2, DEADLINE).await;
        let events: Vec<String> = requests
            .iter()
            .map(|r| r.json()["event"].as_str().unwrap().to_string())
            .collect();
        assert_eq!(events, ["monitor.down", "monitor.up"]);
        requests.iter().for_each(assert_signed);
    }
    let mails = world.smtp.wait_for(2, DEADLINE).await;
    let subjects: Vec<String> = mails.iter().map(|m| m.header("subject").unwrap()).collect();
    assert_eq!(subjects, ["[DOWN] API is down", "[UP] API is up"]);
    assert!(mails.iter().all(|m| m.rcpt_to == ["verified@example.com"]));

    // Nothing more can be sent once the notifier has stopped. Its intake
    // has stored every event, the republished one included: batches are
    // taken in stream order and `up`'s deliveries exist. Every delivery is
    // settled (`settled` counts them exactly, none pending), and a graceful
    // stop returns only when every send in flight has finished. So any
    // duplicate (a second delivery row, or one delivery sent twice) has
    // reached its receiver, however slowly the machine got there.
    notifier.stop().await;
    assert_eq!(first.received().len(), 2);
    assert_eq!(second.received().len(), 2);
    assert_eq!(world.smtp.received().len(), 2);
    assert!(
        unverified.received().is_empty(),
        "unverified contacts get no alerts"
    );
    assert_eq!(world.deliveries_of(down.event_id).await.len(), 3);
}

#[tokio::test]
async fn a_paused_monitor_alerts_nobody() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let paused = world.monitor(user, "Paused", false).await;
    let hook = WebhookReceiver::start().await;
    world
        .contact(user, paused.id, "webhook", &hook.url("/a"), true)
        .await;
    let active = world.monitor(user, "Active", true).await;
    world
        .contact(user, active.id, "webhook", &hook.url("/b"), true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    let now = Utc::now();
    let silent = change(&paused, MonitorStatus::Up, MonitorStatus::Down, now, now);
    let loud = change(&active, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&silent).await;
    world.publish_change(&loud).await;
    // Events are taken in order: once the second is delivered the first was handled.
    world.settled(loud.event_id, 1, DEADLINE).await;
    assert!(world.deliveries_of(silent.event_id).await.is_empty());
    let requests = hook.received();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].path, "/b");
}

#[tokio::test]
async fn an_undecodable_event_is_dead_lettered_and_the_next_one_goes_out() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let hook = WebhookReceiver::start().await;
    world
        .contact(user, monitor.id, "webhook", &hook.url("/a"), true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    world
        .js
        .publish(
            uptime_contracts::subjects::STATE_CHANGED_V3,
            "not json".into(),
        )
        .await
        .unwrap()
        .await
        .unwrap();
    let now = Utc::now();
    let good = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&good).await;
    // Events are taken in order: once the second is delivered the first was handled.
    world.settled(good.event_id, 1, DEADLINE).await;
    let dead = uptime_consumer::dead::read_all(&world.js).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason(), Some("undecodable"));
    assert_eq!(
        dead[0].original_subject(),
        Some(uptime_contracts::subjects::STATE_CHANGED_V3)
    );
    assert_eq!(dead[0].payload(), b"not json");
}

#[tokio::test]
async fn a_failing_receiver_gets_the_same_webhook_id_until_it_succeeds() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let hook = WebhookReceiver::start().await;
    hook.script([Reply::status(500), Reply::status(500)]);
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    let now = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&event).await;

    let rows = world.settled(event.event_id, 1, DEADLINE).await;
    let (delivery, attempts) = &rows[0];
    assert_eq!(delivery.status, "delivered");
    assert_eq!(delivery.attempts, 3);
    let outcomes: Vec<&str> = attempts.iter().map(|a| a.outcome.as_str()).collect();
    assert_eq!(outcomes, ["retry", "retry", "delivered"]);
    let statuses: Vec<Option<i32>> = attempts.iter().map(|a| a.http_status).collect();
    assert_eq!(statuses, [Some(500), Some(500), Some(200)]);
    assert!(
        attempts[0].error.as_deref().unwrap().contains("500"),
        "{attempts:?}"
    );

    let requests = hook.received();
    assert_eq!(requests.len(), 3);
    for req in &requests {
        assert_signed(req);
        assert_eq!(
            req.header("webhook-id"),
            Some(delivery.id.to_string().as_str())
        );
        assert_eq!(
            req.body, requests[0].body,
            "every retry sends the same body"
        );
    }
}

#[tokio::test]
async fn an_unreachable_receiver_ends_failed_after_the_give_up_time() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    // A port that refuses connections, held until the test ends.
    let refusing = uptime_testkit::refusing::RefusingPort::bind();
    let closed = refusing.port;
    world
        .contact(
            user,
            monitor.id,
            "webhook",
            &format!("http://127.0.0.1:{closed}/h"),
            true,
        )
        .await;
    let mut settings = world.settings();
    settings.notifier.give_up_after_secs = 1.0;
    let _notifier = Running::start(settings).await;

    let now = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&event).await;

    let rows = world.settled(event.event_id, 1, DEADLINE).await;
    let (delivery, attempts) = &rows[0];
    assert_eq!(delivery.status, "failed");
    assert!(
        attempts.len() >= 2,
        "retried before giving up: {attempts:?}"
    );
    assert_eq!(attempts.last().unwrap().outcome, "failed");
    assert!(attempts[..attempts.len() - 1]
        .iter()
        .all(|a| a.outcome == "retry"));
    let error = delivery.last_error.as_deref().unwrap();
    assert!(error.to_lowercase().contains("connect"), "{error}");
    assert!(attempts.iter().all(|a| a.http_status.is_none()));
}

#[tokio::test]
async fn a_client_error_fails_at_once_and_a_private_address_is_refused() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let gone = WebhookReceiver::start().await;
    gone.set_default(Reply::status(410));
    let gone_contact = world
        .contact(user, monitor.id, "webhook", &gone.url("/gone"), true)
        .await;
    let private = WebhookReceiver::start().await;
    let private_url = private
        .url("/p")
        .replace("http://127.0.0.1", "https://localhost");
    let private_contact = world
        .contact(user, monitor.id, "webhook", &private_url, true)
        .await;
    let mut settings = world.settings();
    settings.safety.allow_private_targets = false;
    let now = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);

    // First with private targets refused: both are loopback, both refused for good.
    let notifier = Running::start(settings).await;
    world.publish_change(&event).await;
    let rows = world.settled(event.event_id, 2, DEADLINE).await;
    for (d, attempts) in &rows {
        assert_eq!(d.status, "failed", "{d:?}");
        assert_eq!(attempts.len(), 1, "refused at once, not retried");
    }
    let refused = |contact_id: i64| {
        rows.iter()
            .find(|(d, _)| d.contact_id == contact_id)
            .and_then(|(d, _)| d.last_error.clone())
            .unwrap()
    };
    assert!(
        refused(private_contact.id).contains("loopback"),
        "{}",
        refused(private_contact.id)
    );
    // The delivery log is shown through the API: it names the class, never
    // the address `localhost` resolved to.
    assert!(
        !refused(private_contact.id).contains("127.0.0.1")
            && !refused(private_contact.id).contains("::1"),
        "{}",
        refused(private_contact.id)
    );
    assert!(
        refused(gone_contact.id).contains("https only"),
        "{}",
        refused(gone_contact.id)
    );
    assert!(private.received().is_empty() && gone.received().is_empty());
    notifier.stop().await;

    // Then with private targets allowed: the 410 is a permanent failure.
    // (The https URL of the plain-HTTP receiver now fails its TLS handshake,
    // a transient error: a short give-up time settles it too.)
    let mut settings = world.settings();
    settings.notifier.give_up_after_secs = 1.0;
    let _notifier = Running::start(settings).await;
    let again = change(&monitor, MonitorStatus::Down, MonitorStatus::Up, now, now);
    world.publish_change(&again).await;
    let rows = world.settled(again.event_id, 2, DEADLINE).await;
    let (d, attempts) = rows
        .iter()
        .find(|(d, _)| d.contact_id == gone_contact.id)
        .unwrap();
    assert_eq!(d.status, "failed");
    assert_eq!(attempts.len(), 1);
    assert_eq!(attempts[0].http_status, Some(410));
    assert_eq!(gone.received().len(), 1);
}

#[tokio::test]
async fn a_notifier_killed_mid_delivery_is_replaced_and_the_alert_still_arrives() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "API", true).await;
    let hook = WebhookReceiver::start().await;
    // The first request is held far longer than the test runs.
    hook.script([Reply::status(200).after(Duration::from_secs(300))]);
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    let mut settings = world.settings();
    settings.notifier.lease_secs = 2.0;
    settings.notifier.http_timeout_secs = 60.0;
    let doomed = Running::start(settings.clone()).await;

    let now = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    world.publish_change(&event).await;
    hook.wait_for(1, DEADLINE).await;
    doomed.kill().await;

    let _successor = Running::start(settings).await;
    let rows = world.settled(event.event_id, 1, DEADLINE).await;
    let (delivery, attempts) = &rows[0];
    assert_eq!(delivery.status, "delivered");
    assert_eq!(
        attempts.len(),
        1,
        "the killed attempt left no record: {attempts:?}"
    );
    let requests = hook.received();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].header("webhook-id"),
        requests[1].header("webhook-id")
    );
    assert_eq!(
        requests[1].header("webhook-id"),
        Some(delivery.id.to_string().as_str())
    );
    requests.iter().for_each(assert_signed);
}
