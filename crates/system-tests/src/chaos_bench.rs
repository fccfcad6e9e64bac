//! `UPTIME_BENCH_ONLY=chaos just bench`: the pipeline on a three-node
//! JetStream cluster under load, one fault at a time, judged by what the
//! table saw.
//!
//! Every service is a release binary of its own (two scheduler replicas
//! sharing the shards, two checkers, the recorder, the notifier, the
//! api-gateway), on the cluster with streams and buckets at R3, against the
//! bench's PostgreSQL cluster; so a fault is a real SIGKILL of a real
//! process. The faults, one after another with a settle period between:
//! SIGKILL of a NATS node, of the `UPTIME_CHECKS` stream leader, a network
//! partition of that leader from the other two (through the route proxies
//! of `TestNatsCluster`), SIGKILL of the scheduler replica holding the most
//! shards and of the recorder (each started again after the window), and a
//! PostgreSQL immediate stop and start (`scripts/pg.sh`; skipped, saying so,
//! without the `UPTIME_BENCH_PG_*` variables `just bench` sets).
//!
//! Per fault one row: the slots the monitors were due from the fault's start
//! to one interval after its end, computed from each monitor's schedule
//! ([`judge`]), how many were stored, never stored (skipped) and stored more
//! than once (doubled), how late the stored ones were, and whether every
//! state change of a few monitors whose target fails during the window was
//! alerted once ([`alerts`]). The stage fails when any fault skipped or
//! doubled a slot.

mod alerts;
mod faults;
mod judge;
mod setup;

use crate::env_usize;
use chrono::Utc;
use faults::Fault;
use std::path::PathBuf;
use std::time::{Duration, Instant};

pub struct ChaosOptions {
    pub monitors: usize,
    pub interval_secs: u64,
    /// How long each fault lasts.
    pub fault_secs: u64,
    /// Monitors whose target fails during each fault, alerting a webhook.
    pub alerting: usize,
    /// Where the service binaries are (`target/release`).
    pub bin_dir: PathBuf,
    /// `scripts/pg.sh`, the cluster's name and port: for the PostgreSQL fault.
    pub pg_script: PathBuf,
    pub pg_cluster: Option<(String, u16)>,
}

impl ChaosOptions {
    /// `UPTIME_BENCH_CHAOS_{MONITORS,INTERVAL,FAULT_SECS,ALERTING}` over the
    /// defaults (10,000 monitors every 10 s: 1,000 checks/s, what two cores
    /// carry with three NATS nodes at R3 beside every service and
    /// PostgreSQL — at 3,000 checks/s they fell 30–40 s behind before any
    /// fault; 20 s faults; 10 alerting monitors), the binaries and PostgreSQL cluster `just bench`
    /// names in `UPTIME_BENCH_BIN_DIR` and `UPTIME_BENCH_PG_*`.
    pub fn from_env() -> Self {
        Self {
            monitors: env_usize("UPTIME_BENCH_CHAOS_MONITORS", 10_000),
            interval_secs: env_usize("UPTIME_BENCH_CHAOS_INTERVAL", 10) as u64,
            fault_secs: env_usize("UPTIME_BENCH_CHAOS_FAULT_SECS", 20) as u64,
            alerting: env_usize("UPTIME_BENCH_CHAOS_ALERTING", 10),
            bin_dir: crate::processes::bin_dir(),
            pg_script: crate::processes::pg_script(),
            pg_cluster: crate::processes::pg_cluster(),
        }
    }
}

const FAULTS: [Fault; 6] = [
    Fault::KillNode(1),
    Fault::KillChecksLeader,
    Fault::PartitionChecksLeader,
    Fault::KillBusiestScheduler,
    Fault::KillRecorder,
    Fault::RestartPostgres,
];

