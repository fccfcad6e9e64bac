//! The "million" stage's target: nginx on loopback, answering 200 to
//! everything and writing one access-log line per request (`$msec $uri`), so
//! interval jitter is measured where the checks land, not where they leave.

use crate::processes::free_port;
use anyhow::Context;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tokio::process::Child;

pub struct Nginx {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Child,
}

impl Nginx {
    pub async fn start(binary: &Path) -> anyhow::Result<Self> {
        let dir = tempfile::tempdir()?;
        let port = free_port()?;
        let d = dir.path().display();
        // One worker: the target's own cost stays small and easy to read.
        let conf = format!(
            "daemon off;\nworker_processes 1;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
             events {{ worker_connections 16384; }}\n\
             http {{\n  log_format t '$msec $uri';\n  access_log {d}/access.log t buffer=256k flush=1s;\n\
               client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n\
               fastcgi_temp_path {d}/fastcgi;\n  uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
               server {{ listen 127.0.0.1:{port} backlog=8192; location / {{ return 200 \"ok\\n\"; }} }}\n}}\n"
        );
        let child = crate::processes::start_nginx(binary, dir.path(), conf, port).await?;
        Ok(Self { port, dir, child })
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    pub fn access_log(&self) -> PathBuf {
        self.dir.path().join("access.log")
    }
}

/// Arrival times (seconds since the epoch) per path starting with `prefix`.
pub fn arrivals(log: &Path, prefix: &str) -> anyhow::Result<HashMap<String, Vec<f64>>> {
    let text = std::fs::read_to_string(log).context("read the access log")?;
    let mut out: HashMap<String, Vec<f64>> = HashMap::new();
    for line in text.lines() {
        let Some((at, path)) = line.split_once(' ') else {
            continue;
        };
        if let (Ok(at), true) = (at.parse::<f64>(), path.starts_with(prefix)) {
            out.entry(path.to_string()).or_default().push(at);
        }
    }
    for times in out.values_mut() {
        times.sort_by(f64::total_cmp);
    }
    Ok(out)
}

/// How far apart each monitor's checks landed, against its interval.
#[derive(Debug, Default)]
pub struct Jitter {
    /// |gap − interval| in seconds, ascending, over every gap between two
    /// scheduled checks (a monitor's first check is a catch-up, not a slot:
    /// the gap after it is left out).
    pub seconds: Vec<f64>,
    /// Gaps under half an interval: one slot checked twice (a redelivery).
    pub repeats: usize,
}

/// Over the gaps that end at or after `since` (seconds since the epoch).
pub fn jitter(arrivals: &HashMap<String, Vec<f64>>, interval_secs: f64, since: f64) -> Jitter {
    let mut out = Jitter::default();
    for times in arrivals.values() {
        let gaps = times.windows(2).skip(1).filter(|w| w[1] >= since);
        for gap in gaps.map(|w| w[1] - w[0]) {
            if gap < interval_secs / 2.0 {
                out.repeats += 1;
            } else {
                out.seconds.push((gap - interval_secs).abs());
            }
        }
    }
    out.seconds.sort_by(f64::total_cmp);
    out
}

/// Requests that arrived within `[from, to)` (seconds since the epoch).
pub fn count_between(arrivals: &HashMap<String, Vec<f64>>, from: f64, to: f64) -> usize {
    arrivals
        .values()
        .map(|t| t.iter().filter(|a| (from..to).contains(*a)).count())
        .sum()
}
