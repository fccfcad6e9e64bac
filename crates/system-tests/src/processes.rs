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
    /// What kill and restart call it (the binary's name unless started
    /// with [`Processes::start_named`]).
    label: String,
    binary: &'static str,
    /// Settings of this service beyond the common ones, kept for a restart.
    env: Vec<(String, String)>,
    child: Child,
}

/// A running `nats-server` (unless started on another's NATS) and
/// services. Dropping it kills them all.
pub struct Processes {
    opts: ProcessOptions,
    /// What `UPTIME_NATS__URL` the services get.
    nats_url: String,
    /// The port of the `nats-server` this started, `None` on another's NATS.
    nats_port: Option<u16>,
    nats_store: tempfile::TempDir,
    nats: Option<Child>,
    /// Given to every service, before its own settings.
    common_env: Vec<(String, String)>,
    services: Vec<Proc>,
}

impl Processes {
    /// Starts `nats-server` (JetStream, a store of its own) on a free port.
    pub async fn start(opts: ProcessOptions) -> anyhow::Result<Self> {
        let port = free_port()?;
        let mut procs = Self {
            opts,
            nats_url: format!("nats://127.0.0.1:{port}"),
            nats_port: Some(port),
            nats_store: tempfile::tempdir()?,
            nats: None,
            common_env: Vec::new(),
            services: Vec::new(),
        };
        procs.start_nats().await?;
        Ok(procs)
    }

    /// Starts no `nats-server`: the services use `nats_url` (a cluster's
    /// comma-separated node URLs, say) and `common_env` on top of the
    /// common settings (`UPTIME_NATS__STREAM_REPLICAS`, say).
    pub fn on_nats(
        opts: ProcessOptions,
        nats_url: String,
        common_env: &[(&str, String)],
    ) -> anyhow::Result<Self> {
        Ok(Self {
            opts,
            nats_url,
            nats_port: None,
            nats_store: tempfile::tempdir()?,
            nats: None,
            common_env: common_env
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
            services: Vec::new(),
        })
    }

    pub fn nats_url(&self) -> String {
        self.nats_url.clone()
    }

    async fn start_nats(&mut self) -> anyhow::Result<()> {
        let port = self
            .nats_port
            .context("started on another's NATS: no nats-server of its own")?;
        let child = Command::new(&self.opts.nats_server)
            .args(["-js", "-a", "127.0.0.1", "-p", &port.to_string(), "-sd"])
            .arg(self.nats_store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .context("start nats-server")?;
        self.nats = Some(child);
        wait_for_port(port).await
    }

    /// Starts the service binary `name` with the common settings (database,
    /// NATS, private targets allowed, JSON logs) and `env` on top.
    pub fn start_service(
        &mut self,
        name: &'static str,
        env: &[(&str, String)],
    ) -> anyhow::Result<()> {
        self.start_named(name, name, env)
    }

    /// Starts the binary `binary` as `label` (two replicas of one service
    /// need two labels); its log is `label.log`.
    pub fn start_named(
        &mut self,
        label: &str,
        binary: &'static str,
        env: &[(&str, String)],
    ) -> anyhow::Result<()> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect();
        let child = self.spawn(label, binary, &env)?;
        self.services.push(Proc {
            label: label.to_string(),
            binary,
            env,
            child,
        });
        Ok(())
    }

