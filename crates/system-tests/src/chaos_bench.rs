//! `UPTIME_BENCH_ONLY=chaos just bench` (a skeleton): the pipeline on a
//! three-node JetStream cluster under load, one fault at a time, judged by
//! what the table saw: per fault, the slots stored in its window, the slots
//! skipped (a gap of more than one interval between a monitor's stored
//! slots) and doubled (one slot stored twice), and how late the slots of
//! the window were stored.
//!
//! Faults run so far: SIGKILL of a NATS node (brought back after the
//! window) and of the stream leader of `UPTIME_CHECKS`. Still to come (each
//! printed as not run): a network partition of one node, SIGKILL of the
//! scheduler leader and of the recorder, a PostgreSQL restart at 3,000
//! checks/s; they need the services as processes of their own (as the
//! `million` stage runs them) rather than this in-process stack.

use crate::{env_usize, percentile, Stack, StackOptions};
use anyhow::Context;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use uptime_db::schema::check_results;
use uptime_testkit::target::TargetServer;

pub struct ChaosOptions {
    pub monitors: usize,
    pub interval_secs: u64,
    /// How long each fault lasts, and how long the pipeline runs after it.
    pub fault_secs: u64,
}

impl ChaosOptions {
    pub fn from_env() -> Self {
        Self {
            monitors: env_usize("UPTIME_BENCH_CHAOS_MONITORS", 2_000),
            interval_secs: env_usize("UPTIME_BENCH_CHAOS_INTERVAL", 10) as u64,
            fault_secs: env_usize("UPTIME_BENCH_CHAOS_FAULT_SECS", 20) as u64,
        }
    }
}

enum Fault {
    KillNode(usize),
    KillChecksLeader,
    NotYet(&'static str),
}

impl Fault {
    fn name(&self) -> String {
        match self {
            Fault::KillNode(i) => format!("SIGKILL NATS node n{i}"),
            Fault::KillChecksLeader => "SIGKILL the UPTIME_CHECKS leader".into(),
            Fault::NotYet(name) => (*name).into(),
        }
    }
}

pub async fn run(options: ChaosOptions) -> anyhow::Result<()> {
    let mut stack = Stack::start_clustered(StackOptions {
        checker_concurrency: 512,
        ..StackOptions::default()
    })
    .await?;
    let target = TargetServer::start().await;
    let key = stack.new_user("chaos").await?;
    for chunk in (0..options.monitors).collect::<Vec<_>>().chunks(500) {
        let items: Vec<_> = chunk
            .iter()
            .map(|i| {
                json!({"name": format!("c{i}"), "type": "http", "target": target.url("/"),
                            "interval_secs": options.interval_secs})
            })
            .collect();
        let (status, body) = stack
            .call(
                reqwest::Method::POST,
                "/api/v1/monitors/bulk",
                &key,
                Some(json!({"monitors": items})),
            )
            .await?;
        anyhow::ensure!(
            status.as_u16() == 201,
            "bulk create answered {status}: {body}"
        );
    }
    println!(
        "chaos: {} monitors every {} s ({:.0} checks/s) on a three-node cluster at R3",
        options.monitors,
        options.interval_secs,
        options.monitors as f64 / options.interval_secs as f64
    );
    let settle = Duration::from_secs(options.interval_secs * 2);
    tokio::time::sleep(settle).await;
    println!("| fault | slots stored | skipped | doubled | stored late p50 / p99 / max |");
    println!("| --- | --- | --- | --- | --- |");
    let faults = [
        Fault::KillNode(1),
        Fault::KillChecksLeader,
        Fault::NotYet("partition one node"),
        Fault::NotYet("SIGKILL scheduler leader"),
        Fault::NotYet("SIGKILL recorder"),
        Fault::NotYet("PostgreSQL restart"),
    ];
    for fault in faults {
        let window = Duration::from_secs(options.fault_secs);
        let from = chrono::Utc::now();
        let killed = match &fault {
            Fault::KillNode(i) => Some(*i),
            Fault::KillChecksLeader => Some(checks_leader(&stack).await?),
            Fault::NotYet(_) => None,
        };
        let Some(node) = killed else {
            println!("| {} | not run yet | | | |", fault.name());
            continue;
        };
        let cluster = stack.cluster.as_mut().context("a clustered stack")?;
        cluster.kill(node).await;
        tokio::time::sleep(window).await;
        cluster.restart(node).await;
        let until = chrono::Utc::now();
        // Slots of the window have had an interval and the window again to land.
        tokio::time::sleep(window + Duration::from_secs(options.interval_secs)).await;
        let verdict = judge(&stack, from, until, options.interval_secs as i64 * 1000).await?;
        println!(
            "| {} | {} | {} | {} | {:.2} s / {:.2} s / {:.2} s |",
            fault.name(),
            verdict.stored,
            verdict.skipped,
            verdict.doubled,
            percentile(&verdict.late_secs, 0.5),
            percentile(&verdict.late_secs, 0.99),
            verdict.late_secs.last().copied().unwrap_or(f64::NAN),
        );
    }
    Ok(())
}

/// The index of the node leading `UPTIME_CHECKS` now.
async fn checks_leader(stack: &Stack) -> anyhow::Result<usize> {
    let cluster = stack.cluster.as_ref().context("a clustered stack")?;
    let (_client, js) = cluster.jetstream().await;
    let mut stream = js
        .get_stream(uptime_contracts::streams::CHECKS_STREAM)
        .await?;
    let info = stream.info().await?;
    let leader = info
        .cluster
        .as_ref()
        .and_then(|c| c.leader.clone())
        .context("the stream has no leader")?;
    cluster
        .index_of(&leader)
        .with_context(|| format!("no node named {leader}"))
}

struct Verdict {
    stored: usize,
    skipped: usize,
    doubled: usize,
    /// Stored minus due, ascending.
    late_secs: Vec<f64>,
}

/// Every scheduled result due in `[from, until)`, by monitor.
async fn judge(
    stack: &Stack,
    from: chrono::DateTime<chrono::Utc>,
    until: chrono::DateTime<chrono::Utc>,
    interval_ms: i64,
) -> anyhow::Result<Verdict> {
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await?;
    let rows: Vec<(
        i64,
        Option<chrono::DateTime<chrono::Utc>>,
        chrono::DateTime<chrono::Utc>,
    )> = check_results::table
        .filter(check_results::trigger.eq("scheduled"))
        .filter(check_results::due_at.ge(from))
        .filter(check_results::due_at.lt(until))
        .select((
            check_results::monitor_id,
            check_results::due_at,
            check_results::recorded_at,
        ))
        .load(&mut conn)
        .await?;
    let mut dues: HashMap<i64, Vec<i64>> = HashMap::new();
    let mut late_secs = Vec::with_capacity(rows.len());
    for (monitor, due, recorded) in &rows {
        let due = due.map_or(0, |d| d.timestamp_millis());
        dues.entry(*monitor).or_default().push(due);
        late_secs.push((recorded.timestamp_millis() - due) as f64 / 1000.0);
    }
    late_secs.sort_by(f64::total_cmp);
    let (mut skipped, mut doubled) = (0, 0);
    for slots in dues.values_mut() {
        slots.sort_unstable();
        for pair in slots.windows(2) {
            match pair[1] - pair[0] {
                0 => doubled += 1,
                gap if gap > interval_ms => skipped += (gap / interval_ms - 1) as usize,
                _ => {}
            }
        }
    }
    Ok(Verdict {
        stored: rows.len(),
        skipped,
        doubled,
        late_secs,
    })
}
