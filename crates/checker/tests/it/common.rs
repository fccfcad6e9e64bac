//! Shared harness: a NATS server per test, checkers run in-process, due
//! checks published like the scheduler does, results read back from the
//! results stream.

#![allow(dead_code)] // each test binary uses a different part

use async_nats::jetstream;
use checker::settings::CheckerSettings;
use chrono::Utc;
use std::collections::HashMap;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{
    streams, CheckResult, CheckSpec, DueCheck, KeywordType, MonitorKind, Trigger,
};
use uptime_testkit::TestNats;
use uuid::Uuid;

/// How long a test waits for results before it fails: generous, this is a
/// functional deadline, not a speed measurement.
pub const RESULT_DEADLINE: Duration = Duration::from_secs(60);

pub struct Harness {
    pub nats: TestNats,
    pub js: jetstream::Context,
}

impl Harness {
    pub async fn start() -> Self {
        let nats = TestNats::start().await;
        let (_client, js) = nats.jetstream().await;
        Self { nats, js }
    }

    /// Settings for a checker on this harness's NATS, allowing private targets
    /// (the test targets are on loopback).
    pub fn settings(&self, instance_id: &str) -> CheckerSettings {
        let mut settings = CheckerSettings::default();
        settings.nats = self.nats.settings();
        settings.ops.listen = "127.0.0.1:0".into();
        settings.safety.allow_private_targets = true;
        settings.checker.instance_id = instance_id.into();
        settings.checker.ack_wait_secs = 5;
        // The key the test services seal basic-auth passwords with.
        settings.secrets = uptime_testkit::secrets::test_secrets();
        settings
    }

    /// Publishes a due check for `spec` the way the scheduler does: a
    /// `check-due.v5` for the default region, a round of one (a basic-auth
    /// password in `spec` sealed with [`seal`]).
    pub async fn publish_due(&self, spec: CheckSpec) -> DueCheck {
        let due = due_now(spec);
        self.publish_due_as(&due, &due.check_id.to_string()).await;
        due
    }

    /// Publishes `due` on its region's subject with `Nats-Msg-Id` `msg_id`.
    pub async fn publish_due_as(&self, due: &DueCheck, msg_id: &str) {
        let mut headers = async_nats::HeaderMap::new();
        headers.insert(uptime_contracts::MSG_ID_HEADER, msg_id);
        uptime_contracts::bus::publish_on(&self.js, due.subject(), headers, due)
            .await
            .expect("publish due check")
            .await
            .expect("due check stored");
    }

    /// Every result on the results stream, in stream order.
    pub async fn results(&self) -> Vec<CheckResult> {
        self.raw_results()
            .await
            .into_iter()
            .map(|(_, json)| serde_json::from_value(json).expect("result decodes"))
            .collect()
    }

    /// Every result on the results stream as (subject, JSON), in stream order.
    pub async fn raw_results(&self) -> Vec<(String, serde_json::Value)> {
        let mut stream = self
            .js
            .get_stream(streams::RESULTS_STREAM)
            .await
            .expect("results stream");
        let state = stream.info().await.expect("stream info").state.clone();
        let mut results = Vec::new();
        if state.messages == 0 {
            return results;
        }
        for seq in state.first_sequence..=state.last_sequence {
            let raw = stream.get_raw_message(seq).await.expect("stored result");
            let json = serde_json::from_slice(&raw.payload).expect("result is JSON");
            results.push((raw.subject.to_string(), json));
        }
        results
    }

