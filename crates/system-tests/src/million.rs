//! The benchmark's "million" stage: a million http monitors at
//! the default 300 s interval, created through the bulk API, on this one
//! machine with everything on it: PostgreSQL, NATS, every service as its own
//! release binary, and an nginx target whose access log says when each check
//! landed. Prints creation time, checks/s offered and delivered, each
//! consumer's backlog, interval jitter at the target, CPU and memory per
//! process, API read latency under the load, and blackbox_exporter's probes
//! per CPU-second for scale.

mod blackbox;
pub(crate) mod load;
pub(crate) mod procstat;
mod target;

use crate::processes::{free_port, wait_for_port, ProcessOptions, Processes, PIPELINE_SERVICES};
use crate::{env_usize, percentile};
use anyhow::Context;
use procstat::Tree;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use uptime_testkit::TestDb;

#[derive(Debug, Clone)]
pub struct MillionOptions {
    pub monitors: usize,
    pub interval_secs: u32,
    /// How long the pipeline runs after the last monitor was created.
    pub run_secs: u64,
    /// Monitors per bulk request.
    pub batch: usize,
    pub bin_dir: PathBuf,
    pub nats_server: PathBuf,
    pub nginx: PathBuf,
    /// `prometheus-blackbox-exporter`, when installed.
    pub blackbox: Option<PathBuf>,
    /// The bench cluster's port, to find its postmaster.
    pub pg_port: Option<u16>,
}

impl MillionOptions {
    /// `UPTIME_BENCH_MILLION_{MONITORS,INTERVAL,SECS,BATCH}` over the
    /// defaults (a million at 300 s, 720 s, 500 per request), the binaries
    /// `just bench` built, nginx and blackbox_exporter where Debian puts them.
    pub fn from_env() -> anyhow::Result<Self> {
        let which = |bin: &str| {
            ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin"]
                .iter()
                .map(|d| std::path::Path::new(d).join(bin))
                .find(|p| p.exists())
        };
        Ok(Self {
            monitors: env_usize("UPTIME_BENCH_MILLION_MONITORS", 1_000_000),
            interval_secs: env_usize("UPTIME_BENCH_MILLION_INTERVAL", 300) as u32,
            run_secs: env_usize("UPTIME_BENCH_MILLION_SECS", 720) as u64,
            batch: env_usize("UPTIME_BENCH_MILLION_BATCH", 500),
            bin_dir: crate::processes::bin_dir(),
            nats_server: crate::processes::nats_server(),
            nginx: which("nginx").context("nginx not installed (just bench installs it)")?,
            blackbox: which("prometheus-blackbox-exporter"),
            pg_port: std::env::var("UPTIME_BENCH_PG_PORT")
                .ok()
                .and_then(|p| p.parse().ok()),
        })
    }
}

