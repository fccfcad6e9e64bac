//! `just bench`: throughput, lateness and memory of the pipeline on this
//! machine, everything on loopback, against real PostgreSQL and NATS.
//!
//! Stages (each prints its figures; `UPTIME_BENCH_ONLY=a,b` picks some):
//! - `baseline`:  plain fresh-connection HTTP requests to the target;
//! - `pipeline`:  due message → checker → recorder → stored row, checks/s;
//! - `lateness`:  scheduler + checker + recorder at a sustained rate, due → check start;
//! - `scheduler`: the scheduler alone at 100k monitors / 10 s and 1M / 60 s;
//! - `burst`:     publishing 100k due checks, on one node and on three at R3;
//! - `on-demand`: API call → stored result;
//! - `regions`:   rounds/s and checks/s with three regions beside one, and
//!   the time from a round's last regional result to its verdict;
//! - `kinds`:     checks/s end to end and CPU per check for each monitor kind
//!   (http, tcp, tls, dns, icmp) against loopback servers, beside each
//!   kind's probe alone;
//! - `alert-latency`: target turns failing → webhook received, undisturbed and
//!   under one fault each (SIGKILL of a service or NATS, PostgreSQL stopped);
//! - `million`:   a million monitors at 300 s created through the bulk API,
//!   every service a process of its own, an nginx target: jitter where the
//!   checks land, CPU and memory per process, API latency under the load;
//! - `storage`:   bytes per stored result, dropping a day of results, the
//!   results and daily-uptime endpoints on millions of rows, checks/s while
//!   partitions are dropped.
//! - `fairness`:  another user's `GET /api/v1/monitors` latency, idle and
//!   while one user floods bulk creates that are expensive to validate.
//! - `status-pages`: a status page and a badge under load beside nginx
//!   serving a static file of the same bytes, and PostgreSQL's transactions
//!   per view.
//! - `chaos` (not in the default run: about eight minutes at its default
//!   size): every service a process of its own (two scheduler replicas,
//!   two checkers) on a three-node NATS cluster at R3, 30,000 monitors every
//!   10 s; a NATS node, the stream leader, the busiest scheduler and the
//!   recorder SIGKILLed in turn, the stream leader partitioned from the other
//!   nodes, PostgreSQL stopped and started: per fault the slots due, stored,
//!   skipped and doubled, lateness, alerts; fails if any slot was lost or
//!   doubled.
//! - `apply`:     10,000 monitors (`UPTIME_BENCH_APPLY_MONITORS`) written to
//!   files, planned and applied through uptimectl's code against a real
//!   gateway, then planned again (all unchanged): the time of each.

use system_tests::{env_usize, percentile, pipeline_bench};

