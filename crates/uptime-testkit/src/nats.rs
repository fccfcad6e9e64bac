//! A NATS server with JetStream for one test.

use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use uptime_config::NatsSettings;

pub const NATS_SERVER_ENV: &str = "UPTIME_TEST_NATS_SERVER";

/// A running `nats-server -js`, killed when dropped.
pub struct TestNats {
    pub url: String,
    _child: Child,
    _store: tempfile::TempDir,
}

impl TestNats {
    pub async fn start() -> Self {
        crate::init_test_logging();
        let bin = std::env::var(NATS_SERVER_ENV).unwrap_or_else(|_| "nats-server".into());
        let store = tempfile::tempdir().expect("temp dir for JetStream");
        // JetStream refuses to create streams whose `max_bytes` add up to
        // more than its store limit, which defaults to 75% of the free disk:
        // the project's stream bounds (several GiB) would make tests fail on
        // a machine with little disk left, though a test writes megabytes.
        // A fixed limit makes the reservation independent of the disk.
        let config = store.path().join("nats.conf");
        std::fs::write(
            &config,
            "jetstream { max_file_store: 64GB, max_memory_store: 1GB }\n",
        )
        .expect("write nats.conf");
        let mut child = Command::new(&bin)
            .arg("-c")
            .arg(&config)
            .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("start {bin} (run the tests with `just test`): {e}"));

        // The server logs the port it picked: "Listening for client connections on 127.0.0.1:40157".
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let url = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(line) = lines.next_line().await.expect("read nats-server log") {
                if let Some((_, addr)) = line.split_once("Listening for client connections on ") {
                    return format!("nats://{}", addr.trim());
                }
            }
            panic!("nats-server exited before listening");
        })
        .await
        .expect("nats-server did not start within 10 s");
        // Keep draining the log so the server never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });

        Self {
            url,
            _child: child,
            _store: store,
        }
    }

    pub fn settings(&self) -> NatsSettings {
        NatsSettings {
            url: self.url.clone(),
            stream_replicas: 1,
            ..NatsSettings::default()
        }
    }

    /// A client with the project's streams created.
    pub async fn jetstream(&self) -> (async_nats::Client, async_nats::jetstream::Context) {
        let client = async_nats::connect(&self.url)
            .await
            .expect("connect to test NATS");
        let js = async_nats::jetstream::new(client.clone());
        uptime_contracts::streams::ensure(&js, &self.settings())
            .await
            .expect("create streams");
        (client, js)
    }
}