    /// Waits until the results stream holds at least `n` results, and returns them all.
    pub async fn wait_for_results(&self, n: usize) -> Vec<CheckResult> {
        let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
        loop {
            let results = self.results().await;
            if results.len() >= n {
                return results;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "only {} of {n} results within {RESULT_DEADLINE:?}",
                results.len()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for the result of `check_id`.
    pub async fn result_of(&self, check_id: Uuid) -> CheckResult {
        let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
        loop {
            if let Some(found) = self
                .results()
                .await
                .into_iter()
                .find(|r| r.check_id == check_id)
            {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no result for {check_id} within {RESULT_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The shared checker consumer's state.
    pub async fn consumer_info(&self) -> jetstream::consumer::Info {
        let stream = self
            .js
            .get_stream(streams::CHECKS_STREAM)
            .await
            .expect("checks stream");
        let mut consumer: jetstream::consumer::PullConsumer = stream
            .get_consumer(streams::CHECKER_CONSUMER)
            .await
            .expect("checker consumer");
        consumer.info().await.expect("consumer info").clone()
    }

    /// Waits until the checker consumer has no message waiting or unacked.
    pub async fn wait_until_consumer_idle(&self) -> jetstream::consumer::Info {
        let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
        loop {
            let info = self.consumer_info().await;
            if info.num_pending == 0 && info.num_ack_pending == 0 {
                return info;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "consumer still busy: {} pending, {} unacked",
                info.num_pending,
                info.num_ack_pending
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// A checker running in this process.
pub struct RunningChecker {
    pub ops_addr: std::net::SocketAddr,
    pub shutdown: CancellationToken,
    pub task: JoinHandle<Result<(), checker::CheckerError>>,
}

impl RunningChecker {
    pub async fn start(settings: CheckerSettings) -> Self {
        let service = checker::CheckerService::build(settings)
            .await
            .expect("checker starts");
        let ops_addr = service.ops_addr();
        let shutdown = CancellationToken::new();
        let task = tokio::spawn(service.run_until(shutdown.clone()));
        Self {
            ops_addr,
            shutdown,
            task,
        }
    }

    /// Graceful stop: waits for `run_until` to return.
    pub async fn stop(self) {
        self.shutdown.cancel();
        tokio::time::timeout(RESULT_DEADLINE, self.task)
            .await
            .expect("checker stops")
            .expect("checker task")
            .expect("checker ran without error");
    }

    /// A crash: the checker and every check it runs vanish without acking.
    pub async fn kill(self) {
        self.task.abort();
        let _ = self.task.await;
        // The ops server runs on its own task; stop it too.
        self.shutdown.cancel();
    }
}

/// `password` sealed with the test key, which the checkers hold, as the
/// api-gateway stores it.
pub fn seal(password: &str) -> String {
    uptime_testkit::secrets::test_keyring()
        .seal(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, password)
        .expect("seal")
}

/// A scheduled check of `spec` due now, as the scheduler publishes it
/// (`check-due.v5`, the default region, a round of one whose id is the
/// check's), for definition version 1 of a monitor checked every minute.
pub fn due_now(spec: CheckSpec) -> DueCheck {
    due_in(spec, uptime_contracts::DEFAULT_REGION, Uuid::new_v4(), 1)
}

pub fn http_spec(target: &str) -> CheckSpec {
    CheckSpec {
        kind: MonitorKind::Http,
        target: target.into(),
        timeout_secs: uptime_contracts::TimeoutSecs::of(10),
        expected_status: uptime_contracts::ExpectedStatus::of(200),
        keyword: None,
        keyword_type: None,
        options: Default::default(),
    }
}

/// A check of `kind` of `target` (`host:port`, a name or a host), 10 s
/// timeout, default options.
pub fn spec_of(kind: MonitorKind, target: &str) -> CheckSpec {
    CheckSpec {
        kind,
        ..http_spec(target)
    }
}

pub fn keyword_spec(target: &str, keyword: &str, keyword_type: KeywordType) -> CheckSpec {
    CheckSpec {
        kind: MonitorKind::Keyword,
        keyword: Some(keyword.into()),
        keyword_type: Some(keyword_type),
        ..http_spec(target)
    }
}

/// How many results each check_id has.
pub fn counts_by_check(results: &[CheckResult]) -> HashMap<Uuid, usize> {
    let mut counts = HashMap::new();
    for r in results {
        *counts.entry(r.check_id).or_default() += 1;
    }
    counts
}

/// Waits (generously) until `condition` holds.
pub async fn eventually(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
    while !condition() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{what}: not within {RESULT_DEADLINE:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A due check of `spec` for `region`, in round `round_id` of
/// `regions_in_round` regions, scheduled now.
pub fn due_in(spec: CheckSpec, region: &str, round_id: Uuid, regions_in_round: usize) -> DueCheck {
    DueCheck {
        check_id: uptime_contracts::check_id_in_round(round_id, region, regions_in_round),
        monitor_id: 42,
        definition_version: 1,
        interval_secs: 60,
        trigger: Trigger::Scheduled,
        due_at: Utc::now(),
        spec,
        region: region.into(),
        round_id,
    }
}

impl Harness {
    /// Waits for the result of `check_id` and returns (subject, JSON).
    pub async fn raw_result_of(&self, check_id: Uuid) -> (String, serde_json::Value) {
        let wanted = check_id.to_string();
        let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
        loop {
            if let Some(found) = self
                .raw_results()
                .await
                .into_iter()
                .find(|(_, json)| json["check_id"] == wanted.as_str())
            {
                return found;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "no result for {check_id} within {RESULT_DEADLINE:?}"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Settings for a checker of `region`.
    pub fn settings_in(&self, instance_id: &str, region: &str) -> CheckerSettings {
        let mut settings = self.settings(instance_id);
        settings.checker.region = region.into();
        settings
    }
}
