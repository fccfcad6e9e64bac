//! The event versions a notifier reads during a rolling upgrade
//! (docs/operations.md, message versions): the previous version as a
//! recorder of the release before published it, pinned by its example in
//! `proto-schemas/examples/`, and today's one-version-per-event publishing.

use crate::common::*;
use async_nats::jetstream;
use chrono::Utc;
use std::time::Duration;
use uptime_contracts::MonitorStatus;
use uptime_contracts::{streams, subjects, Message, StateChange};
use uptime_db::models::Monitor;
use uuid::Uuid;

const DEADLINE: Duration = Duration::from_secs(30);

/// The pinned example of `name`, about `monitor`, with a fresh event id.
fn pinned_example(name: &str, monitor: &Monitor) -> (Uuid, Vec<u8>) {
    let path = format!(
        "{}/../../proto-schemas/examples/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut example: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let event_id = Uuid::new_v4();
    example["event_id"] = event_id.to_string().into();
    example["monitor"]["id"] = monitor.id.into();
    example["monitor"]["user_id"] = monitor.org_id.into();
    (event_id, serde_json::to_vec(&example).unwrap())
}

async fn publish_raw(world: &World, subject: &str, msg_id: &str, payload: Vec<u8>) {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(async_nats::header::NATS_MESSAGE_ID, msg_id);
    world
        .js
        .publish_with_headers(subject.to_string(), headers, payload.into())
        .await
        .unwrap()
        .await
        .unwrap();
}

#[tokio::test]
async fn a_previous_version_state_change_as_pinned_is_still_delivered() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    world
        .contact(user, monitor.id, "email", "oncall@example.com", true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    // state-changed.v3 exactly as the release before published it, with no
    // v4 beside it: a recorder's v4 may have gone out before this
    // notifier's consumer existed.
    let (event_id, payload) = pinned_example("state-changed.v3", &monitor);
    publish_raw(
        &world,
        subjects::STATE_CHANGED_V3,
        &event_id.to_string(),
        payload,
    )
    .await;
    let rows = world.settled(event_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.status, "delivered", "{rows:#?}");
    assert_eq!(rows[0].0.event_type, "monitor.down");
}

#[tokio::test]
async fn todays_one_version_per_event_is_delivered_by_a_consumer_of_v4_and_v3() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    world
        .contact(user, monitor.id, "email", "oncall@example.com", true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    // The notifier's consumer reads the current and the previous version of
    // state changes and the one live version of certificate warnings.
    let mut consumer: jetstream::consumer::PullConsumer = world
        .js
        .get_stream(streams::EVENTS_STREAM)
        .await
        .unwrap()
        .get_consumer(streams::NOTIFIER_CONSUMER)
        .await
        .unwrap();
    let mut filters = consumer
        .info()
        .await
        .unwrap()
        .config
        .filter_subjects
        .clone();
    filters.sort();
    assert_eq!(
        filters,
        [
            subjects::SSL_EXPIRING_V2,
            subjects::STATE_CHANGED_V3,
            subjects::STATE_CHANGED_V4
        ]
    );

    // What a recorder publishes now: one state-changed.v4 (under an id
    // derived from the event id and its subject) and one ssl-expiring.v2.
    let now = Utc::now();
    let v2 = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, now, now);
    let v3 = StateChange::from(v2);
    let v3_id = Uuid::new_v5(&v3.event_id, StateChange::SUBJECT.as_bytes());
    world.publish_with_id(&v3_id.to_string(), &v3).await;
    let (ssl_id, ssl) = pinned_example("ssl-expiring.v2", &monitor);
    publish_raw(&world, subjects::SSL_EXPIRING_V2, &ssl_id.to_string(), ssl).await;

    let rows = world.settled(v3.event_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.event_type, "monitor.down");
    let rows = world.settled(ssl_id, 1, DEADLINE).await;
    assert_eq!(rows[0].0.event_type, "ssl.expiring");
}
