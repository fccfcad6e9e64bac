//! Crashes between the steps of a batch lose nothing and duplicate nothing.

use crate::common::{eventually, result, state_changed_subject, Harness};
use async_nats::jetstream;
use chrono::{Duration, Utc};
use diesel::dsl::sql;
use diesel::prelude::*;
use diesel::sql_types::{Bool, Integer};
use diesel_async::{AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use futures::StreamExt;
use std::collections::HashSet;
use uptime_contracts::{streams, CheckOutcome, CheckResult, MonitorStatus};
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
    let results: Vec<CheckResult> = (0..20)
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
    let mut taken: Vec<CheckResult> = Vec::new();
    let mut batch = consumer.fetch().max_messages(100).messages().await.unwrap();
    while let Some(msg) = batch.next().await {
        let msg = msg.unwrap();
        taken.push(uptime_contracts::check_result::decode(&msg.subject, &msg.payload).unwrap());
    }
    assert_eq!(taken.len(), results.len());
    let committed = recorder::store::record_batch(&h.env.db.pool, &taken, Utc::now())
        .await
        .unwrap();
    assert_eq!(committed.inserted, 20);
    // pending→up and up→down, one state-changed.v3 each.
    assert_eq!(committed.events.len(), 2, "{:?}", committed.events);

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
    // The stopped recorder's last pull request lives on the server until its
    // connection has closed (the client closes in the background after the
    // recorder returns) or it expires (5 s). A result published before that
    // is handed to the dead request and waits out its ack deadline instead
    // (nothing lost, but not the state this test is about; a loaded machine
    // lost that race). A recorder that kept running would keep a request
    // open, so this wait fails for it too.
    let hr = &h;
    eventually(
        "the stopped recorder's pull request is gone",
        || async move { hr.recorder_consumer().await.num_waiting == 0 },
    )
    .await;

    // Published while no recorder runs: nothing is lost, it waits in the stream.
    let later = result(id, t0 + Duration::seconds(1), CheckOutcome::Fail);
    h.publish(&later).await;
    // Not stored because nobody can take it, rather than not stored yet: the
    // server holds no pull request on the recorder's consumer (the stopped
    // recorder's went with it), has nothing delivered and unacked, and counts
    // the result as pending. From here only a new pull can hand it out, and
    // only a started recorder pulls, so the count below holds until then
    // however slow the machine. A recorder still running after its stop
    // keeps a pull request open or takes the result, and this never holds.
    let hr = &h;
    eventually(
        "the result waits undelivered, with no pull request open",
        || async move {
            let info = hr.recorder_consumer().await;
            info.num_waiting == 0 && info.num_ack_pending == 0 && info.num_pending == 1
        },
    )
    .await;
    assert_eq!(h.results_of(id).await.len(), 1);

    h.start_recorder().await;
    h.wait_drained().await;
    assert_eq!(h.results_of(id).await.len(), 2);
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Down);
}

/// The backend process id of `conn`'s session.
async fn backend_pid(conn: &mut AsyncPgConnection) -> i32 {
    diesel::select(sql::<Integer>("pg_backend_pid()"))
        .get_result(conn)
        .await
        .unwrap()
}

/// Waits until some session other than `waiter` is waiting for a lock that
/// `holder`'s session holds; with `waiter`, until that one is.
async fn wait_blocked(h: &Harness, holder: i32, waiter: Option<i32>, what: &str) {
    let only = waiter.map_or(String::new(), |pid| format!("AND pid = {pid}"));
    let query = format!(
        "EXISTS (SELECT 1 FROM pg_stat_activity WHERE {holder} = ANY(pg_blocking_pids(pid)) {only})"
    );
    eventually(what, || {
        let query = query.clone();
        async move {
            diesel::select(sql::<Bool>(&query))
                .get_result(&mut h.conn().await)
                .await
                .unwrap()
        }
    })
    .await;
}

/// Locks monitor `id` (`FOR UPDATE`) in the transaction open on `conn`.
async fn lock_monitor(conn: &mut AsyncPgConnection, id: i64) {
    conn.batch_execute(&format!(
        "SELECT id FROM monitors WHERE id = {id} FOR UPDATE"
    ))
    .await
    .unwrap();
}

#[tokio::test]
async fn a_batch_rolled_back_as_a_deadlock_victim_is_retried_whole() {
    let mut h = Harness::new().await;
    // The recorder locks a batch's monitors in id order: a, then b, then c.
    let a = h.monitor(|_| {}).await;
    let b = h.monitor(|_| {}).await;
    let c = h.monitor(|_| {}).await;
    assert!(a < b && b < c);
    let t0 = Utc::now() - Duration::minutes(1);
    let results: Vec<CheckResult> = [a, b, c]
        .iter()
        .map(|&id| result(id, t0, CheckOutcome::Pass))
        .collect();
    // In the stream before the recorder starts: one batch takes all three.
    for r in &results {
        h.publish(r).await;
    }

    // Two other writers. `first` holds c and will ask for a: the opposite of
    // the recorder's order. It never runs the deadlock check (its timeout
    // is far away), so the recorder's session is the one that finds the
    // deadlock and is rolled back, whatever the timing. `gate` holds b to
    // stop the recorder between a and c, so that `first` can queue behind
    // the recorder's a before the recorder reaches c.
    let mut first = h.conn().await;
    let first_pid = backend_pid(&mut first).await;
    first
        .batch_execute("BEGIN; SET LOCAL deadlock_timeout = '10min'")
        .await
        .unwrap();
    lock_monitor(&mut first, c).await;
    let mut gate = h.conn().await;
    let gate_pid = backend_pid(&mut gate).await;
    gate.batch_execute("BEGIN").await.unwrap();
    lock_monitor(&mut gate, b).await;

    h.start_recorder().await;
    wait_blocked(&h, gate_pid, None, "the recorder holding a, waiting for b").await;
    assert!(
        h.results_of(a).await.is_empty(),
        "the results came in more than one batch; this test needs them in one"
    );
    let recorder_pid: i32 = diesel::select(sql::<Integer>(&format!(
        "(SELECT pid FROM pg_stat_activity WHERE {gate_pid} = ANY(pg_blocking_pids(pid)))"
    )))
    .get_result(&mut h.conn().await)
    .await
    .unwrap();
    let first_locks_a = tokio::spawn(async move {
        lock_monitor(&mut first, a).await;
        first
    });
    // `first` waits for the recorder's a; the recorder, once b is free,
    // waits for `first`'s c: a cycle PostgreSQL breaks by failing the
    // recorder's transaction with 40P01.
    wait_blocked(
        &h,
        recorder_pid,
        Some(first_pid),
        "the other writer waiting for a",
    )
    .await;
    gate.batch_execute("COMMIT").await.unwrap();
    // Granted a only once the recorder's transaction is rolled back.
    let mut first = first_locks_a.await.unwrap();
    first.batch_execute("COMMIT").await.unwrap();

    h.wait_drained().await;
    for id in [a, b, c] {
        assert_eq!(h.results_of(id).await.len(), 1, "monitor {id}");
    }
    // Retried whole: the batch was handed back (nak) and every result came
    // again. Taken as a failure instead, the results would have been
    // recorded one by one from the first delivery, each delivered once.
    let info = h.recorder_consumer().await;
    assert!(
        info.delivered.consumer_sequence >= 2 * results.len() as u64,
        "each result delivered twice: {:?}",
        info.delivered
    );
    let dead = uptime_consumer::dead::read_all(&h.js).await.unwrap();
    assert!(dead.is_empty(), "{dead:?}");
    h.stop_recorder().await;
}
