//! Crashes between the steps of a batch lose nothing and duplicate nothing.

use crate::common::{result, state_changed_subject, Harness};
use async_nats::jetstream;
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use std::collections::HashSet;
use uptime_contracts::{streams, CheckOutcome, CheckResultV1, Message, MonitorStatus};
use uptime_db::schema::outbox_events;
use uuid::Uuid;

#[tokio::test]
async fn the_relay_publishes_events_left_unpublished() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let event_id = Uuid::new_v4();
    let payload = serde_json::json!({"event_id": event_id, "stranded": true});
    // As a recorder that crashed after COMMIT and before publishing leaves it.
    diesel::insert_into(outbox_events::table)
        .values((
            outbox_events::id.eq(event_id),
            outbox_events::monitor_id.eq(id),
            outbox_events::subject.eq(state_changed_subject()),
            outbox_events::payload.eq(&payload),
            outbox_events::created_at.eq(Utc::now() - Duration::minutes(1)),
        ))
        .execute(&mut h.conn().await)
        .await
        .unwrap();

    let events = h.events(state_changed_subject()).await;
    assert_eq!(events, vec![payload]);
    let published_at: Option<chrono::DateTime<Utc>> = outbox_events::table
        .find(event_id)
        .select(outbox_events::published_at)
        .first(&mut h.conn().await)
        .await
        .unwrap();
    assert!(published_at.is_some());
}

#[tokio::test]
async fn a_crash_after_commit_and_before_ack_stores_each_result_once() {
    let mut h = Harness::new().await;
    let id = h.monitor(|m| m.confirmation_count = 1).await;
    let t0 = Utc::now() - Duration::minutes(5);
    let results: Vec<CheckResultV1> = (0..20)
        .map(|i| {
            let outcome = if i < 10 {
                CheckOutcome::Pass
            } else {
                CheckOutcome::Fail
            };
            result(id, t0 + Duration::seconds(i), outcome)
        })
        .collect();
    for r in &results {
        h.publish(r).await;
    }

    // A first recorder takes the batch from the durable consumer and commits
    // it, then dies: no publish of its events, no ack.
    let settings = h.settings();
    let consumer: jetstream::consumer::PullConsumer =
        h.js.get_stream(streams::RESULTS_STREAM)
            .await
            .unwrap()
            .get_or_create_consumer(
                streams::RECORDER_CONSUMER,
                streams::durable_pull(streams::RECORDER_CONSUMER, settings.recorder.ack_wait(), -1),
            )
            .await
            .unwrap();
    let mut taken: Vec<recorder::store::Incoming> = Vec::new();
    let mut batch = consumer.fetch().max_messages(100).messages().await.unwrap();
    while let Some(msg) = batch.next().await {
        taken.push(
            CheckResultV1::from_bytes(&msg.unwrap().payload)
                .unwrap()
                .into(),
        );
    }
    assert_eq!(taken.len(), results.len());
    let committed = recorder::store::record_batch(&h.env.db.pool, &taken, Utc::now())
        .await
        .unwrap();
    assert_eq!(committed.inserted, 20);
    // pending→up, up→down, each as state-changed v3, v2 and v1.
    assert_eq!(committed.events.len(), 6, "{:?}", committed.events);

    // The replacement gets every message again once the ack wait runs out.
    h.start_recorder().await;
    h.wait_drained().await;

    let stored = h.results_of(id).await;
    assert_eq!(stored.len(), results.len(), "one row per check_id");
    let ids: HashSet<Uuid> = stored.iter().map(|r| r.check_id).collect();
    assert_eq!(ids, results.iter().map(|r| r.check_id).collect());
    let m = h.monitor_row(id).await;
    assert_eq!(
        (m.status.as_str(), m.consecutive_failures),
        ("down", 10),
        "redelivered failures did not count twice"
    );
    // The events of the crashed batch went out through the relay, once each.
    let events = h.events(state_changed_subject()).await;
    let to: Vec<_> = events.iter().map(|e| e["status"].clone()).collect();
    assert_eq!(to, vec!["up", "down"]);
    h.stop_recorder().await;
}

#[tokio::test]
async fn a_stopped_recorder_finishes_its_batch_and_a_restart_continues() {
    let mut h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let t0 = Utc::now();
    h.record(&[result(id, t0, CheckOutcome::Pass)]).await;
    h.stop_recorder().await;

    // Published while no recorder runs: nothing is lost, it waits in the stream.
    let later = result(id, t0 + Duration::seconds(1), CheckOutcome::Fail);
    h.publish(&later).await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(h.results_of(id).await.len(), 1);

    h.start_recorder().await;
    h.wait_drained().await;
    assert_eq!(h.results_of(id).await.len(), 2);
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Down);
}
