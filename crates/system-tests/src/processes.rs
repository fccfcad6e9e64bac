//! The services and `nats-server` as processes of their own (release
//! binaries), for the benchmark stages that need real process boundaries: a
//! fault that is a real `SIGKILL`, or CPU and memory measured per process.

use anyhow::Context;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::{Child, Command};

/// The services behind the API, each a binary of its own.
pub const PIPELINE_SERVICES: [&str; 4] = ["scheduler", "checker", "recorder", "notifier"];

/// Where the binaries are and what every service is started with.
#[derive(Debug, Clone)]
pub struct ProcessOptions {
    /// Where the release binaries are (`target/release`).
    pub bin_dir: PathBuf,
    pub nats_server: PathBuf,
    pub db_url: String,
}

struct Proc {
    name: &'static str,
    /// Settings of this service beyond the common ones, kept for a restart.
    env: Vec<(String, String)>,
    child: Child,
}

/// A running `nats-server` and services. Dropping it kills them all.
pub struct Processes {
    opts: ProcessOptions,
    nats_port: u16,
    nats_store: tempfile::TempDir,
    nats: Option<Child>,
    services: Vec<Proc>,
}

impl Processes {
    /// Starts `nats-server` (JetStream, a store of its own) on a free port.
    pub async fn start(opts: ProcessOptions) -> anyhow::Result<Self> {
        let mut procs = Self {
            opts,
            nats_port: free_port()?,
            nats_store: tempfile::tempdir()?,
            nats: None,
            services: Vec::new(),
        };
        procs.start_nats().await?;
        Ok(procs)
    }

    pub fn nats_url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.nats_port)
    }

    async fn start_nats(&mut self) -> anyhow::Result<()> {
        let child = Command::new(&self.opts.nats_server)
            .args([
                "-js",
                "-a",
                "127.0.0.1",
                "-p",
                &self.nats_port.to_string(),
                "-sd",
            ])
            .arg(self.nats_store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("start nats-server")?;
        self.nats = Some(child);
        wait_for_port(self.nats_port).await
    }

    /// Starts the service binary `name` with the common settings (database,
    /// NATS, private targets allowed, JSON logs) and `env` on top.
    pub fn start_service(
        &mut self,
        name: &'static str,
        env: &[(&str, String)],
    ) -> anyhow::Result<()> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let child = self.spawn(name, &env)?;
        self.services.push(Proc { name, env, child });
        Ok(())
    }

    fn spawn(&self, name: &str, env: &[(String, String)]) -> anyhow::Result<Child> {
        // UPTIME_BENCH_LOG_DIR keeps each service's log (info and up).
        let (log, level) = match std::env::var_os("UPTIME_BENCH_LOG_DIR") {
            Some(dir) => {
                let file = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(PathBuf::from(dir).join(format!("{name}.log")))?;
                let level =
                    std::env::var("UPTIME_BENCH_LOG_LEVEL").unwrap_or_else(|_| "info".into());
                (Stdio::from(file), level)
            }
            None => (Stdio::null(), "error".to_string()),
        };
        Command::new(self.opts.bin_dir.join(name))
            .env("UPTIME_DATABASE__URL", &self.opts.db_url)
            .env("UPTIME_NATS__URL", self.nats_url())
            .env("UPTIME_OPS__LISTEN", "127.0.0.1:0")
            .env("UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS", "true")
            .env("UPTIME_TELEMETRY__LOG_FORMAT", "json")
            .env("UPTIME_TELEMETRY__LOG_LEVEL", &level)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(log)
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .with_context(|| format!("start {name}"))
    }

    /// `SIGKILL`s the named process (a service or `nats`).
    pub async fn kill(&mut self, name: &str) -> anyhow::Result<()> {
        if name == "nats" {
            if let Some(mut nats) = self.nats.take() {
                nats.kill().await?;
            }
            return Ok(());
        }
        let proc = self
            .services
            .iter_mut()
            .find(|p| p.name == name)
            .context("no such service")?;
        proc.child.kill().await?;
        Ok(())
    }

    /// Starts a killed process again, with the settings it had.
    pub async fn restart(&mut self, name: &str) -> anyhow::Result<()> {
        if name == "nats" {
            return self.start_nats().await;
        }
        let at = self
            .services
            .iter()
            .position(|p| p.name == name)
            .context("no such service")?;
        let child = self.spawn(name, &self.services[at].env)?;
        self.services[at].child = child;
        Ok(())
    }

    /// The process ids, by name (`nats` and each service).
    pub fn pids(&self) -> Vec<(&'static str, u32)> {
        let nats = self.nats.as_ref().and_then(Child::id).map(|p| ("nats", p));
        nats.into_iter()
            .chain(
                self.services
                    .iter()
                    .filter_map(|p| p.child.id().map(|id| (p.name, id))),
            )
            .collect()
    }
}

pub async fn wait_for_port(port: u16) -> anyhow::Result<()> {
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    anyhow::bail!("nothing listens on {port}")
}

pub fn free_port() -> anyhow::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?
        .local_addr()?
        .port())
}