pub async fn run(opts: ChaosOptions) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut world = setup::start(&opts).await?;
    let interval = Duration::from_secs(opts.interval_secs.max(1));
    let window = Duration::from_secs(opts.fault_secs);
    println!(
        "chaos: {} monitors every {} s ({:.0} checks/s) + {} alerting, on a three-node NATS cluster at R3; \
         2 schedulers, 2 checkers, recorder, notifier, api-gateway as processes; {} s faults",
        opts.monitors,
        opts.interval_secs,
        opts.monitors as f64 / opts.interval_secs.max(1) as f64,
        opts.alerting,
        opts.fault_secs,
    );
    // The first checks of every monitor are a catch-up (they were all
    // created before the schedulers started): let it pass, and the first
    // up alerts go out, before the first fault.
    let settle = (interval * 2).max(window);
    tokio::time::sleep(settle + interval).await;

    println!(
        "| fault | slots due | stored | skipped | doubled | stored late p50 / p99 / max | state changes alerted once |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    let mut failed = Vec::new();
    for fault in FAULTS {
        if matches!(fault, Fault::RestartPostgres) && opts.pg_cluster.is_none() {
            println!(
                "| {} | not run: UPTIME_BENCH_PG_CLUSTER and UPTIME_BENCH_PG_PORT unset (`just bench` sets them) | | | | | |",
                fault.name()
            );
            continue;
        }
        let alerts_before = world.hook.received().len();
        let counters_before = faults::SkipCounters::read(&world).await;
        let from = Utc::now();
        world.flip.set_status(503);
        let (injected, hit) = faults::inject(&mut world, &opts, fault).await?;
        tokio::time::sleep(window).await;
        faults::recover(&mut world, &opts, injected).await?;
        world.flip.set_status(200);
        // The window's slots: the fault's, and one interval after it (the
        // slots a restarted or re-elected part has to catch up).
        let until = Utc::now() + chrono::Duration::from_std(interval)?;
        tokio::time::sleep(interval * 2).await;
        let verdict = settled_verdict(&world, from, until, settle).await?;
        let by_design = faults::SkipCounters::read(&world)
            .await
            .since(counters_before);
        let changed = alerts::changed(
            &world.db.pool,
            from,
            from - chrono::Duration::from_std(settle)?,
        )
        .await?;
        let alerts = alerts::tally(&world.hook.received()[alerts_before..], changed);
        // The start's time of day matches the row with the services' logs.
        let at = from.format("%H:%M:%S");
        let name = match hit.as_str() {
            "" => format!("{} (at {at})", fault.name()),
            hit => format!("{} ({hit}, at {at})", fault.name()),
        };
        let off = match verdict.off_schedule {
            0 => String::new(),
            n => format!(" (+{n} off schedule)"),
        };
        let skipped = match (verdict.skipped, by_design.stale, by_design.superseded) {
            (0, _, _) => "0".to_string(),
            (n, stale, superseded) => format!(
                "{n} (due +{:.1}…+{:.1} s; checkers dropped {stale:.0} stale due checks, schedulers superseded {superseded:.0})",
                verdict.skipped_from_secs, verdict.skipped_to_secs
            ),
        };
        println!(
            "| {name} | {} | {} | {skipped} | {}{off} | {} | {} |",
            verdict.due,
            verdict.stored,
            verdict.doubled,
            verdict.lateness(),
            alerts.cell(),
        );
        if !verdict.clean() {
            failed.push(name);
        }
        tokio::time::sleep(settle).await;
    }
    println!("chaos: {:.0} s in all", started.elapsed().as_secs_f64());
    anyhow::ensure!(
        failed.is_empty(),
        "chaos: slots skipped or doubled under: {}",
        failed.join("; ")
    );
    Ok(())
}

/// The window's verdict once storing has settled: asked again every few
/// seconds while slots are still missing and the count still moves (a
/// recorder catching up on a backlog), for at most `limit` more.
async fn settled_verdict(
    world: &setup::World,
    from: chrono::DateTime<Utc>,
    until: chrono::DateTime<Utc>,
    limit: Duration,
) -> anyhow::Result<judge::Verdict> {
    let deadline = Instant::now() + limit.max(Duration::from_secs(30));
    let mut verdict = judge_retrying(world, from, until).await?;
    while verdict.skipped > 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_secs(5)).await;
        let again = judge_retrying(world, from, until).await?;
        let moved = again.stored != verdict.stored;
        verdict = again;
        if !moved {
            break;
        }
    }
    Ok(verdict)
}

/// [`judge::judge`], asked again for a while when it fails: after the
/// PostgreSQL fault the pool's connections break once.
async fn judge_retrying(
    world: &setup::World,
    from: chrono::DateTime<Utc>,
    until: chrono::DateTime<Utc>,
) -> anyhow::Result<judge::Verdict> {
    let mut attempts = 0;
    loop {
        match judge::judge(&world.db.pool, from, until).await {
            Ok(verdict) => return Ok(verdict),
            Err(error) if attempts < 20 => {
                attempts += 1;
                eprintln!("chaos: reading the results failed ({error:#}); asking again");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(error) => return Err(error),
        }
    }
}
