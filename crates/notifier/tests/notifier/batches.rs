//! Events are taken in batches: a burst (a bulk import's `pending → up`
//! events) becomes exactly one delivery per (event, verified contact) with
//! one statement per batch, events nobody is alerted about cost no delivery,
//! a redelivered batch adds nothing, one bad event does not hold back the
//! others, and one monitor's events keep their stream order.
//!
//! Every event is published before the notifier starts, so they wait in the
//! stream and are pulled in batches.

use crate::common::*;
use async_nats::jetstream;
use chrono::{Duration as ChronoDuration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashMap;
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_contracts::StateChangedV3;
use uptime_contracts::{streams, subjects};
use uptime_db::models::Monitor;
use uptime_db::schema::alert_deliveries;
use uptime_testkit::receiver::WebhookReceiver;
use uuid::Uuid;

const DEADLINE: Duration = Duration::from_secs(60);

/// Every alert delivery as `(event_id, contact_id, seq)`, in creation order.
async fn all_deliveries(world: &World) -> Vec<(Uuid, i64, i64)> {
    alert_deliveries::table
        .filter(alert_deliveries::kind.eq("alert"))
        .select((
            alert_deliveries::event_id,
            alert_deliveries::contact_id,
            alert_deliveries::seq,
        ))
        .order(alert_deliveries::seq.asc())
        .load(&mut *world.conn().await)
        .await
        .expect("load deliveries")
}

async fn consumer_info(world: &World) -> jetstream::consumer::Info {
    let mut consumer: jetstream::consumer::PullConsumer = world
        .js
        .get_stream(streams::EVENTS_STREAM)
        .await
        .expect("events stream")
        .get_consumer(streams::NOTIFIER_CONSUMER)
        .await
        .expect("notifier consumer");
    consumer.info().await.expect("consumer info").clone()
}

/// Waits until the notifier has settled every event it was sent.
async fn drained(world: &World) {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let info = consumer_info(world).await;
        if info.num_pending == 0 && info.num_ack_pending == 0 {
            return;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "events not all taken within {DEADLINE:?}: {} waiting, {} unacked",
            info.num_pending,
            info.num_ack_pending
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The value of a counter, or a histogram's `_sum` / `_count`, on this
/// process's `/metrics` (0 when absent). Each test runs in a process of its
/// own (nextest), so the values are this test's.
fn metric(name: &str) -> f64 {
    let text = uptime_telemetry::metrics_handle().render();
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .filter(|(series, _)| *series == name || series.starts_with(&format!("{name}{{")))
        .map(|(_, value)| value.trim().parse::<f64>().unwrap_or(0.0))
        .sum()
}

/// A `pending → up` change of `m`: a monitor's first result.
fn first_up(m: &Monitor) -> StateChangedV3 {
    let now = Utc::now();
    change(m, MonitorStatus::Pending, MonitorStatus::Up, now, now)
}

/// 51 monitors: 10 with a verified and an unverified contact, a paused one
/// with a verified contact, 40 with none. Returns them with how many
/// deliveries each of their events should make.
async fn fleet(world: &World, hook: &WebhookReceiver) -> Vec<(Monitor, usize)> {
    let user = world.user("bulk").await;
    let mut monitors = Vec::new();
    for i in 0..10 {
        let m = world.monitor(user, &format!("alerted {i}"), true).await;
        world
            .contact(user, m.id, "webhook", &hook.url(&format!("/{i}")), true)
            .await;
        world
            .contact(user, m.id, "email", &format!("u{i}@example.com"), false)
            .await;
        monitors.push((m, 1));
    }
    let paused = world.monitor(user, "paused", false).await;
    world
        .contact(user, paused.id, "webhook", &hook.url("/paused"), true)
        .await;
    monitors.push((paused, 0));
    for i in 0..40 {
        monitors.push((world.monitor(user, &format!("quiet {i}"), true).await, 0));
    }
    monitors
}

/// `n` first-result events spread over `fleet`, published in that order,
/// each with how many deliveries it should make.
async fn publish_burst(world: &World, fleet: &[(Monitor, usize)], n: usize) -> Vec<(Uuid, usize)> {
    let mut events = Vec::with_capacity(n);
    for i in 0..n {
        let (monitor, expected) = &fleet[i % fleet.len()];
        let event = first_up(monitor);
        world.publish_change(&event).await;
        events.push((event.event_id, *expected));
    }
    events
}

fn assert_exactly(deliveries: &[(Uuid, i64, i64)], events: &[(Uuid, usize)]) {
    let mut per_event: HashMap<Uuid, usize> = HashMap::new();
    for (event_id, _, _) in deliveries {
        *per_event.entry(*event_id).or_default() += 1;
    }
    for (event_id, expected) in events {
        assert_eq!(
            per_event.get(event_id).copied().unwrap_or(0),
            *expected,
            "deliveries of event {event_id}"
        );
    }
    let expected: usize = events.iter().map(|(_, n)| n).sum();
    assert_eq!(deliveries.len(), expected, "no delivery of another event");
}

#[tokio::test]
async fn a_burst_of_first_results_is_taken_in_batches_with_one_delivery_per_verified_contact() {
    let world = World::start().await;
    let hook = WebhookReceiver::start().await;
    let fleet = fleet(&world, &hook).await;
    let events = publish_burst(&world, &fleet, 500).await;

    let mut settings = world.settings();
    // Room for a slow machine to hand over a full batch.
    settings.notifier.batch_wait_ms = 200;
    let _notifier = Running::start(settings).await;
    drained(&world).await;

    let deliveries = all_deliveries(&world).await;
    assert_exactly(&deliveries, &events);
    // `pending → up` alerts the monitor's contacts (the contract: every
    // change to up): 500 events round-robin over 51 monitors, of which the
    // first 10 have a verified contact, make 9 × 10 + 10 deliveries.
    assert_eq!(deliveries.len(), 100);

    // Taken in batches, not one by one.
    let batches = metric("notifier_intake_batch_size_count");
    assert_eq!(metric("notifier_intake_batch_size_sum"), 500.0);
    assert!(
        (1.0..100.0).contains(&batches),
        "500 events in {batches} batches"
    );
    let silent = events.iter().filter(|(_, n)| *n == 0).count();
    assert_eq!(
        metric("alert_events_without_deliveries_total"),
        silent as f64
    );
}

#[tokio::test]
async fn a_redelivered_batch_creates_no_second_delivery() {
    let world = World::start().await;
    let hook = WebhookReceiver::start().await;
    let fleet = fleet(&world, &hook).await;
    let events = publish_burst(&world, &fleet, 300).await;
    let notifier = Running::start(world.settings()).await;
    drained(&world).await;
    let first = all_deliveries(&world).await;
    assert_exactly(&first, &events);
    notifier.stop().await;

    // The same 300 events again, as JetStream would redeliver them (or the
    // recorder's relay republish them after the dedup window).
    let now = Utc::now();
    for (i, (event_id, _)) in events.iter().enumerate() {
        let (monitor, _) = &fleet[i % fleet.len()];
        let again = StateChangedV3 {
            event_id: *event_id,
            ..change(monitor, MonitorStatus::Pending, MonitorStatus::Up, now, now)
        };
        world
            .publish_with_id(&format!("again-{event_id}"), &again)
            .await;
    }
    let _notifier = Running::start(world.settings()).await;
    drained(&world).await;
    assert_eq!(
        all_deliveries(&world).await,
        first,
        "a redelivered event made new deliveries"
    );
}

#[tokio::test]
async fn an_undecodable_event_in_a_batch_is_dead_lettered_and_the_rest_are_taken() {
    let world = World::start().await;
    let hook = WebhookReceiver::start().await;
    let fleet = fleet(&world, &hook).await;
    let mut events = publish_burst(&world, &fleet, 100).await;
    world
        .js
        .publish(subjects::STATE_CHANGED_V3, "{\"not\": \"an event\"}".into())
        .await
        .unwrap()
        .await
        .unwrap();
    events.extend(publish_burst(&world, &fleet, 100).await);

    let _notifier = Running::start(world.settings()).await;
    drained(&world).await;

    assert_exactly(&all_deliveries(&world).await, &events);
    let dead = uptime_consumer::dead::read_all(&world.js).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason(), Some("undecodable"));
    assert_eq!(dead[0].payload(), b"{\"not\": \"an event\"}");
    assert!(
        dead[0]
            .header(uptime_contracts::streams::dead::DETAIL_HEADER)
            .is_some_and(|d| d.contains("missing field")),
        "{dead:?}"
    );
}

#[tokio::test]
async fn an_event_that_cannot_be_stored_is_retried_and_holds_back_no_other() {
    let world = World::start().await;
    let hook = WebhookReceiver::start().await;
    let fleet = fleet(&world, &hook).await;
    let mut events = publish_burst(&world, &fleet, 60).await;
    // PostgreSQL refuses a NUL character in JSONB, so this event (to a
    // monitor with a contact) fails every statement it is part of.
    let (alerted, _) = &fleet[0];
    let mut poison = first_up(alerted);
    poison.monitor.name = "nul\u{0}name".into();
    world.publish_change(&poison).await;
    events.extend(publish_burst(&world, &fleet, 60).await);

    let _notifier = Running::start(world.settings()).await;
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let info = consumer_info(&world).await;
        // Everything else taken, the bad one handed back at least once.
        if info.num_pending == 0 && info.num_ack_pending == 1 && info.num_redelivered >= 1 {
            break;
        }
        assert!(
            tokio::time::Instant::now() < until,
            "{} waiting, {} unacked, {} redelivered",
            info.num_pending,
            info.num_ack_pending,
            info.num_redelivered
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_exactly(&all_deliveries(&world).await, &events);
    assert!(world.deliveries_of(poison.event_id).await.is_empty());
    // Retried (an alert given up on is lost), not dead-lettered.
    let dead = uptime_consumer::dead::read_all(&world.js).await.unwrap();
    assert!(dead.is_empty(), "{dead:?}");
}

#[tokio::test]
async fn one_monitors_events_keep_stream_order_within_and_across_batches() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let hook = WebhookReceiver::start().await;
    let flappy = world.monitor(user, "Flappy", true).await;
    let other = world.monitor(user, "Other", true).await;
    let mut contacts = Vec::new();
    for (m, path) in [(&flappy, "/a"), (&flappy, "/b"), (&other, "/c")] {
        contacts.push(
            world
                .contact(user, m.id, "webhook", &hook.url(path), true)
                .await,
        );
    }

    // 300 changes of each, interleaved: down, up, down, ...
    let t0 = Utc::now() - ChronoDuration::hours(1);
    let mut expected: HashMap<i64, Vec<Uuid>> = HashMap::new();
    for i in 0..300 {
        let (previous, status) = if i % 2 == 0 {
            (MonitorStatus::Up, MonitorStatus::Down)
        } else {
            (MonitorStatus::Down, MonitorStatus::Up)
        };
        let at = t0 + ChronoDuration::seconds(i);
        for m in [&flappy, &other] {
            let event = change(m, previous, status, at - ChronoDuration::seconds(1), at);
            world.publish_change(&event).await;
            expected.entry(m.id).or_default().push(event.event_id);
        }
    }

    let mut settings = world.settings();
    // Several batches, so order is kept across them too.
    settings.notifier.batch_size = 128;
    let _notifier = Running::start(settings).await;
    drained(&world).await;

    let deliveries = all_deliveries(&world).await;
    assert_eq!(deliveries.len(), 900);
    for contact in &contacts {
        let in_seq_order: Vec<Uuid> = deliveries
            .iter()
            .filter(|(_, c, _)| *c == contact.id)
            .map(|(e, _, _)| *e)
            .collect();
        let monitor = if contact.id == contacts[2].id {
            other.id
        } else {
            flappy.id
        };
        assert!(
            in_seq_order == expected[&monitor],
            "contact {}'s deliveries are not in stream order",
            contact.id
        );
    }
}

#[tokio::test]
async fn an_event_in_both_versions_makes_one_delivery_per_contact() {
    let world = World::start().await;
    let hook = WebhookReceiver::start().await;
    let fleet = fleet(&world, &hook).await;
    // An event in the current version (under an id derived from the event
    // id and its subject) and in the previous one (as a recorder of the
    // release before, recording the same batch during an upgrade, sends it).
    let mut events = Vec::new();
    for (monitor, expected) in &fleet {
        let v3 = first_up(monitor);
        let v4 = uptime_contracts::StateChange::from(v3.clone());
        let v4_id = uuid::Uuid::new_v5(
            &v3.event_id,
            <uptime_contracts::StateChange as uptime_contracts::Message>::SUBJECT.as_bytes(),
        );
        world.publish_with_id(&v4_id.to_string(), &v4).await;
        world.publish_change(&v3).await;
        events.push((v3.event_id, *expected));
    }
    let _notifier = Running::start(world.settings()).await;
    drained(&world).await;
    assert_exactly(&all_deliveries(&world).await, &events);
}
