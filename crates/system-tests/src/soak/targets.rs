//! The loopback targets the soak's monitors check, each switched by the
//! driver on the plan's schedule: HTTP servers that fail by status, by a
//! missing keyword or by answering slowly; a TCP listener that closes; a
//! DNS server that answers SERVFAIL; TLS servers (one certificate about to
//! expire). The checker trusts their certificate authorities through
//! `UPTIME_CHECKER__EXTRA_ROOT_CA_PEM`, written here before the stack starts.

use super::plan::Phases;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use uptime_testkit::dns::{DnsServer, Failure, Record, Zone};
use uptime_testkit::target::TargetServer;
use uptime_testkit::tls_target::{LeafOptions, TlsTarget};

/// The body a healthy JSON target answers, which assertions read.
pub const HEALTHY_JSON: &str = r#"{"status":"ok","version":3}"#;
/// The keyword monitor's word, and the page without it.
pub const KEYWORD: &str = "all systems go";
pub const KEYWORD_MISSING: &str = "down for repairs";
/// The zone the DNS target serves, and its record.
pub const DNS_NAME: &str = "www.soak.test";
pub const DNS_ADDRESS: &str = "192.0.2.10";
/// How slow the slow target is while failing, and the monitor's threshold.
pub const SLOW_MS: u64 = 900;
pub const LATENCY_WARN_MS: i64 = 400;
/// Days left on the expiring certificate: a warning, not yet critical.
pub const EXPIRING_DAYS: i64 = 10;

/// How an HTTP target fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fails {
    Status,
    Keyword,
    Slow,
}

/// An HTTP target and its schedule.
pub struct Switched {
    pub server: TargetServer,
    pub phases: Phases,
    pub fails: Fails,
}

impl Switched {
    fn apply(&self, failing: bool) {
        match (self.fails, failing) {
            (Fails::Status, true) => self.server.set_status(503),
            (Fails::Status, false) => self.server.set_status(200),
            (Fails::Keyword, f) => self
                .server
                .set_body(if f { KEYWORD_MISSING } else { KEYWORD }),
            (Fails::Slow, f) => {
                self.server
                    .set_delay(Duration::from_millis(if f { SLOW_MS } else { 0 }))
            }
        }
    }
}

/// A TCP port that accepts (and closes) connections, or refuses them.
pub struct TcpTarget {
    pub port: u16,
    pub phases: Phases,
    accepting: Option<JoinHandle<()>>,
}

impl TcpTarget {
    async fn start(phases: Phases) -> anyhow::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        Ok(Self {
            port,
            phases,
            accepting: Some(tokio::spawn(accept(listener))),
        })
    }

    async fn apply(&mut self, failing: bool) {
        match (failing, self.accepting.is_some()) {
            (true, true) => {
                if let Some(task) = self.accepting.take() {
                    task.abort();
                    let _ = task.await;
                }
            }
            (false, false) => match TcpListener::bind(("127.0.0.1", self.port)).await {
                Ok(listener) => self.accepting = Some(tokio::spawn(accept(listener))),
                Err(e) => eprintln!("soak: reopening tcp target :{}: {e} (retrying)", self.port),
            },
            _ => {}
        }
    }
}

async fn accept(listener: TcpListener) {
    while let Ok((stream, _)) = listener.accept().await {
        drop(stream);
    }
}

/// Every target.
pub struct Targets {
    /// Named like the monitors that check them.
    pub http: Vec<(&'static str, Switched)>,
    /// Always healthy: the bulk-created and applied monitors' target.
    pub steady: TargetServer,
    pub https: TargetServer,
    pub tls_valid: TlsTarget,
    pub tls_expiring: TlsTarget,
    pub tcp: TcpTarget,
    pub dns: DnsServer,
    pub dns_phases: Phases,
}

impl Targets {
    /// `schedules`: each HTTP target's name, phases and way of failing.
    pub async fn start(
        schedules: Vec<(&'static str, Phases, Fails)>,
        tcp: Phases,
        dns: Phases,
    ) -> anyhow::Result<Self> {
        let mut http = Vec::new();
        for (name, phases, fails) in schedules {
            let server = TargetServer::start().await;
            let switched = Switched {
                server,
                phases,
                fails,
            };
            switched.server.set_body(if fails == Fails::Keyword {
                KEYWORD
            } else {
                HEALTHY_JSON
            });
            if fails != Fails::Keyword {
                switched
                    .server
                    .set_response_headers(&[("content-type", "application/json")]);
            }
            http.push((name, switched));
        }
        let steady = TargetServer::start().await;
        steady.set_body(HEALTHY_JSON);
        let zone = Zone::new("soak.test").record("www", Record::A(DNS_ADDRESS.parse()?));
        let expiring = chrono::Utc::now() + chrono::Duration::days(EXPIRING_DAYS);
        Ok(Self {
            http,
            steady,
            https: TargetServer::start_https().await,
            tls_valid: TlsTarget::start_valid().await,
            tls_expiring: TlsTarget::start(LeafOptions::expiring_at(expiring)).await,
            tcp: TcpTarget::start(tcp).await?,
            dns: DnsServer::start(vec![zone]).await,
            dns_phases: dns,
        })
    }

    pub fn http(&self, name: &str) -> &TargetServer {
        &self
            .http
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("no target {name}"))
            .1
            .server
    }

    /// Writes every certificate authority of the TLS targets to `path`.
    pub fn write_cas(&self, path: &Path) -> anyhow::Result<()> {
        let pems = [
            self.https.ca_pem(),
            self.tls_valid.ca_pem(),
            self.tls_expiring.ca_pem(),
        ];
        std::fs::write(path, pems.join("\n"))?;
        Ok(())
    }

    /// Switches every target as the plan says for `secs` into the run.
    async fn apply(&mut self, secs: f64) {
        for (_, target) in &self.http {
            target.apply(target.phases.failing_at(secs));
        }
        let tcp_failing = self.tcp.phases.failing_at(secs);
        self.tcp.apply(tcp_failing).await;
        self.dns.fail_all(
            self.dns_phases
                .failing_at(secs)
                .then_some(Failure::ServFail),
        );
    }
}

/// Keeps switching `targets` from `start` on, every 200 ms, until dropped.
pub fn run(targets: Arc<tokio::sync::Mutex<Targets>>, start: Instant) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            targets
                .lock()
                .await
                .apply(start.elapsed().as_secs_f64())
                .await;
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    })
}