fn wanted(stage: &str) -> bool {
    match std::env::var("UPTIME_BENCH_ONLY") {
        Ok(list) if !list.is_empty() => list.split(',').any(|s| s.trim() == stage),
        _ => true,
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    println!(
        "uptime benchmark: {} cores, everything on loopback",
        std::thread::available_parallelism()?.get()
    );
    if wanted("baseline") {
        pipeline_bench::baseline().await?;
    }
    if wanted("pipeline") {
        pipeline_bench::pipeline().await?;
    }
    if wanted("lateness") {
        pipeline_bench::lateness().await?;
    }
    if wanted("scheduler") {
        pipeline_bench::scheduler_alone(100_000, 10).await?;
        pipeline_bench::scheduler_alone(1_000_000, 60).await?;
    }
    if wanted("burst") {
        pipeline_bench::burst().await?;
    }
    if wanted("on-demand") {
        pipeline_bench::on_demand().await?;
    }
    if wanted("regions") {
        system_tests::regions_bench::run(system_tests::regions_bench::RegionsOptions {
            rounds: env_usize("UPTIME_BENCH_REGIONS_ROUNDS", 10_000),
        })
        .await?;
    }
    if wanted("kinds") {
        system_tests::kinds_bench::run(system_tests::kinds_bench::KindsOptions {
            checks: env_usize("UPTIME_BENCH_KINDS_CHECKS", 20_000),
            probe_checks: env_usize("UPTIME_BENCH_KINDS_PROBE_CHECKS", 20_000),
        })
        .await?;
    }
    if wanted("alert-latency") {
        alert_latency().await?;
    }
    if wanted("storage") {
        system_tests::storage_bench::run(system_tests::storage_bench::StorageOptions {
            days: env_usize("UPTIME_BENCH_STORAGE_DAYS", 10) as u32,
            rows_per_day: env_usize("UPTIME_BENCH_STORAGE_ROWS_PER_DAY", 1_000_000) as u64,
            monitors: env_usize("UPTIME_BENCH_STORAGE_MONITORS", 10_000) as i64,
            requests: env_usize("UPTIME_BENCH_STORAGE_REQUESTS", 300),
            checks: env_usize("UPTIME_BENCH_STORAGE_CHECKS", 20_000),
        })
        .await?;
    }
    if wanted("fairness") {
        system_tests::fairness_bench::run(system_tests::fairness_bench::FairnessOptions {
            idle_secs: env_usize("UPTIME_BENCH_FAIRNESS_IDLE_SECS", 10) as u64,
            flood_secs: env_usize("UPTIME_BENCH_FAIRNESS_SECS", 25) as u64,
            parallel: env_usize("UPTIME_BENCH_FAIRNESS_PARALLEL", 4),
            items: env_usize("UPTIME_BENCH_FAIRNESS_ITEMS", 999),
            assertions: env_usize("UPTIME_BENCH_FAIRNESS_ASSERTIONS", 20),
            bin_dir: system_tests::processes::bin_dir(),
            nats_server: system_tests::processes::nats_server(),
        })
        .await?;
    }
    if wanted("status-pages") {
        system_tests::status_pages_bench::run(
            system_tests::status_pages_bench::StatusPagesOptions::from_env(),
        )
        .await?;
    }
    // Only when asked for: at its default size it runs for about eight
    // minutes (six faults, each with its window and a settle period).
    if std::env::var("UPTIME_BENCH_ONLY")
        .is_ok_and(|only| only.split(',').any(|s| s.trim() == "chaos"))
    {
        system_tests::chaos_bench::run(system_tests::chaos_bench::ChaosOptions::from_env()).await?;
    }
    if wanted("apply") {
        system_tests::apply_bench::run(system_tests::apply_bench::ApplyBenchOptions::from_env())
            .await?;
    }
    if wanted("million") {
        system_tests::million::run(system_tests::million::MillionOptions::from_env()?).await?;
    }
    Ok(())
}

/// Target switched to failing → the webhook receiver's request, p50/p99,
/// once undisturbed and once under each single fault, beside the floor the
/// configuration allows.
async fn alert_latency() -> anyhow::Result<()> {
    use system_tests::alert_latency::{self as al, Fault};
    let opts = al::AlertLatencyOptions {
        monitors: env_usize("UPTIME_BENCH_ALERT_MONITORS", 40),
        contacts: 10,
        interval_secs: env_usize("UPTIME_BENCH_ALERT_INTERVAL", 5) as i32,
        timeout_secs: 2,
        confirmation_count: 1,
        bin_dir: system_tests::processes::bin_dir(),
        nats_server: system_tests::processes::nats_server(),
        pg_script: system_tests::processes::pg_script(),
        pg_cluster: system_tests::processes::pg_cluster(),
    };
    let mut faults = vec![Fault::None];
    faults.extend(["checker", "recorder", "scheduler", "notifier", "nats"].map(Fault::Kill));
    if opts.pg_cluster.is_some() {
        faults.push(Fault::PostgresStop);
    }
    // UPTIME_BENCH_FAULTS=scheduler,postgres picks some (plus the undisturbed run).
    if let Ok(only) = std::env::var("UPTIME_BENCH_FAULTS") {
        faults.retain(|f| match f {
            Fault::None => true,
            Fault::Kill(name) => only.split(',').any(|o| o.trim() == *name),
            Fault::PostgresStop => only.split(',').any(|o| o.trim() == "postgres"),
        });
    }
    let floor = (opts.interval_secs * opts.confirmation_count + opts.timeout_secs) as f64;
    println!(
        "alert latency: {} monitors → {} webhook receivers; floor = interval {} s × confirmation {} + timeout {} s = {floor:.1} s",
        opts.monitors, opts.contacts, opts.interval_secs, opts.confirmation_count, opts.timeout_secs
    );
    println!(
        "  {:<28} {:>17} {:>8} {:>17} {:>8} {:>8} {:>9}",
        "fault (1 s after the switch)",
        "switch→alert p50",
        "p99",
        "check→alert p50",
        "p99",
        "missing",
        "repeated"
    );
    for r in al::run(opts, &faults).await? {
        println!(
            "  {:<28} {:>16.3}s {:>7.3}s {:>16.3}s {:>7.3}s {:>8} {:>9}",
            r.fault.label(),
            percentile(&r.from_switch, 0.5),
            percentile(&r.from_switch, 0.99),
            percentile(&r.from_check, 0.5),
            percentile(&r.from_check, 0.99),
            r.missing,
            r.repeated,
        );
    }
    println!("  (check→alert: from the confirming check's start to the receiver, what the pipeline adds)");
    Ok(())
}