pub async fn run(opts: MillionOptions) -> anyhow::Result<()> {
    let db = TestDb::create().await;
    let nginx = target::Nginx::start(&opts.nginx).await?;
    let ceiling = crate::fresh_connection_rate(&nginx.url("/ceiling")).await?;
    let offered = opts.monitors as f64 / f64::from(opts.interval_secs);
    println!(
        "million    {} http monitors every {} s = {offered:.0} checks/s offered, nginx target; \
         plain fresh-connection requests to it: {ceiling:.0} req/s",
        opts.monitors, opts.interval_secs
    );

    let mut procs = Processes::start(ProcessOptions {
        bin_dir: opts.bin_dir.clone(),
        nats_server: opts.nats_server.clone(),
        db_url: db.url.clone(),
    })
    .await?;
    let api_port = free_port()?;
    let api = format!("http://127.0.0.1:{api_port}");
    procs.start_service(
        "api-gateway",
        &[
            ("UPTIME_HTTP__LISTEN", format!("127.0.0.1:{api_port}")),
            ("UPTIME_HTTP__PUBLIC_BASE_URL", api.clone()),
            ("UPTIME_QUOTAS__MONITORS", (opts.monitors * 2).to_string()),
            // Twice the load the monitors make from one region (a million
            // every 300 s: 200,000 checks a minute), as for the count.
            (
                "UPTIME_QUOTAS__CHECKS_PER_MINUTE",
                (opts.monitors * 60 * 2)
                    .div_ceil(opts.interval_secs.max(1) as usize)
                    .to_string(),
            ),
            // The bench is one user creating a million monitors and reading
            // them back: the per-user limit is not what is measured here.
            ("UPTIME_RATE_LIMIT__PER_SECOND", "100000".into()),
            ("UPTIME_RATE_LIMIT__BURST", "100000".into()),
        ],
    )?;
    let scheduler_ops = free_port()?;
    for name in PIPELINE_SERVICES {
        let mut env = vec![("UPTIME_NOTIFIER__INSTANCE_ID", "bench-notifier".to_string())];
        if name == "scheduler" {
            env.push(("UPTIME_OPS__LISTEN", format!("127.0.0.1:{scheduler_ops}")));
        }
        procs.start_service(name, &env)?;
    }
    wait_for_port(api_port).await?;
    wait_for_port(scheduler_ops).await?;
    let key = crate::processes::create_user(&opts.bin_dir, &db.url, "million").await?;

    let started = Instant::now();
    let ids = load::bulk_create(
        &api,
        &key,
        opts.monitors,
        opts.batch,
        4,
        opts.interval_secs,
        &nginx.url(""),
    )
    .await?;
    let creation = started.elapsed().as_secs_f64();
    println!(
        "  created through POST /api/v1/monitors/bulk ({} per request, 4 in flight): {creation:.1} s, {:.0} monitors/s",
        opts.batch,
        ids.len() as f64 / creation
    );

    let mut trees: Vec<Tree> = procs
        .pids()
        .into_iter()
        .map(|(name, root)| Tree { name, root })
        .collect();
    if let Some(pm) = opts.pg_port.and_then(procstat::postmaster) {
        trees.push(Tree {
            name: "postgresql".into(),
            root: pm,
        });
    }
    let target_at = trees.len();
    trees.push(Tree {
        name: "nginx (target)".into(),
        root: nginx.pid().context("nginx exited")?,
    });

    // The steady window is the run's last interval (or its second half when
    // shorter): by then the start-up catch-up is over.
    let run = Duration::from_secs(opts.run_secs);
    let window = run
        .min(Duration::from_secs(u64::from(opts.interval_secs)))
        .min(run / 2);
    let run_end = Instant::now() + run;
    let window_start = run_end - window;
    tokio::time::sleep_until((window_start - window / 2).into()).await;
    let middle_backlog = load::backlogs(&procs.nats_url()).await?;
    tokio::time::sleep_until(window_start.into()).await;

    let metrics_url = format!("http://127.0.0.1:{scheduler_ops}/metrics");
    let published_before = load::counter_sum(&metrics_url, "scheduler_published_total").await?;
    let cpu_before = procstat::read(&trees);
    let wall_before = epoch_secs();
    let reads =
        load::read_latencies(&api, &key, &ids, 4, Duration::from_millis(100), run_end).await;
    let cpu_after = procstat::read(&trees);
    let wall_after = epoch_secs();
    let published_after = load::counter_sum(&metrics_url, "scheduler_published_total").await?;
    let memory: Vec<u64> = trees.iter().map(procstat::pss_bytes).collect();
    let end_backlog = load::backlogs(&procs.nats_url()).await?;
    drop(procs);
    // nginx flushes its log buffer every second.
    tokio::time::sleep(Duration::from_secs(2)).await;

    let arrivals = target::arrivals(&nginx.access_log(), "/m/")?;
    let delivered = target::count_between(&arrivals, wall_before, wall_after) as f64
        / (wall_after - wall_before);
    let window_secs = (cpu_after.at - cpu_before.at).as_secs_f64();
    println!(
        "  steady window (the last {window_secs:.0} s of {} s): scheduler published {:.0} checks/s, {delivered:.0} checks/s landed at the target",
        opts.run_secs,
        (published_after - published_before) / window_secs,
    );
    print_backlogs(
        &middle_backlog,
        &end_backlog,
        (run - window / 2 - window).as_secs(),
    );

    let interval = f64::from(opts.interval_secs);
    for (label, since) in [("the steady window", wall_before), ("the whole run", 0.0)] {
        let jitter = target::jitter(&arrivals, interval, since);
        println!(
            "  interval jitter at the target, gaps ending in {label} (|gap − {} s| between scheduled checks, {} gaps): p50 {:.3} s, p99 {:.3} s, max {:.3} s; slots checked twice: {}",
            opts.interval_secs,
            jitter.seconds.len(),
            percentile(&jitter.seconds, 0.5),
            percentile(&jitter.seconds, 0.99),
            jitter.seconds.last().copied().unwrap_or(f64::NAN),
            jitter.repeats
        );
    }
    for (table, updates, hot) in load::hot_updates(&db.pool).await? {
        println!(
            "  {table}: {updates} row updates, {:.1}% heap-only (no index entries)",
            hot as f64 * 100.0 / updates.max(1) as f64
        );
    }
    let monitors_checked = arrivals.len();
    println!(
        "  monitors checked at least once: {monitors_checked} of {}",
        ids.len()
    );

    let (cores, machine) = procstat::cores_between(&cpu_before, &cpu_after);
    println!("  CPU in the steady window (cores) and memory (PSS) at its end:");
    for ((tree, c), m) in trees.iter().zip(&cores).zip(&memory) {
        println!(
            "    {:<16} {c:>5.2} cores {:>8.1} MiB",
            tree.name,
            *m as f64 / 1048576.0
        );
    }
    let ours: f64 = cores[..target_at].iter().sum();
    println!(
        "    {:<16} {ours:>5.2} cores (without the target); the machine was busy {machine:.2} of {} cores",
        "all of ours",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "  API GET /api/v1/monitors/{{id}} under the load ({} reads): p50 {:.1} ms, p99 {:.1} ms",
        reads.len(),
        percentile(&reads, 0.5) * 1000.0,
        percentile(&reads, 0.99) * 1000.0
    );
    let per_cpu = delivered / ours.max(1e-9);
    match &opts.blackbox {
        Some(bin) => {
            let probes = blackbox::measure(bin, &nginx.url("/blackbox"), 64, Duration::from_secs(20)).await?;
            println!(
                "  end to end (scheduled, checked, stored, state kept): {per_cpu:.0} checks per CPU-second; \
                 blackbox_exporter (probe only, nothing stored): {:.0} probes per CPU-second ({:.0} probes/s on {:.2} cores)",
                probes.per_cpu_second(),
                probes.per_second,
                probes.cores
            );
        }
        None => println!(
            "  end to end: {per_cpu:.0} checks per CPU-second (prometheus-blackbox-exporter not installed: no comparison)"
        ),
    }
    Ok(())
}

fn epoch_secs() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64())
}

fn print_backlogs(middle: &[(String, u64, usize)], end: &[(String, u64, usize)], middle_at: u64) {
    println!(
        "  backlog per consumer (waiting + unacknowledged), at +{middle_at} s and at the end:"
    );
    for (name, pending, unacked) in end {
        let before = middle
            .iter()
            .find(|(n, _, _)| n == name)
            .map_or(0, |(_, p, u)| *p + *u as u64);
        println!(
            "    {name:<40} {before:>9} → {:>9}",
            pending + *unacked as u64
        );
    }
}