    fn spawn(&self, name: &str, binary: &str, env: &[(String, String)]) -> anyhow::Result<Child> {
        // UPTIME_BENCH_LOG_DIR keeps each service's log (info and up).
        let (log, level) = match std::env::var_os("UPTIME_BENCH_LOG_DIR") {
            Some(dir) => {
                std::fs::create_dir_all(&dir)?;
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
        Command::new(self.opts.bin_dir.join(binary))
            .env("UPTIME_DATABASE__URL", &self.opts.db_url)
            .env("UPTIME_NATS__URL", &self.nats_url)
            .env("UPTIME_OPS__LISTEN", "127.0.0.1:0")
            .env("UPTIME_SAFETY__ALLOW_PRIVATE_TARGETS", "true")
            .env("UPTIME_TELEMETRY__LOG_FORMAT", "json")
            .env("UPTIME_TELEMETRY__LOG_LEVEL", &level)
            .envs(self.common_env.iter().map(|(k, v)| (k, v)))
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
            .find(|p| p.label == name)
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
            .position(|p| p.label == name)
            .context("no such service")?;
        let proc = &self.services[at];
        let child = self.spawn(name, proc.binary, &proc.env)?;
        self.services[at].child = child;
        Ok(())
    }

    /// The process ids, by name (`nats` and each service).
    pub fn pids(&self) -> Vec<(String, u32)> {
        let nats = self
            .nats
            .as_ref()
            .and_then(Child::id)
            .map(|p| ("nats".to_string(), p));
        nats.into_iter()
            .chain(
                self.services
                    .iter()
                    .filter_map(|p| p.child.id().map(|id| (p.label.clone(), id))),
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

/// Where the release binaries are: `UPTIME_BENCH_BIN_DIR` (`just bench`
/// names it), else the workspace's `target/release`.
pub fn bin_dir() -> PathBuf {
    std::env::var("UPTIME_BENCH_BIN_DIR")
        .map(Into::into)
        .unwrap_or_else(|_| repo().join("target/release"))
}

/// The `nats-server` binary: `UPTIME_TEST_NATS_SERVER`, else the one on `PATH`.
pub fn nats_server() -> PathBuf {
    std::env::var("UPTIME_TEST_NATS_SERVER")
        .unwrap_or_else(|_| "nats-server".into())
        .into()
}

/// `scripts/pg.sh` (or `UPTIME_BENCH_PG_SCRIPT`), for the PostgreSQL fault.
pub fn pg_script() -> PathBuf {
    std::env::var("UPTIME_BENCH_PG_SCRIPT")
        .map(Into::into)
        .unwrap_or_else(|_| repo().join("scripts/pg.sh"))
}

/// The PostgreSQL cluster `just bench` runs (`UPTIME_BENCH_PG_CLUSTER` and
/// `UPTIME_BENCH_PG_PORT`): its name and port, when both are set.
pub fn pg_cluster() -> Option<(String, u16)> {
    std::env::var("UPTIME_BENCH_PG_CLUSTER").ok().zip(
        std::env::var("UPTIME_BENCH_PG_PORT")
            .ok()
            .and_then(|p| p.parse().ok()),
    )
}

fn repo() -> PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A user named `name` with a key, made by the gateway's admin command (of
/// `bin_dir`) as an operator would; the key.
pub async fn create_user(
    bin_dir: &std::path::Path,
    db_url: &str,
    name: &str,
) -> anyhow::Result<String> {
    let out = tokio::process::Command::new(bin_dir.join("api-gateway"))
        .args(["create-user", "--name", name])
        .env("UPTIME_DATABASE__URL", db_url)
        .env("UPTIME_TELEMETRY__LOG_LEVEL", "error")
        .output()
        .await?;
    anyhow::ensure!(
        out.status.success(),
        "create-user failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)?
        .lines()
        .last()
        .map(|l| l.trim().to_string())
        .context("create-user printed no key")
}

/// nginx (`binary`) in the foreground on `conf`, written to `dir` (its
/// prefix, where it keeps its pid, logs and temp files); ready once
/// `port` answers. Killed when the child is dropped.
pub async fn start_nginx(
    binary: &std::path::Path,
    dir: &std::path::Path,
    conf: String,
    port: u16,
) -> anyhow::Result<Child> {
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf)?;
    let child = Command::new(binary)
        .arg("-p")
        .arg(dir)
        .arg("-c")
        .arg(&conf_path)
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("start {}", binary.display()))?;
    wait_for_port(port).await?;
    Ok(child)
}
