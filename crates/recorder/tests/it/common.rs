//! A real recorder in-process, with its own database and NATS server, and
//! helpers to seed monitors, publish results and read what came out.
#![allow(dead_code)]

use async_nats::jetstream;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use recorder::settings::RecorderSettings;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{streams, CheckOutcome, CheckResult, Message, Trigger};
use uptime_db::models::{CheckResult as StoredResult, Monitor, MonitorDefinition};
use uptime_db::schema::{check_results, monitors, outbox_events};
use uptime_testkit::fixtures::{insert_monitor, monitor_definition};
use uptime_testkit::TestEnv;
use uuid::Uuid;

pub struct Harness {
    pub env: TestEnv,
    pub js: jetstream::Context,
    pub user_id: i64,
    recorder: Option<(CancellationToken, tokio::task::JoinHandle<()>, SocketAddr)>,
}

impl Drop for Harness {
    fn drop(&mut self) {
        if let Some((token, _, _)) = &self.recorder {
            token.cancel();
        }
    }
}

impl Harness {
    /// Database and NATS, streams created, one user; no recorder yet.
    pub async fn new() -> Self {
        let env = TestEnv::start().await;
        let (_, js) = env.nats.jetstream().await;
        let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
        let user = uptime_db::users::create(&mut conn, "owner").await.unwrap();
        Self {
            env,
            js,
            user_id: user.id,
            recorder: None,
        }
    }

    /// New, with a recorder running.
    pub async fn started() -> Self {
        let mut h = Self::new().await;
        h.start_recorder().await;
        h
    }

    pub fn settings(&self) -> RecorderSettings {
        let mut s = RecorderSettings {
            database: self.env.db.settings(),
            nats: self.env.nats.settings(),
            ..Default::default()
        };
        s.ops.listen = "127.0.0.1:0".into();
        s.recorder.batch_wait_ms = 20;
        s.recorder.relay_interval_ms = 100;
        s.recorder.relay_min_age_ms = 300;
        s.recorder.ack_wait_secs = 1;
        s.recorder.retry_delay_ms = 200;
        s
    }

    pub async fn start_recorder(&mut self) {
        self.start_recorder_with(|_| {}).await;
    }

    /// Starts a recorder with `tweak`ed settings.
    pub async fn start_recorder_with(&mut self, tweak: impl FnOnce(&mut RecorderSettings)) {
        let mut settings = self.settings();
        tweak(&mut settings);
        let rec = recorder::Recorder::build(settings)
            .await
            .expect("build recorder");
        let addr = rec.ops_addr();
        let token = CancellationToken::new();
        let handle = tokio::spawn({
            let token = token.clone();
            async move { rec.run_until(token).await.expect("recorder runs") }
        });
        self.recorder = Some((token, handle, addr));
    }

    /// Stops the recorder and waits for it to finish its batch.
    pub async fn stop_recorder(&mut self) {
        if let Some((token, handle, _)) = self.recorder.take() {
            token.cancel();
            tokio::time::timeout(Duration::from_secs(10), handle)
                .await
                .expect("recorder stops within 10 s")
                .unwrap();
        }
    }

    pub fn ops_addr(&self) -> SocketAddr {
        self.recorder.as_ref().expect("recorder running").2
    }

    pub async fn conn(&self) -> uptime_db::PooledConn {
        uptime_db::pool::conn(&self.env.db.pool).await.unwrap()
    }

    /// Inserts a monitor; `tweak` adjusts the definition first.
    pub async fn monitor(&self, tweak: impl FnOnce(&mut MonitorDefinition)) -> i64 {
        let mut definition = MonitorDefinition {
            target: Some("https://example.com/".into()),
            ..monitor_definition(uptime_contracts::MonitorKind::Http)
        };
        tweak(&mut definition);
        insert_monitor(&mut *self.conn().await, self.user_id, definition)
            .await
            .id
    }

    pub async fn monitor_row(&self, id: i64) -> Monitor {
        monitors::table
            .find(id)
            .select(Monitor::as_select())
            .first(&mut self.conn().await)
            .await
            .unwrap()
    }

    pub async fn results_of(&self, monitor_id: i64) -> Vec<StoredResult> {
        check_results::table
            .filter(check_results::monitor_id.eq(monitor_id))
            .order(check_results::id.asc())
            .select(StoredResult::as_select())
            .load(&mut self.conn().await)
            .await
            .unwrap()
    }

