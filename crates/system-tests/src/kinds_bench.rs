//! The `kinds` stage of `just bench`: checks per second end to end and CPU
//! per check for each monitor kind (http beside tcp, tls, dns and icmp),
//! against loopback servers, with the probe alone beside each as the
//! machine's own ceiling for that kind.
//!
//! For each kind:
//! - ceiling: the checker's probe alone (no NATS, no database), `CONCURRENCY`
//!   checks at a time in this process: checks/s and this process's CPU per
//!   check;
//! - pipeline: `checks` due messages (`check-due.v3`) published at once to a
//!   checker and a recorder; checks/s counted where the work lands (rows in
//!   `check_results`), and the whole machine's busy CPU per stored check
//!   (our services, NATS, PostgreSQL and the loopback target together).
//!
//! Everything runs on loopback with private targets allowed (the bench's
//! settings, never a deployment's default).

use crate::million::procstat;
use crate::{count, Stack, StackOptions};
use anyhow::Context;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use std::time::{Duration, Instant};
use uptime_contracts::{CheckOutcome, CheckSpec, DnsQuery, DnsRecordType, DueCheck, MonitorKind};
use uptime_testkit::dns::{DnsServer, Record, Zone};
use uptime_testkit::target::TargetServer;

/// Checks in flight for the probe-alone ceiling (the checker's concurrency
/// in the pipeline is the same).
const CONCURRENCY: usize = 256;

pub struct KindsOptions {
    /// Due checks per kind through the pipeline.
    pub checks: usize,
    /// Checks per kind for the probe alone.
    pub probe_checks: usize,
}

/// The loopback server a kind's checks go to, kept alive for the run.
struct KindTarget {
    spec: CheckSpec,
    ca_pem_path: Option<std::path::PathBuf>,
    _http: Option<TargetServer>,
    _dns: Option<DnsServer>,
    _ca_file: Option<tempfile::NamedTempFile>,
}

impl KindTarget {
    async fn start(kind: MonitorKind) -> anyhow::Result<Self> {
        let spec = |target: String| crate::due::plain_spec(kind, target);
        Ok(match kind {
            MonitorKind::Http | MonitorKind::Tcp => {
                let server = TargetServer::start().await;
                let target = if kind == MonitorKind::Http {
                    server.url("/")
                } else {
                    server.addr().to_string()
                };
                Self {
                    spec: spec(target),
                    ca_pem_path: None,
                    _http: Some(server),
                    _dns: None,
                    _ca_file: None,
                }
            }
            MonitorKind::Tls => {
                let server = TargetServer::start_https().await;
                let mut ca = tempfile::NamedTempFile::new()?;
                std::io::Write::write_all(&mut ca, server.ca_pem().as_bytes())?;
                Self {
                    spec: spec(format!("localhost:{}", server.addr().port())),
                    ca_pem_path: Some(ca.path().to_path_buf()),
                    _http: Some(server),
                    _dns: None,
                    _ca_file: Some(ca),
                }
            }
            MonitorKind::Dns => {
                let server = DnsServer::start(vec![
                    Zone::new("example.test").record("bench", Record::A("192.0.2.10".parse()?))
                ])
                .await;
                let mut s = spec("bench.example.test".into());
                s.options.dns = Some(DnsQuery {
                    record_type: DnsRecordType::A,
                    expected: vec!["192.0.2.10".into()],
                    server: Some(server.addr().to_string()),
                });
                Self {
                    spec: s,
                    ca_pem_path: None,
                    _http: None,
                    _dns: Some(server),
                    _ca_file: None,
                }
            }
            MonitorKind::Icmp => Self {
                spec: spec("127.0.0.1".into()),
                ca_pem_path: None,
                _http: None,
                _dns: None,
                _ca_file: None,
            },
            MonitorKind::Keyword | MonitorKind::Heartbeat => {
                anyhow::bail!("no kinds-bench target for {}", kind.as_str())
            }
        })
    }
}

/// The figures of one kind.
struct KindFigures {
    probe_rate: f64,
    probe_cpu_ms: f64,
    probe_failed: usize,
    pipeline_rate: f64,
    machine_cpu_ms: f64,
    pipeline_failed: i64,
}

pub async fn run(options: KindsOptions) -> anyhow::Result<()> {
    println!(
        "kinds      per kind: the probe alone ({} checks, {CONCURRENCY} at a time; the ceiling) and {} checks due → stored (1 checker at concurrency {CONCURRENCY}, 1 recorder); loopback targets",
        options.probe_checks, options.checks
    );
    println!(
        "  {:<6} {:>18} {:>16} {:>8} {:>20} {:>22} {:>8}",
        "kind",
        "probe alone/s",
        "CPU ms/check",
        "failed",
        "pipeline stored/s",
        "machine CPU ms/check",
        "failed"
    );
    for kind in [
        MonitorKind::Http,
        MonitorKind::Tcp,
        MonitorKind::Tls,
        MonitorKind::Dns,
        MonitorKind::Icmp,
    ] {
        let f = one_kind(kind, &options)
            .await
            .with_context(|| format!("kind {}", kind.as_str()))?;
        println!(
            "  {:<6} {:>18.0} {:>16.3} {:>8} {:>20.0} {:>22.3} {:>8}",
            kind.as_str(),
            f.probe_rate,
            f.probe_cpu_ms,
            f.probe_failed,
            f.pipeline_rate,
            f.machine_cpu_ms,
            f.pipeline_failed
        );
    }
    println!("  (probe CPU: this process; machine CPU: every process, services, NATS, PostgreSQL and target together, per stored check)");
    Ok(())
}

