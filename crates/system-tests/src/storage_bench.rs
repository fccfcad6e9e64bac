//! `just bench` storage stage: what a stored result costs on disk, what a
//! purge costs, and how fast the read paths stay on a table of millions.
//!
//! The table is filled in SQL (`generate_series`), a day partition at a time,
//! with rows shaped like the recorder's (a 50th of them failures with an
//! error text), for `monitors` monitors checked evenly through each day. The
//! issue's scale (100,000 monitors at 60 s, 144 million rows a day) does not
//! fit this machine: a day here holds `rows_per_day` rows, and purge figures
//! are also given per million rows.

use crate::{percentile, Stack, StackOptions};
use anyhow::Context;
use chrono::{NaiveDate, Utc};
use diesel::sql_types::{BigInt, Date, Double, Timestamptz};
use diesel_async::RunQueryDsl;
use std::time::{Duration, Instant};
use uptime_contracts::{DueCheck, MonitorKind};
use uptime_retention::RetentionSettings;
use uptime_testkit::target::TargetServer;

/// How the stage is sized (`UPTIME_BENCH_STORAGE_*`).
#[derive(Debug, Clone, Copy)]
pub struct StorageOptions {
    /// Day partitions filled before today.
    pub days: u32,
    pub rows_per_day: u64,
    /// Monitors the rows belong to (the measured one among them).
    pub monitors: i64,
    /// Requests per read-path measurement.
    pub requests: usize,
    /// Due checks per end-to-end throughput run.
    pub checks: usize,
}

