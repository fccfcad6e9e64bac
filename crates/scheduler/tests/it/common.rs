//! Test harness: a real PostgreSQL database and NATS server per test, monitors
//! written straight into the database (the API lives in another crate), and
//! feeds that collect what the scheduler publishes.
#![allow(dead_code)]

use async_nats::jetstream;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use scheduler::settings::ScheduleSettings;
use scheduler::{Clock, Scheduler, SchedulerStats};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uptime_contracts::streams::{CHECKS_STREAM, RESULTS_STREAM};
use uptime_contracts::{Message, MonitorChange, MonitorChangedV1, MonitorKind};
use uptime_db::models::{Monitor, MonitorDefinition, NewMonitor};
use uptime_db::schema::monitors;
use uptime_testkit::fixtures::monitor_definition;
use uptime_testkit::TestEnv;

pub const LEASE_TTL_SECS: u64 = 6;

pub async fn env() -> TestEnv {
    TestEnv::start().await
}

pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

pub async fn insert_user(env: &TestEnv) -> i64 {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    uptime_db::users::create(&mut conn, "scheduler-test")
        .await
        .unwrap()
        .id
}

pub fn http_monitor(user_id: i64, interval_secs: i32) -> NewMonitor {
    NewMonitor {
        org_id: user_id,
        definition: MonitorDefinition {
            interval_secs,
            timeout_secs: 7,
            expected_status: 204,
            ..monitor_definition(MonitorKind::Http)
        },
    }
}

pub fn heartbeat_monitor(user_id: i64, interval_secs: i32, grace_secs: i32) -> NewMonitor {
    NewMonitor {
        org_id: user_id,
        definition: MonitorDefinition {
            interval_secs,
            timeout_secs: grace_secs,
            ..monitor_definition(MonitorKind::Heartbeat)
        },
    }
}

pub async fn insert_monitor(env: &TestEnv, monitor: NewMonitor) -> Monitor {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    uptime_testkit::fixtures::insert_monitor(&mut conn, monitor.org_id, monitor.definition).await
}

pub async fn set_active(env: &TestEnv, id: i64, active: bool) {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::update(monitors::table.find(id))
        .set((
            monitors::active.eq(active),
            monitors::updated_at.eq(Utc::now()),
        ))
        .execute(&mut conn)
        .await
        .unwrap();
}

