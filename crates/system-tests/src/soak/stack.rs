//! The README's stack, exactly as `./dev up` starts it (`scripts/up.sh`:
//! debug builds, every service a process of its own), on the ports and in
//! the state directory `scripts/soak.sh` chose (`UPTIME_LOCAL_*`), so it
//! never meets a developer's own `./dev up`. The driver starts it (its
//! targets and SMTP listener must be up first) and reads what it left in
//! `$UPTIME_LOCAL_DIR/run`: each service's log, pid and, once the stack
//! supervises its services, its restart count and start time.

use anyhow::Context;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};

/// The services `scripts/up.sh` starts (one checker: one region), and
/// each one's ops port after the base (`UPTIME_LOCAL_OPS_PORT_BASE`).
pub const SERVICES: [(&str, u16); 6] = [
    ("api-gateway", 0),
    ("scheduler", 1),
    ("checker", 2),
    ("recorder", 3),
    ("notifier", 4),
    ("status-pages", 5),
];

/// Where the stack is.
#[derive(Debug, Clone)]
pub struct StackConfig {
    pub repo: PathBuf,
    pub local: PathBuf,
    pub api_port: u16,
    pub status_pages_port: u16,
    pub pg_port: u16,
    pub smtp_port: u16,
    pub ops_base: u16,
}

fn env_port(name: &str) -> anyhow::Result<u16> {
    std::env::var(name)
        .with_context(|| format!("{name} is not set (scripts/soak.sh sets it)"))?
        .parse()
        .with_context(|| format!("{name} is not a port"))
}

impl StackConfig {
    pub fn from_env() -> anyhow::Result<Self> {
        let local = PathBuf::from(
            std::env::var("UPTIME_LOCAL_DIR").context("UPTIME_LOCAL_DIR is not set")?,
        );
        let repo = match std::env::var("UPTIME_SOAK_REPO") {
            Ok(r) => PathBuf::from(r),
            Err(_) => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."),
        };
        Ok(Self {
            repo,
            local,
            api_port: env_port("UPTIME_LOCAL_API_PORT")?,
            status_pages_port: env_port("UPTIME_LOCAL_STATUS_PAGES_PORT")?,
            pg_port: env_port("UPTIME_LOCAL_PG_PORT")?,
            smtp_port: env_port("UPTIME_LOCAL_SMTP_PORT")?,
            ops_base: env_port("UPTIME_LOCAL_OPS_PORT_BASE")?,
        })
    }

    pub fn run_dir(&self) -> PathBuf {
        self.local.join("run")
    }

    pub fn api_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.api_port)
    }

    pub fn status_pages_url(&self) -> String {
        format!("http://127.0.0.1:{}", self.status_pages_port)
    }

    pub fn database_url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/uptime", self.pg_port)
    }
}

/// Runs `scripts/up.sh` with `extra_env`, its output in `log` (and on
/// stderr), and answers the demo key it prints on its last lines.
pub async fn up(
    config: &StackConfig,
    extra_env: &[(&str, String)],
    log: &Path,
) -> anyhow::Result<String> {
    let mut command = tokio::process::Command::new("bash");
    command
        .arg(config.repo.join("scripts/up.sh"))
        .current_dir(&config.repo)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in extra_env {
        command.env(k, v);
    }
    let mut child = command.spawn().context("running scripts/up.sh")?;
    let (out, err) = (
        child.stdout.take().expect("piped"),
        child.stderr.take().expect("piped"),
    );
    let mut lines = Vec::new();
    let mut file = std::fs::File::create(log)?;
    let mut out = BufReader::new(out).lines();
    let mut err = BufReader::new(err).lines();
    let (mut out_open, mut err_open) = (true, true);
    while out_open || err_open {
        let line = tokio::select! {
            l = out.next_line(), if out_open => match l? { Some(l) => l, None => { out_open = false; continue } },
            l = err.next_line(), if err_open => match l? { Some(l) => l, None => { err_open = false; continue } },
        };
        use std::io::Write;
        writeln!(file, "{line}")?;
        eprintln!("  up.sh | {line}");
        lines.push(line);
    }
    let status = child.wait().await?;
    anyhow::ensure!(
        status.success(),
        "scripts/up.sh failed ({status}); its output: {}",
        log.display()
    );
    key_from(&lines).with_context(|| {
        format!(
            "no API key in the output of scripts/up.sh ({})",
            log.display()
        )
    })
}

/// The key on the line after "API key:".
fn key_from(lines: &[String]) -> Option<String> {
    let at = lines.iter().rposition(|l| l.contains("API key:"))?;
    lines[at + 1..]
        .iter()
        .map(|l| l.trim())
        .find(|l| l.starts_with("upt_"))
        .map(str::to_string)
}

/// What the run directory says of one service (`scripts/supervise.sh`
/// keeps `NAME.pid`, the supervisor, `NAME.child.pid`, the service,
/// `NAME.restarts` and `NAME.started`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceState {
    pub name: &'static str,
    pub pid: Option<u32>,
    pub alive: bool,
    /// `NAME.restarts`, when the stack supervises its services.
    pub restarts: Option<u64>,
    /// `NAME.started` (epoch seconds), likewise.
    pub started: Option<i64>,
}

fn read_number<T: std::str::FromStr>(path: &Path) -> Option<T> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

pub fn service_states(config: &StackConfig) -> Vec<ServiceState> {
    let run = config.run_dir();
    SERVICES
        .iter()
        .map(|(name, _)| {
            // Under a supervisor (`NAME.pid`), the service is `NAME.child.pid`.
            let supervisor: Option<u32> = read_number(&run.join(format!("{name}.pid")));
            let child: Option<u32> = read_number(&run.join(format!("{name}.child.pid")));
            let running =
                |pid: Option<u32>| pid.is_some_and(|p| Path::new(&format!("/proc/{p}")).exists());
            let pid = child.or(supervisor);
            ServiceState {
                name,
                pid,
                alive: running(supervisor) && running(pid),
                restarts: read_number(&run.join(format!("{name}.restarts"))),
                started: read_number(&run.join(format!("{name}.started"))),
            }
        })
        .collect()
}

/// `GET /healthz` and `/readyz` of every service's ops port: the services
/// that did not answer 200 to both.
pub async fn unhealthy(config: &StackConfig, http: &reqwest::Client) -> Vec<String> {
    let mut bad = Vec::new();
    for (name, offset) in SERVICES {
        for path in ["/healthz", "/readyz"] {
            let url = format!("http://127.0.0.1:{}{path}", config.ops_base + offset);
            let answer = http.get(&url).timeout(Duration::from_secs(5)).send().await;
            match answer {
                Ok(r) if r.status().is_success() => {}
                Ok(r) => bad.push(format!("{name} {path}: {}", r.status())),
                Err(e) => bad.push(format!("{name} {path}: {e}")),
            }
        }
    }
    bad
}

pub fn log_of(config: &StackConfig, service: &str) -> String {
    std::fs::read(config.run_dir().join(format!("{service}.log")))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_read_from_the_last_lines() {
        let lines: Vec<String> = [
            "==> starting",
            "Demo user's API key:",
            "  upt_abc123",
            "",
            "Try it:",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(key_from(&lines).as_deref(), Some("upt_abc123"));
        assert_eq!(key_from(&lines[..1]), None);
    }
}
