//! The test harness every crate's integration tests share. Real parts only:
//!
//! - [`TestDb`]: a PostgreSQL database of its own for each test, cloned from a
//!   template that was migrated once ([`db`]). The server is the one `just test` starts;
//!   its admin URL comes from `UPTIME_TEST_DATABASE_URL`.
//! - [`TestNats`]: a `nats-server` with JetStream of its own for each test, on a
//!   port the server picks itself, with its store in a temporary directory.
//!   The binary is `UPTIME_TEST_NATS_SERVER` or `nats-server` on `PATH`.
//! - [`TestNatsCluster`] ([`nats_cluster`]): three such servers as one JetStream cluster on
//!   loopback (streams and buckets at R3), a node killed and restarted at will;
//!   [`proxy`]: the cuttable TCP path between two of its nodes, so a test
//!   partitions a node without iptables.
//! - [`target::TargetServer`]: a loopback HTTP(S) server whose answers a test
//!   switches at run time, to point checks at; [`tls_target`]: a bare TLS
//!   server with the certificate a test chooses, for tls checks;
//!   [`dns::DnsServer`]: an authoritative DNS server with a test's zones,
//!   for dns checks; [`refusing`]: a port where every connection is refused.
//! - [`receiver::WebhookReceiver`]: a loopback HTTP server that keeps the
//!   requests it receives and answers with scripted replies, for webhooks.
//! - [`fixtures`]: a valid monitor definition and its insert, the row most
//!   tests start from.
//! - [`endless::EndlessBodyServer`]: a loopback server answering `500` with a
//!   body that never ends, counting what it wrote, to test bounded reads.
//! - [`smtp::SmtpServer`]: a loopback SMTP server that keeps the messages it
//!   receives, for tests of email alerts.
//! - [`secrets`]: the fixed key test services seal and open passwords with.
//! - [`otlp`]: an OTLP/gRPC trace receiver, so a test reads the spans the
//!   services export.
//!
//! `TEST_LOG=1` shows the logs of the services a test runs (at `info`; or
//! give a filter: `TEST_LOG=debug,h2=warn`); tests are silent without it.

mod db;
pub mod dns;
pub mod endless;
pub mod fixtures;
mod nats;
mod nats_cluster;
pub mod otlp;
pub mod proxy;
pub mod receiver;
pub mod refusing;
pub mod secrets;
pub mod smtp;
pub mod target;
pub mod tls_target;

pub use db::TestDb;
pub use nats::TestNats;
pub use nats_cluster::{TestNatsCluster, CLUSTER_NODES};

/// Database and broker for one test.
pub struct TestEnv {
    pub db: TestDb,
    pub nats: TestNats,
}

/// Installs a log subscriber writing to the test's output when `TEST_LOG` is
/// set; does nothing otherwise, or when one is installed already. Every
/// harness constructor calls it, so a test needs nothing of its own.
pub fn init_test_logging() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let Ok(value) = std::env::var("TEST_LOG") else {
            return;
        };
        let filter = match value.as_str() {
            "" | "0" | "false" => return,
            "1" | "true" => "info".to_string(),
            filter => filter.to_string(),
        };
        let _ = tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
            .with_test_writer()
            .try_init();
    });
}

impl TestEnv {
    pub async fn start() -> Self {
        let (db, nats) = tokio::join!(TestDb::create(), TestNats::start());
        Self { db, nats }
    }
}