#[derive(diesel::QueryableByName)]
struct N {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

#[derive(diesel::QueryableByName)]
struct F {
    #[diesel(sql_type = Double)]
    v: f64,
}

pub async fn run(opts: StorageOptions) -> anyhow::Result<()> {
    let stack = Stack::start(StackOptions {
        scheduler: false,
        notifier: false,
        checker_concurrency: 512,
        ..Default::default()
    })
    .await?;
    let pool = stack.env.db.pool.clone();
    let mut conn = uptime_db::pool::conn(&pool).await?;
    let key = stack.new_user("bench").await?;
    let target = TargetServer::start().await;
    let (_, m) = stack
        .call(
            reqwest::Method::POST,
            "/api/v1/monitors",
            &key,
            Some(serde_json::json!({"name": "measured", "type": "http",
                "target": target.url("/"), "interval_secs": 86400})),
        )
        .await?;
    let measured = m["id"].as_i64().context("monitor id")?;

    // Fill: one day partition at a time, oldest first.
    let today = Utc::now().date_naive();
    let first_day = today - chrono::Days::new(u64::from(opts.days));
    let fill_started = Instant::now();
    for d in 0..opts.days {
        let day = first_day + chrono::Days::new(u64::from(d));
        fill_day(&mut conn, day, opts.rows_per_day, measured, opts.monitors).await?;
    }
    diesel::sql_query("ANALYZE check_results")
        .execute(&mut conn)
        .await?;
    let total = opts.rows_per_day * u64::from(opts.days);
    println!(
        "storage    filled {total} results ({} days × {} rows, {} monitors) in {:.0} s",
        opts.days,
        opts.rows_per_day,
        opts.monitors,
        fill_started.elapsed().as_secs_f64()
    );

    // Bytes on disk per result: every partition's heap, TOAST and indexes.
    let bytes = diesel::sql_query(
        "SELECT sum(pg_total_relation_size(inhrelid))::float8 AS v FROM pg_inherits \
         WHERE inhparent = 'check_results'::regclass",
    )
    .get_result::<F>(&mut conn)
    .await?
    .v;
    let rows = diesel::sql_query("SELECT count(*) AS n FROM check_results")
        .get_result::<N>(&mut conn)
        .await?
        .n;
    println!(
        "storage    {:.0} bytes on disk per stored result (table + indexes, {rows} rows, {:.2} GB)",
        bytes / rows as f64,
        bytes / 1e9
    );

    // The results endpoint's first page, newest first, on the whole table.
    let results = latencies(
        &stack,
        &key,
        &format!("/api/v1/monitors/{measured}/results"),
        opts.requests,
    )
    .await?;
    println!(
        "storage    GET /results first page ({rows} rows in the table): p50 {:.2} ms, p99 {:.2} ms",
        percentile(&results, 0.5),
        percentile(&results, 0.99)
    );

    // A year of daily rollups for the measured monitor.
    diesel::sql_query(
        "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) \
         SELECT $1, $2 - g, 1440, 1440 - (g % 7) FROM generate_series(0, 364) g \
         ON CONFLICT (monitor_id, day) DO NOTHING",
    )
    .bind::<BigInt, _>(measured)
    .bind::<Date, _>(today)
    .execute(&mut conn)
    .await?;
    let daily = latencies(
        &stack,
        &key,
        &format!("/api/v1/monitors/{measured}/uptime/daily?days=365"),
        opts.requests,
    )
    .await?;
    println!(
        "storage    GET /uptime/daily?days=365 (a year of 1-minute checks, from rollups): p50 {:.2} ms, p99 {:.2} ms",
        percentile(&daily, 0.5),
        percentile(&daily, 0.99)
    );

    // End to end, with and without purges running.
    let js = stack.env.nats.jetstream().await.1;
    let quiet = checks_per_second(&stack, &js, &target, measured, opts.checks).await?;
    let purging = tokio::spawn(purge_one_day_at_a_time(
        pool.clone(),
        today,
        opts.days,
        Duration::from_millis(500),
    ));
    let busy = checks_per_second(&stack, &js, &target, measured, opts.checks).await?;
    let drops = purging.await.context("purge task")??;
    println!(
        "storage    checks due → stored: {quiet:.0} checks/s without a purge, {busy:.0} checks/s while {} day partitions were dropped",
        drops.len()
    );
    if !drops.is_empty() {
        let mut ms: Vec<f64> = drops.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        ms.sort_by(|a, b| a.total_cmp(b));
        let per_million = 1e6 / opts.rows_per_day as f64;
        println!(
            "storage    dropping one day ({} rows): p50 {:.1} ms, max {:.1} ms ({:.1} ms per million rows at p50; a partition drop does not read its rows)",
            opts.rows_per_day,
            percentile(&ms, 0.5),
            ms.last().copied().unwrap_or(0.0),
            percentile(&ms, 0.5) * per_million
        );
    }
    Ok(())
}

/// Creates `day`'s partition if needed and fills it with `rows` results,
/// spread evenly through the day over `monitors` monitors from `first_monitor`.
async fn fill_day(
    conn: &mut uptime_db::PooledConn,
    day: NaiveDate,
    rows: u64,
    first_monitor: i64,
    monitors: i64,
) -> anyhow::Result<()> {
    let layout = uptime_db::results::partitions::layout(conn).await?;
    if !layout.days.contains(&day) {
        uptime_db::results::partitions::create_partition(conn, day, layout.has_default).await?;
    }
    let start = uptime_db::results::partitions::start_of(day);
    diesel::sql_query(
        "INSERT INTO check_results (check_id, monitor_id, trigger, status, checked_at, due_at, \
             latency_ms, http_status, error, reporter, definition_version, slot_at) \
         SELECT gen_random_uuid(), $3 + (g % $4), 'scheduled', \
                CASE WHEN g % 50 = 0 THEN 'down' ELSE 'up' END, \
                ts + interval '120 milliseconds', ts, 80 + (g % 400)::int, \
                CASE WHEN g % 50 = 0 THEN 503 ELSE 200 END, \
                CASE WHEN g % 50 = 0 THEN 'expected status 200, got 503' END, \
                'checker-7f9c4d2b', 1, ts \
           FROM (SELECT g, $1 + (g::float8 / $2) * interval '1 day' AS ts \
                   FROM generate_series(0, $2 - 1) g) s",
    )
    .bind::<Timestamptz, _>(start)
    .bind::<BigInt, _>(rows as i64)
    .bind::<BigInt, _>(first_monitor)
    .bind::<BigInt, _>(monitors)
    .execute(conn)
    .await?;
    Ok(())
}

/// Sequential GETs of `path`; latencies in ms, sorted.
async fn latencies(stack: &Stack, key: &str, path: &str, n: usize) -> anyhow::Result<Vec<f64>> {
    // One untimed request warms the connection and the plan cache.
    let (status, body) = stack.call(reqwest::Method::GET, path, key, None).await?;
    anyhow::ensure!(status.is_success(), "{path}: {status} {body}");
    let mut ms = Vec::with_capacity(n);
    for _ in 0..n {
        let started = Instant::now();
        let (status, _) = stack.call(reqwest::Method::GET, path, key, None).await?;
        ms.push(started.elapsed().as_secs_f64() * 1000.0);
        anyhow::ensure!(status.is_success(), "{path}: {status}");
    }
    ms.sort_by(|a, b| a.total_cmp(b));
    Ok(ms)
}

/// Publishes `n` due checks and waits until all are in today's partition;
/// checks per second, counted where they land (rows in the table).
async fn checks_per_second(
    stack: &Stack,
    js: &async_nats::jetstream::Context,
    target: &TargetServer,
    monitor_id: i64,
    n: usize,
) -> anyhow::Result<f64> {
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    let since = Utc::now();
    let count = |conn: &mut uptime_db::PooledConn| {
        diesel::sql_query("SELECT count(*) AS n FROM check_results WHERE slot_at >= $1")
            .bind::<Timestamptz, _>(since)
            .get_result::<N>(conn)
    };
    let before = count(&mut conn).await?.n;
    anyhow::ensure!(before == 0, "today's partition is not empty: {before}");
    let started = Instant::now();
    let spec = crate::due::plain_spec(MonitorKind::Http, target.url("/"));
    let dues: Vec<DueCheck> = (0..n)
        .map(|_| crate::scheduled_due(monitor_id, &spec, 86400))
        .collect::<anyhow::Result<_>>()?;
    crate::publish_all(js, dues).await?;
    crate::measure::wait_until_stored(n, started, Duration::from_millis(50), async || {
        Ok(count(&mut conn).await?.n)
    })
    .await?;
    let rate = n as f64 / started.elapsed().as_secs_f64();
    // The next run counts from an empty slate.
    diesel::sql_query("DELETE FROM check_results WHERE slot_at >= $1")
        .bind::<Timestamptz, _>(since)
        .execute(&mut conn)
        .await?;
    Ok(rate)
}

/// Expires the filled days one by one through the retention maintenance
/// (the recorder's own code path), `pause` apart; how long each drop took.
async fn purge_one_day_at_a_time(
    pool: uptime_db::Pool,
    today: NaiveDate,
    days: u32,
    pause: Duration,
) -> anyhow::Result<Vec<Duration>> {
    let mut took = Vec::new();
    // Keeping `days` days keeps everything filled; each step keeps one less.
    for keep in (1..days).rev() {
        tokio::time::sleep(pause).await;
        let settings = RetentionSettings {
            results_days: keep,
            ..Default::default()
        };
        let mut conn = uptime_db::pool::conn(&pool).await?;
        let started = Instant::now();
        let report = uptime_retention::partitions::maintain(&mut conn, &settings, today).await?;
        if !report.dropped.is_empty() {
            took.push(started.elapsed() / report.dropped.len() as u32);
        }
    }
    Ok(took)
}
