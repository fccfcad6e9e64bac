//! The whole system in one process, for end-to-end tests and `just bench`.
//!
//! Each service runs from its own library entry point with the settings its
//! binary would read, against the test's own PostgreSQL database and NATS
//! server. This crate is the only place that depends on every service; the
//! services themselves never depend on each other.

pub mod alert_latency;
pub mod apply_bench;
pub mod chaos_bench;
pub mod fairness_bench;
pub mod kinds_bench;
pub mod million;
pub mod pipeline_bench;
pub mod processes;
pub mod regions_bench;
pub mod soak;
pub mod status_pages_bench;
pub mod storage_bench;

/// A count from the environment variable `name`, else `default`.
pub fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// The `q` quantile (0 to 1) of `sorted` (ascending); NaN when empty.
pub fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * q).round() as usize]
}

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;

/// Requests per second that `client` completes against `url` (answers
/// with a 2xx status), `concurrency` at a time, for `length`.
pub async fn request_rate(
    client: &reqwest::Client,
    url: &str,
    concurrency: usize,
    length: std::time::Duration,
) -> f64 {
    let started = std::time::Instant::now();
    let deadline = started + length;
    let workers = (0..concurrency).map(|_| {
        let (client, url) = (client.clone(), url.to_string());
        tokio::spawn(async move {
            let mut n = 0u64;
            while std::time::Instant::now() < deadline {
                if let Ok(r) = client.get(&url).send().await {
                    let ok = r.status().is_success();
                    if r.bytes().await.is_ok() && ok {
                        n += 1;
                    }
                }
            }
            n
        })
    });
    let total: u64 = futures::future::join_all(workers)
        .await
        .into_iter()
        .map(|r| r.unwrap_or(0))
        .sum();
    total as f64 / started.elapsed().as_secs_f64()
}

/// The plain fresh-connection request rate to `url`: the machine's ceiling
/// for what a checker does per check, 256 at a time for 5 s.
pub async fn fresh_connection_rate(url: &str) -> anyhow::Result<f64> {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()?;
    Ok(request_rate(&client, url, 256, std::time::Duration::from_secs(5)).await)
}

/// Which services to run and how.
#[derive(Clone)]
pub struct StackOptions {
    pub scheduler: bool,
    pub checkers: usize,
    pub checker_concurrency: usize,
    /// How long JetStream waits for a checker's ack before redelivering.
    pub checker_ack_wait_secs: u64,
    pub recorder: bool,
    pub notifier: bool,
    pub gateway: bool,
    /// PEM of a CA the checkers trust in addition to the system roots.
    pub extra_root_ca_pem: Option<std::path::PathBuf>,
    /// The deployment's regions, each with `checkers` checkers, every
    /// monitor checked from all of them by default; empty: the one
    /// `default` region, as a single-region install.
    pub regions: Vec<String>,
    /// The alert providers' endpoints the notifier and the api-gateway use
    /// (a test's loopback receiver).
    pub alert_providers: uptime_config::AlertProviderSettings,
    /// How often the recorder sweeps maintenance windows; a test that drives
    /// the sweep with its own clock (`recorder::maintenance::sweep_once`)
    /// sets it beyond the test's length.
    pub maintenance_sweep_interval_ms: u64,
    /// Escalation bounds and sweep (the api-gateway's and the notifier's).
    pub escalation: uptime_config::EscalationSettings,
    /// The notifier's SMTP relay (a test's loopback SMTP server); `None`:
    /// the default.
    pub smtp: Option<uptime_config::SmtpSettings>,
    /// The api-gateway's `status_pages.public_base_url` (the status-pages
    /// service a test runs beside the stack); `None`: the default.
    pub status_pages_url: Option<String>,
}

impl Default for StackOptions {
    fn default() -> Self {
        Self {
            scheduler: true,
            checkers: 1,
            checker_concurrency: 256,
            checker_ack_wait_secs: 6,
            recorder: true,
            notifier: true,
            gateway: true,
            extra_root_ca_pem: None,
            regions: Vec::new(),
            alert_providers: uptime_config::AlertProviderSettings::default(),
            maintenance_sweep_interval_ms: 200,
            escalation: uptime_config::EscalationSettings::default(),
            smtp: None,
            status_pages_url: None,
        }
    }
}

