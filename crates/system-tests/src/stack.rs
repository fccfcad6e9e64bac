//! [`Stack`]: the services of the whole system in one process, each from its
//! library entry point with the settings its binary would read, against a
//! test's own PostgreSQL database and NATS server (or a three-node cluster).

use anyhow::Context;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;

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