pub async fn delete_monitor(env: &TestEnv, id: i64) {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::delete(monitors::table.find(id))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// What the recorder does for a check result: moves `last_checked_at`.
pub async fn set_last_checked(env: &TestEnv, id: i64, at: DateTime<Utc>) {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::update(monitors::table.find(id))
        .set(monitors::last_checked_at.eq(at))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// What the api-gateway does for a heartbeat ping.
pub async fn set_last_heartbeat(env: &TestEnv, id: i64, at: DateTime<Utc>) {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::update(monitors::table.find(id))
        .set(monitors::last_heartbeat_at.eq(at))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// What the api-gateway publishes after changing a monitor.
pub async fn publish_change(env: &TestEnv, id: i64, change: MonitorChange) {
    let (_client, js) = env.nats.jetstream().await;
    let message = MonitorChangedV1 {
        monitor_id: id,
        change,
        changed_at: Utc::now(),
    };
    uptime_contracts::bus::publish_acked(
        &js,
        uptime_telemetry::nats::headers_with_msg_id(&uuid::Uuid::new_v4().to_string()),
        &message,
    )
    .await
    .unwrap();
}

/// Leases renewed every second and taken over after [`LEASE_TTL_SECS`] (by
/// the scheduler's clock, which the tests move), over 8 shards. A busy test
/// machine may stall a replica for seconds of real time: a shorter TTL
/// would make it lose its leases.
pub fn fast_config() -> ScheduleSettings {
    ScheduleSettings {
        lease_retry_secs: 1,
        lease_ttl_secs: LEASE_TTL_SECS,
        shards: 8,
        ..ScheduleSettings::default()
    }
}

/// A scheduler replica running in this process.
pub struct Running {
    pub stats: Arc<SchedulerStats>,
    shutdown: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl Running {
    /// Stops it and waits until it has finished (in-flight acks awaited).
    pub async fn stop(mut self) {
        self.shutdown.cancel();
        if let Some(task) = self.task.take() {
            tokio::time::timeout(Duration::from_secs(20), task)
                .await
                .expect("scheduler stops within 20 s")
                .unwrap();
        }
    }
}

impl Running {
    /// Crashes it: its task is dropped mid-flight, nothing is released.
    pub async fn kill(mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
            let _ = task.await;
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn start_scheduler(env: &TestEnv) -> Running {
    start_scheduler_with(env, fast_config()).await
}

/// A scheduler reading `clock`, which the test moves forward instead of
/// waiting for slots and deadlines.
pub async fn start_scheduler_on(env: &TestEnv, clock: &Clock) -> Running {
    start_scheduler_with_clock(env, fast_config(), clock.clone()).await
}

/// A replica reading `clock` for its slots and its leases alike: the test
/// moves it a renewal at a time.
pub async fn start_replica_on(env: &TestEnv, clock: &Clock) -> Running {
    let (_client, js) = env.nats.jetstream().await;
    let scheduler = Scheduler::new(env.db.pool.clone(), js, fast_config())
        .with_clock(clock.clone())
        .with_lease_clock(clock.clone());
    run(scheduler)
}

pub fn run(scheduler: Scheduler) -> Running {
    let stats = scheduler.stats();
    let shutdown = CancellationToken::new();
    let token = shutdown.clone();
    let task = tokio::spawn(async move { scheduler.run(token).await });
    Running {
        stats,
        shutdown,
        task: Some(task),
    }
}

pub async fn start_scheduler_with(env: &TestEnv, config: ScheduleSettings) -> Running {
    start_scheduler_with_clock(env, config, Clock::system()).await
}

pub async fn start_scheduler_with_clock(
    env: &TestEnv,
    config: ScheduleSettings,
    clock: Clock,
) -> Running {
    start_scheduler_in(env, config, clock, Default::default()).await
}

/// A scheduler checking monitors from `regions`.
pub async fn start_scheduler_in(
    env: &TestEnv,
    config: ScheduleSettings,
    clock: Clock,
    regions: uptime_config::RegionsSettings,
) -> Running {
    let (_client, js) = env.nats.jetstream().await;
    let scheduler = Scheduler::new(env.db.pool.clone(), js, config)
        .with_clock(clock)
        .with_regions(regions);
    run(scheduler)
}

/// Waits until `condition` holds, polling; panics with `what` after `timeout`.
pub async fn eventually(what: &str, timeout: Duration, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Sleeps until the wall clock reads `at_ms`.
pub async fn sleep_until_ms(at_ms: i64) {
    let wait = at_ms - now_ms();
    if wait > 0 {
        tokio::time::sleep(Duration::from_millis(wait as u64)).await;
    }
}

/// One message as a test consumer received it.
#[derive(Debug, Clone)]
pub struct Received<M> {
    pub subject: String,
    pub msg_id: Option<String>,
    pub json: serde_json::Value,
    pub message: M,
    /// By the clock the feed was started with (the scheduler's).
    pub received_ms: i64,
}

/// Everything published on `M`'s subject, collected by a durable consumer of
/// the test's own.
pub struct Feed<M> {
    received: Arc<Mutex<Vec<Received<M>>>>,
    task: JoinHandle<()>,
}

impl<M> Drop for Feed<M> {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl<M: Message + Clone + Send + 'static> Feed<M> {
    pub async fn start(env: &TestEnv, stream: &str, clock: Clock) -> Self {
        let (_client, js) = env.nats.jetstream().await;
        Self::start_on(&js, stream, clock).await
    }

    /// Collects from `stream` through `js` (a cluster's, say).
    pub async fn start_on(js: &jetstream::Context, stream: &str, clock: Clock) -> Self {
        let consumer: jetstream::consumer::PullConsumer = js
            .get_stream(stream)
            .await
            .unwrap()
            .create_consumer(uptime_contracts::streams::durable_pull(
                "scheduler-test",
                Duration::from_secs(30),
                -1,
            ))
            .await
            .unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let sink = received.clone();
        let task = tokio::spawn(async move {
            let mut messages = consumer.messages().await.unwrap();
            while let Some(Ok(msg)) = messages.next().await {
                // By the typed name: `get("Nats-Msg-Id")` looks for a custom
                // header and misses the parsed standard one.
                let msg_id = msg
                    .headers
                    .as_ref()
                    .and_then(|h| h.get(async_nats::header::NATS_MESSAGE_ID))
                    .map(|v| v.to_string());
                let json: serde_json::Value = serde_json::from_slice(&msg.payload).unwrap();
                let message = M::from_bytes(&msg.payload).unwrap();
                msg.ack().await.unwrap();
                sink.lock().unwrap().push(Received {
                    subject: msg.subject.to_string(),
                    msg_id,
                    json,
                    message,
                    received_ms: clock.now_ms(),
                });
            }
        });
        Self { received, task }
    }

    pub fn all(&self) -> Vec<Received<M>> {
        self.received.lock().unwrap().clone()
    }

    pub fn matching(&self, filter: impl Fn(&M) -> bool) -> Vec<Received<M>> {
        self.all()
            .into_iter()
            .filter(|r| filter(&r.message))
            .collect()
    }

    /// Waits until at least `n` received messages match `filter`; returns them.
    pub async fn wait_for(
        &self,
        n: usize,
        timeout: Duration,
        filter: impl Fn(&M) -> bool,
    ) -> Vec<Received<M>> {
        let start = Instant::now();
        loop {
            let found = self.matching(&filter);
            if found.len() >= n {
                return found;
            }
            assert!(
                start.elapsed() < timeout,
                "timed out after {timeout:?} waiting for {n} messages, got {}: {:?}",
                found.len(),
                found.iter().map(|r| &r.json).collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

pub async fn due_feed(env: &TestEnv) -> Feed<uptime_contracts::DueCheck> {
    due_feed_on(env, &Clock::system()).await
}

pub async fn due_feed_on(env: &TestEnv, clock: &Clock) -> Feed<uptime_contracts::DueCheck> {
    Feed::start(env, CHECKS_STREAM, clock.clone()).await
}

pub async fn result_feed(env: &TestEnv) -> Feed<uptime_contracts::CheckResult> {
    result_feed_on(env, &Clock::system()).await
}

pub async fn result_feed_on(env: &TestEnv, clock: &Clock) -> Feed<uptime_contracts::CheckResult> {
    Feed::start(env, RESULTS_STREAM, clock.clone()).await
}
