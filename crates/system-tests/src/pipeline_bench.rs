//! The bench stages of the pipeline's own parts: the plain-request
//! ceiling (`baseline`), due message → stored row (`pipeline`), the
//! scheduler with a checker and the recorder at a sustained rate
//! (`lateness`), the scheduler alone (`scheduler`), publishing (`burst`)
//! and the manual check (`on-demand`). `uptime-bench` runs them.

use crate::{count, env_usize, percentile, Stack, StackOptions};
use anyhow::Context;
use diesel::sql_types::{BigInt, Integer, Text};
use diesel_async::RunQueryDsl;
use futures::StreamExt;
use std::time::{Duration, Instant};
use uptime_contracts::{DueCheck, Message, MonitorKind};
use uptime_testkit::target::TargetServer;
use uptime_testkit::TestEnv;

/// Fresh-connection GETs against the target, 256 at a time, for 5 s.
pub async fn baseline() -> anyhow::Result<()> {
    let target = TargetServer::start().await;
    let rate = crate::fresh_connection_rate(&target.url("/")).await?;
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

/// A due check of `monitor_id` as the scheduler publishes it. The bench
/// queues its whole backlog at once on purpose: an interval of an hour keeps
/// the checkers from skipping its tail as stale.
fn due(monitor_id: i64, target: &str) -> DueCheck {
    let spec = crate::due::plain_spec(MonitorKind::Http, target.to_string());
    crate::scheduled_due(monitor_id, &spec, 3600).expect("a valid http check")
}

/// Due checks published as fast as possible; measures due message → stored result.
pub async fn pipeline() -> anyhow::Result<()> {
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
    let first_id = count(&stack, "SELECT min(id) AS n FROM monitors").await?;
    let (_, js) = stack.env.nats.jetstream().await;
    let msgs: Vec<_> = (0..n)
        .map(|i| due(first_id + (i % monitors) as i64, &target.url("/")))
        .collect();

    let started = Instant::now();
    crate::publish_all(&js, msgs).await?;
    crate::measure::wait_until_stored(n, started, Duration::from_millis(50), async || {
        count(&stack, "SELECT count(*) AS n FROM check_results").await
    })
    .await?;
    let elapsed = started.elapsed();
    println!(
        "pipeline   {n} checks due → stored (fresh connection each, 1 checker, 1 recorder): {:.0} checks/s ({:.1} s)",
        n as f64 / elapsed.as_secs_f64(),
        elapsed.as_secs_f64()
    );
    Ok(())
}

/// The scheduler, a checker and the recorder at a sustained rate.
pub async fn lateness() -> anyhow::Result<()> {
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
pub async fn scheduler_alone(monitors: usize, interval: i32) -> anyhow::Result<()> {
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

/// 100,000 due checks published with many acks in flight: on one node, then
/// on a three-node cluster with the streams at R3 (each publish acknowledged
/// only once two of the three nodes hold it), the figure the capacity model
/// in docs/operations.md takes a stream's throughput from.
pub async fn burst() -> anyhow::Result<()> {
    let n = 100_000;
    let msgs = || -> Vec<_> {
        (0..n)
            .map(|i| due(i as i64, "http://127.0.0.1:9/"))
            .collect()
    };
    let report = |what: &str, took: Duration| {
        println!(
            "burst      {n} due checks published and acknowledged, {what}, in {:.2} s ({:.0}/s)",
            took.as_secs_f64(),
            n as f64 / took.as_secs_f64()
        )
    };
    let nats = uptime_testkit::TestNats::start().await;
    let (_, js) = nats.jetstream().await;
    report("one node", crate::publish_all(&js, msgs()).await?);
    drop(nats);
    let cluster = uptime_testkit::TestNatsCluster::start().await;
    let (_, js) = cluster.jetstream().await;
    report("three nodes at R3", crate::publish_all(&js, msgs()).await?);
    Ok(())
}

/// `POST /monitors/{id}/check` → its row in `check_results`, one at a time.
pub async fn on_demand() -> anyhow::Result<()> {
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
        while count(&stack, &sql).await? == 0 {
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