async fn one_kind(kind: MonitorKind, options: &KindsOptions) -> anyhow::Result<KindFigures> {
    let target = KindTarget::start(kind).await?;
    let (probe_rate, probe_cpu_ms, probe_failed) =
        probe_alone(&target, options.probe_checks).await?;

    let stack = Stack::start(StackOptions {
        scheduler: false,
        notifier: false,
        gateway: false,
        checker_concurrency: CONCURRENCY,
        extra_root_ca_pem: target.ca_pem_path.clone(),
        ..Default::default()
    })
    .await?;
    let monitors = 1_000;
    let first_id = seed(&stack, kind, &target.spec.target, monitors).await?;
    let (_, js) = stack.env.nats.jetstream().await;
    let n = options.checks;
    // An hour's interval: the whole backlog is queued at once on purpose,
    // and must not be skipped as stale.
    let msgs: Vec<DueCheck> = (0..n)
        .map(|i| crate::scheduled_due(first_id + (i % monitors) as i64, &target.spec, 3600))
        .collect::<anyhow::Result<_>>()?;

    let before = procstat::machine_ticks();
    let started = Instant::now();
    crate::publish_all(&js, msgs).await?;
    crate::measure::wait_until_stored(n, started, Duration::from_millis(20), async || {
        count(&stack, "SELECT count(*) AS n FROM check_results").await
    })
    .await?;
    let elapsed = started.elapsed().as_secs_f64();
    let after = procstat::machine_ticks();
    let busy_secs = after.0.saturating_sub(before.0) as f64 / procstat::ticks_per_second();
    let failed = count(
        &stack,
        "SELECT count(*) AS n FROM check_results WHERE status = 'down'",
    )
    .await?;
    Ok(KindFigures {
        probe_rate,
        probe_cpu_ms,
        probe_failed,
        pipeline_rate: n as f64 / elapsed,
        machine_cpu_ms: busy_secs * 1000.0 / n as f64,
        pipeline_failed: failed,
    })
}

/// The checker's probe for `target`, alone: checks/s, this process's CPU
/// milliseconds per check, and how many failed.
async fn probe_alone(target: &KindTarget, n: usize) -> anyhow::Result<(f64, f64, usize)> {
    let mut settings = checker::settings::CheckerSettings::default();
    settings.safety.allow_private_targets = true;
    settings.checker.extra_root_ca_pem = target.ca_pem_path.clone();
    let probes = checker::probes::Probes::from_settings(&settings)?;
    let cpu_before = own_cpu_secs();
    let started = Instant::now();
    let failed = futures::stream::iter(0..n)
        .map(|_| probes.check(&target.spec, None))
        .buffer_unordered(CONCURRENCY)
        .filter(|report| std::future::ready(report.outcome == CheckOutcome::Fail))
        .count()
        .await;
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = own_cpu_secs() - cpu_before;
    Ok((n as f64 / elapsed, cpu * 1000.0 / n as f64, failed))
}

/// CPU seconds this process has used (user + system).
fn own_cpu_secs() -> f64 {
    let text = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let rest = text.rfind(')').map_or("", |i| &text[i + 2..]);
    let f: Vec<u64> = rest
        .split_whitespace()
        .filter_map(|v| v.parse().ok())
        .collect();
    // utime and stime are fields 14 and 15 of stat (11 and 12 after the name and state).
    let ticks = f.get(10).copied().unwrap_or(0) + f.get(11).copied().unwrap_or(0);
    ticks as f64 / procstat::ticks_per_second()
}

/// Inserts a user and `n` active monitors of `kind` at `target`; the first id.
async fn seed(stack: &Stack, kind: MonitorKind, target: &str, n: usize) -> anyhow::Result<i64> {
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    let user = uptime_db::users::create(&mut conn, "bench-kinds").await?.id;
    diesel::sql_query(
        "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs, expected_status,
                               confirmation_count, ssl_warn_days, active, last_checked_at, status)
         SELECT $1, 'm' || g, $2, $3, 3600, 5, 200, 1, 30, true, now(), 'up' FROM generate_series(1, $4) g",
    )
    .bind::<BigInt, _>(user)
    .bind::<Text, _>(kind.as_str())
    .bind::<Text, _>(target)
    .bind::<BigInt, _>(n as i64)
    .execute(&mut conn)
    .await?;
    count(stack, "SELECT min(id) AS n FROM monitors").await
}
