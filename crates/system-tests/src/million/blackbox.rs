//! Prometheus' blackbox_exporter probing the same target, for scale: probes
//! per CPU-second of the exporter, beside our checks per CPU-second.

use super::procstat::{self, Tree};
use crate::processes::{free_port, wait_for_port};
use anyhow::Context;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;
use tokio::process::Command;

#[derive(Debug)]
pub struct Probes {
    pub per_second: f64,
    /// Cores the exporter used while probing as fast as it could.
    pub cores: f64,
}

impl Probes {
    pub fn per_cpu_second(&self) -> f64 {
        self.per_second / self.cores.max(1e-9)
    }
}

/// Runs `binary` with one http module and asks it to probe `target` as fast
/// as `concurrency` scrapers at a time can, for `length`.
pub async fn measure(
    binary: &Path,
    target: &str,
    concurrency: usize,
    length: Duration,
) -> anyhow::Result<Probes> {
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("blackbox.yml");
    std::fs::write(
        &config,
        "modules:\n  http_2xx:\n    prober: http\n    timeout: 5s\n    http:\n      preferred_ip_protocol: ip4\n",
    )?;
    let port = free_port()?;
    let child = Command::new(binary)
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--web.listen-address=127.0.0.1:{port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .with_context(|| format!("start {}", binary.display()))?;
    wait_for_port(port).await?;
    let tree = Tree {
        name: "blackbox_exporter".into(),
        root: child.id().context("exporter exited")?,
    };
    // Scrapers keep their connection to the exporter, as Prometheus does; the
    // exporter opens a fresh one to the target for every probe.
    let client = reqwest::Client::new();
    let url = format!("http://127.0.0.1:{port}/probe?module=http_2xx&target={target}");
    let first = client.get(&url).send().await?.text().await?;
    anyhow::ensure!(
        first.contains("probe_success 1"),
        "blackbox_exporter cannot probe {target}: {first}"
    );
    let before = procstat::read(std::slice::from_ref(&tree));
    let per_second = crate::request_rate(&client, &url, concurrency, length).await;
    let after = procstat::read(std::slice::from_ref(&tree));
    let (cores, _) = procstat::cores_between(&before, &after);
    drop(child);
    Ok(Probes {
        per_second,
        cores: cores[0],
    })
}
