//! The `regions` stage of `just bench`: rounds per second and checks per
//! second with three regions beside one, on this machine, and the time from
//! a round's last regional result to its stored verdict.
//!
//! One stack per run: a checker per region (all on this machine: the
//! regions are names here, the work is the same), the recorder; `rounds`
//! rounds of http checks against a loopback target published at once as
//! `check-due.v4` (one message per region per round). Counted where the
//! work lands: rows in `check_results` and decided rows in `check_rounds`.

use crate::{count, Stack, StackOptions};
use diesel::sql_types::{BigInt, Double};
use diesel_async::RunQueryDsl;
use std::time::{Duration, Instant};
use uptime_contracts::{check_id_in_round, DueCheck, MonitorKind, Trigger};
use uptime_testkit::target::TargetServer;

pub struct RegionsOptions {
    /// Rounds per run.
    pub rounds: usize,
}

struct RunFigures {
    rounds_per_sec: f64,
    checks_per_sec: f64,
    /// Last regional result → stored verdict, p50 and p99 (ms); none for one region.
    verdict_ms: Option<(f64, f64)>,
}

pub async fn run(options: RegionsOptions) -> anyhow::Result<()> {
    println!(
        "regions    {} rounds of http checks due → decided, a checker per region (concurrency 256), 1 recorder, loopback target",
        options.rounds
    );
    let one = one_run(&["default"], options.rounds).await?;
    let three = one_run(&["eu", "us", "ap"], options.rounds).await?;
    for (label, f) in [("1 region ", &one), ("3 regions", &three)] {
        let verdict = match f.verdict_ms {
            Some((p50, p99)) => {
                format!("; last regional result → verdict p50 {p50:.1} ms, p99 {p99:.1} ms")
            }
            None => " (a round of one is its result)".to_string(),
        };
        println!(
            "  {label}: {:.0} rounds/s, {:.0} checks/s{verdict}",
            f.rounds_per_sec, f.checks_per_sec
        );
    }
    println!(
        "  3 regions vs 1: {:.0}% of the rounds/s, {:.0}% of the checks/s",
        100.0 * three.rounds_per_sec / one.rounds_per_sec,
        100.0 * three.checks_per_sec / one.checks_per_sec
    );
    Ok(())
}

async fn one_run(regions: &[&str], rounds: usize) -> anyhow::Result<RunFigures> {
    let regions: Vec<String> = regions.iter().map(|r| r.to_string()).collect();
    let multi = regions.len() > 1;
    let stack = Stack::start(StackOptions {
        scheduler: false,
        notifier: false,
        gateway: false,
        checker_concurrency: 256,
        regions: if multi { regions.clone() } else { Vec::new() },
        ..Default::default()
    })
    .await?;
    let target = TargetServer::start().await;
    let monitors = 1_000;
    let first_id = seed(&stack, monitors, &target.url("/")).await?;
    let (_, js) = stack.env.nats.jetstream().await;
    let spec = crate::due::plain_spec(MonitorKind::Http, target.url("/"));
    let now = chrono::Utc::now();
    let mut dues = Vec::with_capacity(rounds * regions.len());
    for i in 0..rounds {
        let round_id = uuid::Uuid::new_v4();
        for region in &regions {
            dues.push(DueCheck {
                check_id: check_id_in_round(round_id, region, regions.len()),
                monitor_id: first_id + (i % monitors) as i64,
                definition_version: 1,
                // An hour: the whole backlog is queued at once on purpose.
                interval_secs: 3600,
                trigger: Trigger::Scheduled,
                due_at: now,
                spec: spec.clone(),
                region: region.clone(),
                round_id,
            });
        }
    }
    let checks = dues.len();
    let started = Instant::now();
    crate::publish_all(&js, dues).await?;
    let done_sql = if multi {
        "SELECT count(*) AS n FROM check_rounds WHERE decided_at IS NOT NULL"
    } else {
        "SELECT count(*) AS n FROM check_results"
    };
    loop {
        let done = count(&stack, done_sql).await?;
        if done as usize >= rounds {
            break;
        }
        anyhow::ensure!(
            started.elapsed() < Duration::from_secs(900),
            "only {done} of {rounds} rounds decided"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let secs = started.elapsed().as_secs_f64();
    let verdict_ms = if multi {
        Some(verdict_latency(&stack).await?)
    } else {
        None
    };
    Ok(RunFigures {
        rounds_per_sec: rounds as f64 / secs,
        checks_per_sec: checks as f64 / secs,
        verdict_ms,
    })
}

/// Each decided round: its decision time minus when its last regional
/// result was produced (the check's start plus its latency), p50 and p99.
async fn verdict_latency(stack: &Stack) -> anyhow::Result<(f64, f64)> {
    #[derive(diesel::QueryableByName)]
    struct Ms {
        #[diesel(sql_type = Double)]
        ms: f64,
    }
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    let mut ms: Vec<f64> = diesel::sql_query(
        "SELECT (EXTRACT(EPOCH FROM (r.decided_at - max(c.checked_at + c.latency_ms * interval '1 millisecond'))) * 1000.0)::float8 AS ms
         FROM check_rounds r JOIN check_results c ON c.round_id = r.round_id
         WHERE r.decided_at IS NOT NULL GROUP BY r.round_id, r.decided_at",
    )
    .load::<Ms>(&mut conn)
    .await?
    .into_iter()
    .map(|m| m.ms)
    .collect();
    ms.sort_by(|a, b| a.total_cmp(b));
    Ok((crate::percentile(&ms, 0.5), crate::percentile(&ms, 0.99)))
}

/// A user and `n` http monitors of `target` (the deployment's regions,
/// majority quorum); the first id.
async fn seed(stack: &Stack, n: usize, target: &str) -> anyhow::Result<i64> {
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    let user = uptime_db::users::create(&mut conn, "bench-regions")
        .await?
        .id;
    diesel::sql_query(
        "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs, expected_status,
                               confirmation_count, ssl_warn_days, active, last_checked_at, status)
         SELECT $1, 'm' || g, 'http', $2, 3600, 5, 200, 1, 30, true, now(), 'up' FROM generate_series(1, $3) g",
    )
    .bind::<BigInt, _>(user)
    .bind::<diesel::sql_types::Text, _>(target)
    .bind::<BigInt, _>(n as i64)
    .execute(&mut conn)
    .await?;
    count(stack, "SELECT min(id) AS n FROM monitors").await
}
