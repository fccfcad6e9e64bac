//! `just bench`: throughput, lateness and memory of the pipeline on this
//! machine, everything on loopback, against real PostgreSQL and NATS.
//!
//! Stages (each prints its figures; `UPTIME_BENCH_ONLY=a,b` picks some):
//! - `baseline`:  plain fresh-connection HTTP requests to the target;
//! - `pipeline`:  due message → checker → recorder → stored row, checks/s;
//! - `lateness`:  scheduler + checker + recorder at a sustained rate, due → check start;
//! - `scheduler`: the scheduler alone at 100k monitors / 10 s and 1M / 60 s;
//! - `burst`:     publishing 100k due checks;
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

use anyhow::Context;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use std::time::{Duration, Instant};
use system_tests::{env_usize, percentile, Stack, StackOptions};
use uptime_contracts::{CheckSpec, DueCheck, Message, MonitorKind};
use uptime_testkit::target::TargetServer;
use uptime_testkit::TestEnv;

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
        baseline().await?;
    }
    if wanted("pipeline") {
        pipeline().await?;
    }
    if wanted("lateness") {
        lateness().await?;
    }
    if wanted("scheduler") {
        scheduler_alone(100_000, 10).await?;
        scheduler_alone(1_000_000, 60).await?;
    }
    if wanted("burst") {
        burst().await?;
    }
    if wanted("on-demand") {
        on_demand().await?;
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
        let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        system_tests::fairness_bench::run(system_tests::fairness_bench::FairnessOptions {
            idle_secs: env_usize("UPTIME_BENCH_FAIRNESS_IDLE_SECS", 10) as u64,
            flood_secs: env_usize("UPTIME_BENCH_FAIRNESS_SECS", 25) as u64,
            parallel: env_usize("UPTIME_BENCH_FAIRNESS_PARALLEL", 4),
            items: env_usize("UPTIME_BENCH_FAIRNESS_ITEMS", 999),
            assertions: env_usize("UPTIME_BENCH_FAIRNESS_ASSERTIONS", 20),
            bin_dir: std::env::var("UPTIME_BENCH_BIN_DIR")
                .map(Into::into)
                .unwrap_or_else(|_| repo.join("target/release")),
            nats_server: std::env::var("UPTIME_TEST_NATS_SERVER")
                .unwrap_or_else(|_| "nats-server".into())
                .into(),
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
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let opts = al::AlertLatencyOptions {
        monitors: env_usize("UPTIME_BENCH_ALERT_MONITORS", 40),
        contacts: 10,
        interval_secs: env_usize("UPTIME_BENCH_ALERT_INTERVAL", 5) as i32,
        timeout_secs: 2,
        confirmation_count: 1,
        bin_dir: std::env::var("UPTIME_BENCH_BIN_DIR")
            .map(Into::into)
            .unwrap_or_else(|_| repo.join("target/release")),
        nats_server: std::env::var("UPTIME_TEST_NATS_SERVER")
            .unwrap_or_else(|_| "nats-server".into())
            .into(),
        pg_script: std::env::var("UPTIME_BENCH_PG_SCRIPT")
            .map(Into::into)
            .unwrap_or_else(|_| repo.join("scripts/pg.sh")),
        pg_cluster: std::env::var("UPTIME_BENCH_PG_CLUSTER").ok().zip(
            std::env::var("UPTIME_BENCH_PG_PORT")
                .ok()
                .and_then(|p| p.parse().ok()),
        ),
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

/// Fresh-connection GETs against the target, 256 at a time, for 5 s.
async fn baseline() -> anyhow::Result<()> {
    let target = TargetServer::start().await;
    let rate = system_tests::fresh_connection_rate(&target.url("/")).await?;
    println!("baseline   plain fresh-connection requests: {rate:.0} req/s");
    Ok(())
}

/// Inserts a user and `n` monitors of `interval` seconds pointing at `target`,
/// already checked now (so the scheduler does not fire them all at once).
async fn seed_monitors(
    env: &TestEnv,
    n: usize,
    interval: i32,
    target: &str,
) -> anyhow::Result<i64> {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await?;
    let user = uptime_db::users::create(&mut conn, "bench").await?.id;
    diesel::sql_query(
        "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs, expected_status,
                               confirmation_count, ssl_warn_days, active, last_checked_at, status)
         SELECT $1, 'm' || g, 'http', $2, $3, 5, 200, 1, 30, true, now(), 'up' FROM generate_series(1, $4) g",
    )
    .bind::<BigInt, _>(user)
    .bind::<Text, _>(target)
    .bind::<Integer, _>(interval)
    .bind::<Integer, _>(n as i32)
    .execute(&mut conn)
    .await?;
    Ok(user)
}

async fn count(env: &TestEnv, sql: &str) -> anyhow::Result<i64> {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }
    let mut conn = uptime_db::pool::conn(&env.db.pool).await?;
    Ok(diesel::sql_query(sql).get_result::<N>(&mut conn).await?.n)
}

/// A due check of `monitor_id` as the scheduler publishes it. The bench
/// queues its whole backlog at once on purpose: an interval of an hour keeps
/// the checkers from skipping its tail as stale.
fn due(monitor_id: i64, target: &str) -> DueCheck {
    let spec = CheckSpec {
        kind: MonitorKind::Http,
        target: target.to_string(),
        timeout_secs: 5,
        expected_status: 200,
        keyword: None,
        keyword_type: None,
        options: Default::default(),
    };
    system_tests::scheduled_due(monitor_id, &spec, 3600).expect("a valid http check")
}

/// Due checks published as fast as possible; measures due message → stored result.
async fn pipeline() -> anyhow::Result<()> {
    let n = env_usize("UPTIME_BENCH_PIPELINE_CHECKS", 30_000);
    let stack = Stack::start(StackOptions {
        scheduler: false,
        notifier: false,
        gateway: false,
        checker_concurrency: 512,
        ..Default::default()
    })
    .await?;
    let target = TargetServer::start().await;
    let monitors = 1_000;
    seed_monitors(&stack.env, monitors, 3600, &target.url("/")).await?;
    let first_id = count(&stack.env, "SELECT min(id) AS n FROM monitors").await?;
    let (_, js) = stack.env.nats.jetstream().await;
    let msgs: Vec<_> = (0..n)
        .map(|i| due(first_id + (i % monitors) as i64, &target.url("/")))
        .collect();

    let started = Instant::now();
    system_tests::publish_all(&js, msgs).await?;
    loop {
        let stored = count(&stack.env, "SELECT count(*) AS n FROM check_results").await?;
        if stored as usize >= n {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(600),
            "only {stored} of {n} stored"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let elapsed = started.elapsed();
    println!(
        "pipeline   {n} checks due → stored (fresh connection each, 1 checker, 1 recorder): {:.0} checks/s ({:.1} s)",
        n as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// The scheduler, a checker and the recorder at a sustained rate.
async fn lateness() -> anyhow::Result<()> {
    let monitors = env_usize("UPTIME_BENCH_LATENESS_MONITORS", 50_000);
    let interval = 10;
    let run_for = Duration::from_secs(env_usize("UPTIME_BENCH_LATENESS_SECS", 30) as u64);
    let env = TestEnv::start().await;
    let target = TargetServer::start().await;
    seed_monitors(&env, monitors, interval, &target.url("/")).await?;
    let started_at = chrono::Utc::now();
    let stack = Stack::start_on(
        env,
        StackOptions {
            notifier: false,
            gateway: false,
            checker_concurrency: 512,
            ..Default::default()
        },
    )
    .await?;
    tokio::time::sleep(run_for).await;
    let until = chrono::Utc::now();

    #[derive(diesel::QueryableByName)]
    struct Late {
        #[diesel(sql_type = diesel::sql_types::Double)]
        ms: f64,
    }
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    // Skip the first interval: the scheduler's start-up catch-up is not steady state.
    let mut late: Vec<f64> = diesel::sql_query(
        "SELECT (EXTRACT(EPOCH FROM (checked_at - due_at)) * 1000.0)::float8 AS ms FROM check_results
         WHERE trigger = 'scheduled' AND due_at >= $1 AND due_at < $2",
    )
    .bind::<diesel::sql_types::Timestamptz, _>(
        started_at + chrono::Duration::seconds(interval as i64),
    )
    .bind::<diesel::sql_types::Timestamptz, _>(until)
    .load::<Late>(&mut conn)
    .await?
    .into_iter()
    .map(|l| l.ms)
    .collect();
    late.sort_by(|a, b| a.total_cmp(b));
    let window = (until - started_at).num_milliseconds() as f64 / 1000.0 - interval as f64;
    println!(
        "lateness   {monitors} monitors every {interval} s ({:.0} checks/s offered): {:.0} checks/s stored; due → check start p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} checks)",
        monitors as f64 / interval as f64,
        late.len() as f64 / window,
        percentile(&late, 0.5),
        percentile(&late, 0.99),
        late.last().copied().unwrap_or(f64::NAN),
        late.len()
    );
    Ok(())
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

/// The scheduler alone: publish lateness (due → message received on the
/// subject) and memory per monitor.
async fn scheduler_alone(monitors: usize, interval: i32) -> anyhow::Result<()> {
    let env = TestEnv::start().await;
    seed_monitors(&env, monitors, interval, "http://127.0.0.1:9/").await?;
    let (client, js) = env.nats.jetstream().await;
    // Every region's due checks of the version the scheduler publishes.
    let mut tap = client.subscribe(format!("{}.>", DueCheck::SUBJECT)).await?;
    let stop_tap = tokio_util::sync::CancellationToken::new();
    let stop = stop_tap.clone();
    let tap_task = tokio::spawn(async move {
        let mut late = Vec::new();
        loop {
            let msg = tokio::select! {
                msg = tap.next() => msg,
                _ = stop.cancelled() => break,
            };
            let Some(msg) = msg else { break };
            let received = chrono::Utc::now();
            if let Ok(due) = DueCheck::from_bytes(&msg.payload) {
                let ms = (received - due.due_at).num_microseconds().unwrap_or(0) as f64 / 1000.0;
                late.push((due.due_at, ms));
            }
        }
        late
    });

    let rss_before = rss_bytes();
    let scheduler = scheduler::Scheduler::new(
        env.db.pool.clone(),
        js.clone(),
        scheduler::settings::ScheduleSettings::default(),
    );
    let stats = scheduler.stats();
    let shutdown = tokio_util::sync::CancellationToken::new();
    let token = shutdown.clone();
    let run = tokio::spawn(async move { scheduler.run(token).await });
    let load_started = Instant::now();
    while stats.loads() == 0 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let load_time = load_started.elapsed();
    // Slots that passed between seeding and the end of the first load are
    // caught up at once (late by design); steady state starts here.
    let loaded_at = chrono::Utc::now();
    let rss_loaded = rss_bytes();
    // One full interval plus a little: every monitor is due once.
    tokio::time::sleep(Duration::from_secs(interval as u64 + 3)).await;
    let bytes_per_monitor = stats.bytes_per_monitor();
    shutdown.cancel();
    let _ = run.await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    stop_tap.cancel();
    let mut late: Vec<f64> = tap_task
        .await
        .unwrap_or_default()
        .into_iter()
        .filter(|(due_at, _)| *due_at >= loaded_at)
        .map(|(_, ms)| ms)
        .collect();
    late.sort_by(|a, b| a.total_cmp(b));
    println!(
        "scheduler  {monitors} monitors every {interval} s: loaded in {:.1} s; published {} ({:.0}/s); steady-state due → on the subject p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms; memory {} B/monitor (timeline structure), {:.0} B/monitor (process RSS growth)",
        load_time.as_secs_f64(),
        stats.published(),
        stats.published() as f64 / (interval as f64 + 3.0),
        percentile(&late, 0.5),
        percentile(&late, 0.99),
        late.last().copied().unwrap_or(f64::NAN),
        bytes_per_monitor,
        rss_loaded.saturating_sub(rss_before) as f64 / monitors as f64,
    );
    Ok(())
}

/// 100,000 due checks published with many acks in flight.
async fn burst() -> anyhow::Result<()> {
    let n = 100_000;
    let nats = uptime_testkit::TestNats::start().await;
    let (_, js) = nats.jetstream().await;
    let msgs: Vec<_> = (0..n)
        .map(|i| due(i as i64, "http://127.0.0.1:9/"))
        .collect();
    let took = system_tests::publish_all(&js, msgs).await?;
    println!(
        "burst      {n} due checks published and acknowledged in {:.2} s ({:.0}/s)",
        took.as_secs_f64(),
        n as f64 / took.as_secs_f64()
    );
    Ok(())
}

/// `POST /monitors/{id}/check` → its row in `check_results`, one at a time.
async fn on_demand() -> anyhow::Result<()> {
    let rounds = env_usize("UPTIME_BENCH_ON_DEMAND_ROUNDS", 200);
    let stack = Stack::start(StackOptions {
        notifier: false,
        scheduler: false,
        ..Default::default()
    })
    .await?;
    let target = TargetServer::start().await;
    let key = stack.new_user("bench").await?;
    let (_, m) = stack
        .call(
            reqwest::Method::POST,
            "/api/v1/monitors",
            &key,
            Some(serde_json::json!({"name": "t", "type": "http", "target": target.url("/"), "interval_secs": 86400})),
        )
        .await?;
    let id = m["id"].as_i64().context("monitor id")?;
    let mut took = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let started = Instant::now();
        let (_, body) = stack
            .call(
                reqwest::Method::POST,
                &format!("/api/v1/monitors/{id}/check"),
                &key,
                None,
            )
            .await?;
        let check_id = body["check_id"].as_str().context("check_id")?.to_string();
        let sql = format!("SELECT count(*) AS n FROM check_results WHERE check_id = '{check_id}'");
        while count(&stack.env, &sql).await? == 0 {
            anyhow::ensure!(
                started.elapsed() < Duration::from_secs(10),
                "check {check_id} never stored"
            );
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        took.push(started.elapsed().as_secs_f64() * 1000.0);
    }
    took.sort_by(|a, b| a.total_cmp(b));
    println!(
        "on-demand  API call → stored result ({rounds} sequential): p50 {:.1} ms, p99 {:.1} ms",
        percentile(&took, 0.5),
        percentile(&took, 0.99)
    );
    Ok(())
}