    /// Publishes `result` (of any version) with `Nats-Msg-Id` = `msg_id`.
    pub async fn publish_with_id<M: Message>(&self, result: &M, msg_id: &str) {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(uptime_contracts::MSG_ID_HEADER, msg_id);
        uptime_contracts::bus::publish_acked(&self.js, headers, result)
            .await
            .expect("publish result");
    }

    pub async fn publish(&self, result: &CheckResult) {
        self.publish_with_id(result, &result.check_id.to_string())
            .await;
    }

    /// Publishes and waits until the recorder has acked everything.
    pub async fn record(&self, results: &[CheckResult]) {
        for r in results {
            self.publish(r).await;
        }
        self.wait_drained().await;
    }

    /// Waits until the results stream (a work queue) is empty: every result acked.
    pub async fn wait_drained(&self) {
        let js = self.js.clone();
        eventually("results stream drained", || {
            let js = js.clone();
            async move {
                let mut stream = js.get_stream(streams::RESULTS_STREAM).await.unwrap();
                stream.info().await.unwrap().state.messages == 0
            }
        })
        .await;
    }

    /// The recorder's durable consumer as the server sees it now.
    pub async fn recorder_consumer(&self) -> jetstream::consumer::Info {
        let stream = self.js.get_stream(streams::RESULTS_STREAM).await.unwrap();
        let mut consumer: jetstream::consumer::PullConsumer = stream
            .get_consumer(streams::RECORDER_CONSUMER)
            .await
            .unwrap();
        consumer.info().await.unwrap().clone()
    }

    /// Waits until every outbox row is published, then returns the payloads on
    /// `subject` in the events stream.
    pub async fn events(&self, subject: &str) -> Vec<serde_json::Value> {
        let pool = self.env.db.pool.clone();
        eventually("outbox published", || {
            let pool = pool.clone();
            async move {
                let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
                let unpublished: i64 = outbox_events::table
                    .filter(outbox_events::published_at.is_null())
                    .count()
                    .get_result(&mut conn)
                    .await
                    .unwrap();
                unpublished == 0
            }
        })
        .await;
        read_subject(&self.js, subject).await
    }
}

/// Every message on `subject` in the events stream, oldest first.
pub async fn read_subject(js: &jetstream::Context, subject: &str) -> Vec<serde_json::Value> {
    let stream = js.get_stream(streams::EVENTS_STREAM).await.unwrap();
    let consumer = stream
        .create_consumer(jetstream::consumer::pull::Config {
            filter_subject: subject.to_string(),
            ack_policy: jetstream::consumer::AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut out = Vec::new();
    let mut batch = consumer
        .fetch()
        .max_messages(1000)
        .messages()
        .await
        .unwrap();
    while let Some(msg) = batch.next().await {
        out.push(serde_json::from_slice(&msg.unwrap().payload).unwrap());
    }
    out
}

/// Polls `check` until it holds, for at most 15 s.
pub async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for: {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A scheduled result of `monitor_id` checked at `checked_at`, as a checker
/// of the default region publishes it (a round of one: the round's id is the
/// check's), for the monitor's first definition.
pub fn result(monitor_id: i64, checked_at: DateTime<Utc>, outcome: CheckOutcome) -> CheckResult {
    let check_id = Uuid::new_v4();
    CheckResult {
        check_id,
        monitor_id,
        definition_version: 1,
        trigger: Trigger::Scheduled,
        due_at: Some(checked_at),
        checked_at,
        outcome,
        latency_ms: Some(42),
        http_status: Some(if outcome == CheckOutcome::Pass {
            200
        } else {
            503
        }),
        error: (outcome == CheckOutcome::Fail).then(|| "expected status 200, got 503".into()),
        ssl_expires_at: None,
        reporter: "checker-test".into(),
        region: uptime_contracts::DEFAULT_REGION.into(),
        round_id: Some(check_id),
    }
}

/// Subject constants, re-exported for the tests.
pub fn state_changed_subject() -> &'static str {
    uptime_contracts::StateChange::SUBJECT
}

pub fn ssl_expiring_subject() -> &'static str {
    uptime_contracts::SslWarning::SUBJECT
}