impl StackOptions {
    /// The regions settings every service of the stack gets.
    pub fn regions_settings(&self) -> uptime_config::RegionsSettings {
        if self.regions.is_empty() {
            return uptime_config::RegionsSettings::default();
        }
        uptime_config::RegionsSettings {
            known: self.regions.clone(),
            default: self.regions.clone(),
            // Short, so a killed checker's region goes offline within a test.
            presence_ttl_secs: 3,
        }
    }

    /// The region of each checker to start, in order.
    fn checker_regions(&self) -> Vec<String> {
        let regions = if self.regions.is_empty() {
            vec![uptime_contracts::DEFAULT_REGION.to_string()]
        } else {
            self.regions.clone()
        };
        regions
            .iter()
            .flat_map(|r| std::iter::repeat_n(r.clone(), self.checkers))
            .collect()
    }
}

/// A running stack. Dropping it stops every service.
pub struct Stack {
    pub env: TestEnv,
    /// The three-node NATS cluster the services use instead of
    /// `env.nats` ([`Stack::start_clustered`]).
    pub cluster: Option<uptime_testkit::TestNatsCluster>,
    /// The NATS settings every service gets.
    nats: uptime_config::NatsSettings,
    /// `http://127.0.0.1:PORT` of the api-gateway (empty when not running).
    pub api: String,
    pub http: reqwest::Client,
    /// Ops (`/metrics`) addresses by service name.
    pub ops: Vec<(&'static str, SocketAddr)>,
    shutdown: CancellationToken,
    checkers: Vec<(CancellationToken, JoinHandle<()>)>,
    options: StackOptions,
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Stack {
    pub async fn start(options: StackOptions) -> anyhow::Result<Self> {
        let env = TestEnv::start().await;
        Self::start_on(env, options).await
    }

    /// The stack on a three-node NATS cluster on loopback: every stream and
    /// KV bucket replicated on all three (R3); `env.nats` goes unused.
    pub async fn start_clustered(options: StackOptions) -> anyhow::Result<Self> {
        let (env, cluster) =
            tokio::join!(TestEnv::start(), uptime_testkit::TestNatsCluster::start());
        Self::start_with(env, Some(cluster), options).await
    }

    pub async fn start_on(env: TestEnv, options: StackOptions) -> anyhow::Result<Self> {
        Self::start_with(env, None, options).await
    }

    async fn start_with(
        env: TestEnv,
        cluster: Option<uptime_testkit::TestNatsCluster>,
        options: StackOptions,
    ) -> anyhow::Result<Self> {
        let shutdown = CancellationToken::new();
        let nats = match &cluster {
            Some(cluster) => cluster.settings(),
            None => env.nats.settings(),
        };
        let mut stack = Stack {
            env,
            cluster,
            nats: nats.clone(),
            api: String::new(),
            http: reqwest::Client::new(),
            ops: Vec::new(),
            shutdown,
            checkers: Vec::new(),
            options: options.clone(),
        };
        let db = stack.env.db.settings();
        let ops = uptime_config::OpsSettings {
            listen: "127.0.0.1:0".into(),
            ..Default::default()
        };

        if options.gateway {
            let mut s = api_gateway::settings::GatewaySettings::default();
            s.http.listen = "127.0.0.1:0".into();
            s.http.workers = 2;
            s.database = db.clone();
            s.nats = nats.clone();
            s.safety.allow_private_targets = true;
            s.regions = options.regions_settings();
            s.rate_limit.per_second = 0;
            s.ops.listen = "127.0.0.1:0".into();
            s.secrets = uptime_testkit::secrets::test_secrets();
            s.alert_providers = options.alert_providers.clone();
            s.escalation = options.escalation.clone();
            // Reminders and the end of flapping within seconds.
            s.alert_rules.min_reminder_interval_secs = 1;
            s.alert_rules.min_flap_secs = 1;
            if let Some(url) = &options.status_pages_url {
                s.status_pages.public_base_url = url.clone();
            }
            let app = api_gateway::startup::Application::build(s)
                .await
                .context("api-gateway")?;
            stack.api = format!("http://{}", app.addr());
            stack.ops.push(("api-gateway", app.ops_addr()));
            tokio::spawn(app.run_until(stack.shutdown.child_token()));
        }
        if options.recorder {
            let mut s = recorder::settings::RecorderSettings {
                database: db.clone(),
                nats: nats.clone(),
                ops: ops.clone(),
                ..Default::default()
            };
            s.recorder.relay_interval_ms = 200;
            s.recorder.relay_min_age_ms = 500;
            s.regions = options.regions_settings();
            // A round waits this long past its timeout for a silent region.
            s.recorder.round_grace_secs = 1;
            s.recorder.maintenance_sweep_interval_ms = options.maintenance_sweep_interval_ms;
            s.recorder.alert_sweep_interval_ms = 200;
            let service = recorder::Recorder::build(s).await.context("recorder")?;
            stack.ops.push(("recorder", service.ops_addr()));
            let token = stack.shutdown.child_token();
            tokio::spawn(async move {
                let _ = service.run_until(token).await;
            });
        }
        if options.notifier {
            let mut s = notifier::settings::NotifierSettings {
                database: db.clone(),
                nats: nats.clone(),
                ops: ops.clone(),
                ..Default::default()
            };
            s.safety.allow_private_targets = true;
            s.secrets = uptime_testkit::secrets::test_secrets();
            s.alert_providers = options.alert_providers.clone();
            s.escalation = options.escalation.clone();
            s.notifier.poll_interval_ms = 100;
            s.notifier.initial_backoff_secs = 0.2;
            if let Some(smtp) = &options.smtp {
                s.smtp = smtp.clone();
            }
            let service = notifier::Notifier::build(s).await.context("notifier")?;
            stack.ops.push(("notifier", service.ops_addr()));
            let token = stack.shutdown.child_token();
            tokio::spawn(async move {
                let _ = service.run_until(token).await;
            });
        }
        for region in options.checker_regions() {
            stack.add_checker_in(&region).await?;
        }
        if options.scheduler {
            let s = scheduler::settings::SchedulerSettings {
                database: db.clone(),
                nats: nats.clone(),
                ops: ops.clone(),
                regions: options.regions_settings(),
                ..Default::default()
            };
            let token = stack.shutdown.child_token();
            tokio::spawn(async move {
                let _ = scheduler::run(s, token).await;
            });
        }
        Ok(stack)
    }

    /// Starts one more checker replica; returns its index.
    pub async fn add_checker(&mut self) -> anyhow::Result<usize> {
        self.add_checker_in(uptime_contracts::DEFAULT_REGION).await
    }

    /// Starts one more checker replica in `region`; returns its index.
    pub async fn add_checker_in(&mut self, region: &str) -> anyhow::Result<usize> {
        let mut s = checker::settings::CheckerSettings {
            nats: self.nats.clone(),
            ops: uptime_config::OpsSettings {
                listen: "127.0.0.1:0".into(),
                ..Default::default()
            },
            ..Default::default()
        };
        s.safety.allow_private_targets = true;
        s.checker.concurrency = self.options.checker_concurrency;
        s.checker.ack_wait_secs = self.options.checker_ack_wait_secs;
        s.checker.extra_root_ca_pem = self.options.extra_root_ca_pem.clone();
        s.checker.instance_id = format!("checker-{}-{}", region, self.checkers.len());
        s.checker.region = region.to_string();
        s.regions = self.options.regions_settings();
        s.secrets = uptime_testkit::secrets::test_secrets();
        let service = checker::CheckerService::build(s).await.context("checker")?;
        self.ops.push(("checker", service.ops_addr()));
        let token = self.shutdown.child_token();
        let run_token = token.clone();
        let handle = tokio::spawn(async move {
            let _ = service.run_until(run_token).await;
        });
        self.checkers.push((token, handle));
        Ok(self.checkers.len() - 1)
    }

    /// Kills a checker the hard way: its task is aborted mid-flight, with no
    /// graceful drain, as a crashed process would be.
    pub fn kill_checker(&mut self, index: usize) {
        let (_, handle) = &self.checkers[index];
        handle.abort();
    }

    /// A new user and its raw API key.
    pub async fn new_user(&self, name: &str) -> anyhow::Result<String> {
        let (_, key) = api_gateway::keys::create_user_with_key(&self.env.db.pool, name)
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        Ok(key)
    }

    /// Calls the API; returns status and JSON body (`Null` when empty).
    pub async fn call(
        &self,
        method: Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> anyhow::Result<(StatusCode, Value)> {
        let mut req = self
            .http
            .request(method, format!("{}{}", self.api, path))
            .bearer_auth(key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await?;
        let status = res.status();
        let text = res.text().await?;
        let json = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text)?
        };
        Ok((status, json))
    }

    /// Polls `probe` every 20 ms until it returns `Some`, for at most `limit`.
    pub async fn eventually<T, F, Fut>(&self, limit: Duration, mut probe: F) -> Option<T>
    where
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Option<T>>,
    {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            if let Some(v) = probe().await {
                return Some(v);
            }
            if tokio::time::Instant::now() >= deadline {
                return None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The text of a service's `/metrics`.
    pub async fn metrics(&self, service: &str) -> anyhow::Result<String> {
        let addr = self
            .ops
            .iter()
            .find(|(s, _)| *s == service)
            .context("no such service")?
            .1;
        Ok(self
            .http
            .get(format!("http://{addr}/metrics"))
            .send()
            .await?
            .text()
            .await?)
    }
}

/// A scheduled check of `spec` for monitor `monitor_id` (checked from the
/// default region, definition version 1), due now, exactly as the scheduler
/// publishes one: the row's fields through
/// `uptime_db::monitors::sealed_round_checks`, the one row-to-round function
/// the scheduler and the api-gateway share (`check-due.v5`, a round of one).
/// Benchmarks publish what production publishes.
pub fn scheduled_due(
    monitor_id: i64,
    spec: &uptime_contracts::CheckSpec,
    interval_secs: u32,
) -> anyhow::Result<uptime_contracts::DueCheck> {
    let options = serde_json::to_value(&spec.options)?;
    let row = uptime_db::monitors::CheckFields {
        id: monitor_id,
        kind: spec.kind,
        target: Some(&spec.target),
        timeout_secs: i32::from(spec.timeout_secs),
        expected_status: i32::from(spec.expected_status),
        keyword: spec.keyword.as_deref(),
        keyword_type: spec.keyword_type.map(|k| k.as_str()),
        // A monitor with default options stores none.
        check_options: (!spec.options.is_empty()).then_some(&options),
        http_password_sealed: None,
        http_password_unsealed: false,
        regions: None,
    };
    let round = uptime_db::monitors::RoundOf {
        round_id: uuid::Uuid::new_v4(),
        trigger: uptime_contracts::Trigger::Scheduled,
        due_at: chrono::Utc::now(),
        definition_version: 1,
        interval_secs,
    };
    let mut checks = uptime_db::monitors::sealed_round_checks(
        row,
        &uptime_config::RegionsSettings::default(),
        round,
    )?;
    anyhow::ensure!(checks.len() == 1, "a round of one region");
    Ok(checks.remove(0))
}

/// Publishes all of `msgs` on their regions' subjects with up to 4096 acks
/// in flight; returns the time taken.
pub async fn publish_all(
    js: &async_nats::jetstream::Context,
    msgs: Vec<uptime_contracts::DueCheck>,
) -> anyhow::Result<std::time::Duration> {
    let started = std::time::Instant::now();
    let mut in_flight = futures::stream::FuturesUnordered::new();
    for msg in msgs {
        let headers = uptime_telemetry::nats::headers_with_msg_id(&msg.check_id.to_string());
        in_flight.push(std::future::IntoFuture::into_future(
            uptime_contracts::bus::publish_on(js, msg.subject(), headers, &msg).await?,
        ));
        if in_flight.len() >= 4096 {
            futures::StreamExt::next(&mut in_flight)
                .await
                .expect("an ack in flight")?;
        }
    }
    while let Some(ack) = futures::StreamExt::next(&mut in_flight).await {
        ack?;
    }
    Ok(started.elapsed())
}

/// One `n` column, for the benchmarks' counting queries.
#[derive(diesel::QueryableByName)]
pub(crate) struct N {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub n: i64,
}

/// The `n` that `sql` (one row, one `BIGINT` column named `n`) answers in
/// `stack`'s database.
pub(crate) async fn count(stack: &Stack, sql: &str) -> anyhow::Result<i64> {
    use diesel_async::RunQueryDsl;
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    Ok(diesel::sql_query(sql).get_result::<N>(&mut conn).await?.n)
}
