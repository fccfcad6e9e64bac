//! A status change of a monitor checked from several regions: recorders
//! publish it once, as version 3 (with the round); a recorder of the release
//! before issue 20 also sent version 2 after it, under the same `event_id`.
//! Each contact gets one delivery, and its payload is version 3's: it names
//! the regions and what each saw.

use crate::common::*;
use async_nats::jetstream;
use chrono::{Duration as ChronoDuration, Utc};
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_contracts::{
    streams, Message, RegionOutcome, RegionSeen, Round, StateChange, StateChangedV3,
};
use uptime_db::models::Monitor;
use uptime_testkit::receiver::WebhookReceiver;
use uuid::Uuid;

const DEADLINE: Duration = Duration::from_secs(30);

/// Both versions of one change of `m` to down, failed in eu and us.
fn both_versions(m: &Monitor) -> (StateChange, StateChangedV3) {
    let now = Utc::now();
    let v2 = change(
        m,
        MonitorStatus::Up,
        MonitorStatus::Down,
        now - ChronoDuration::hours(1),
        now,
    );
    let region = |name: &str, seen, error: Option<&str>| RegionOutcome {
        region: name.into(),
        seen,
        check_id: Some(Uuid::new_v4()),
        latency_ms: Some(25),
        http_status: None,
        error: error.map(String::from),
    };
    let v3 = StateChange {
        round: Some(Round {
            round_id: v2.check.check_id,
            quorum: 2,
            regions: vec![
                region("ap", RegionSeen::Passed, None),
                region("eu", RegionSeen::Failed, Some("connection refused")),
                region("us", RegionSeen::Failed, Some("timed out after 5 s")),
            ],
            note: None,
        }),
        ..StateChange::from(v2.clone())
    };
    (v3, v2)
}

/// As the outbox of a recorder of the release before did: version 3 under
/// an id derived from the event id, then version 2 under the event id (so
/// JetStream keeps both).
async fn publish_both(world: &World, (v3, v2): &(StateChange, StateChangedV3)) {
    let derived = |subject: &str| Uuid::new_v5(&v2.event_id, subject.as_bytes()).to_string();
    world
        .publish_with_id(&derived(StateChange::SUBJECT), v3)
        .await;
    world.publish_with_id(&v2.event_id.to_string(), v2).await;
}

/// Waits until the notifier has taken and settled every event in the stream.
async fn drained(world: &World) {
    let until = tokio::time::Instant::now() + DEADLINE;
    loop {
        let mut consumer: jetstream::consumer::PullConsumer = world
            .js
            .get_stream(streams::EVENTS_STREAM)
            .await
            .expect("events stream")
            .get_consumer(streams::NOTIFIER_CONSUMER)
            .await
            .expect("notifier consumer");
        let info = consumer.info().await.expect("consumer info");
        if info.num_pending == 0 && info.num_ack_pending == 0 {
            return;
        }
        assert!(tokio::time::Instant::now() < until, "events not taken");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn assert_names_the_regions(payload: &serde_json::Value) {
    let regions: Vec<(&str, &str, Option<&str>)> = payload["round"]["regions"]
        .as_array()
        .unwrap_or_else(|| panic!("no round in {payload}"))
        .iter()
        .map(|r| {
            (
                r["region"].as_str().unwrap(),
                r["seen"].as_str().unwrap(),
                r["error"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        regions,
        [
            ("ap", "passed", None),
            ("eu", "failed", Some("connection refused")),
            ("us", "failed", Some("timed out after 5 s")),
        ]
    );
    assert_eq!(payload["round"]["quorum"], 2);
}

#[tokio::test]
async fn both_versions_in_one_batch_make_one_delivery_with_the_regions() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    let hook = WebhookReceiver::start().await;
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    let versions = both_versions(&monitor);
    // Waiting in the stream before the notifier starts: taken together.
    publish_both(&world, &versions).await;
    let _notifier = Running::start(world.settings()).await;

    let event_id = versions.1.event_id;
    let rows = world.settled(event_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.status, "delivered", "{rows:#?}");
    drained(&world).await;
    let received = hook.wait_for(1, DEADLINE).await;
    assert_eq!(received.len(), 1, "one delivery of the two versions");
    let body = received[0].json();
    assert_eq!(body["event_id"], event_id.to_string());
    assert_names_the_regions(&body);
    assert_eq!(world.deliveries_of(event_id).await.len(), 1);
}

#[tokio::test]
async fn versions_taken_one_by_one_keep_the_first_payload_the_round() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    world
        .contact(user, monitor.id, "email", "oncall@example.com", true)
        .await;
    let _notifier = Running::start(world.settings()).await;
    let (v3, v2) = both_versions(&monitor);
    let derived = |subject: &str| Uuid::new_v5(&v2.event_id, subject.as_bytes()).to_string();

    world
        .publish_with_id(&derived(StateChange::SUBJECT), &v3)
        .await;
    drained(&world).await;
    world.publish_with_id(&v2.event_id.to_string(), &v2).await;
    drained(&world).await;

    let rows = world.settled(v2.event_id, 1, DEADLINE).await;
    assert_names_the_regions(&rows[0].0.payload);
    let mails = world.smtp.wait_for(1, DEADLINE).await;
    assert_eq!(mails.len(), 1);
    let mail = mails[0].text_body();
    assert!(
        mail.contains("Failed in eu (connection refused), us (timed out after 5 s); passed in ap (25 ms); quorum 2 of 3"),
        "{mail}"
    );
}
