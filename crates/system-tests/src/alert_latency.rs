//! The benchmark's "alert latency" stage: how long from a target turning
//! failing to its alert reaching a webhook receiver, undisturbed and with one
//! fault injected during the window.
//!
//! Every service runs as its own release binary, so a fault is a real
//! `SIGKILL` of a real process (and of `nats-server`), or an immediate
//! PostgreSQL stop (`pg_ctl -m immediate`), each followed by a restart, the
//! way an orchestrator would restart it. Monitors and webhook contacts are
//! written straight to the database before the scheduler starts; the target
//! and the receiver are loopback servers of this process.

use crate::processes::{ProcessOptions, Processes, PIPELINE_SERVICES};
use anyhow::Context;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;
use tokio::process::Command;
use uptime_db::models::MonitorDefinition;
use uptime_db::schema::monitors;
use uptime_testkit::receiver::WebhookReceiver;
use uptime_testkit::target::TargetServer;
use uptime_testkit::TestDb;

/// What the stage is run with.
#[derive(Debug, Clone)]
pub struct AlertLatencyOptions {
    pub monitors: usize,
    pub contacts: usize,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    pub confirmation_count: i32,
    /// Where the release binaries are (`target/release`).
    pub bin_dir: PathBuf,
    pub nats_server: PathBuf,
    /// `scripts/pg.sh`, the cluster's name and port: for the PostgreSQL fault.
    pub pg_script: PathBuf,
    pub pg_cluster: Option<(String, u16)>,
}

/// A fault injected one second after the target turns failing; the faulty
/// part is restarted two seconds later.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    None,
    Kill(&'static str),
    PostgresStop,
}

impl Fault {
    pub fn label(self) -> String {
        match self {
            Fault::None => "undisturbed".into(),
            Fault::Kill(what) => format!("SIGKILL {what}"),
            Fault::PostgresStop => "PostgreSQL immediate stop".into(),
        }
    }
}

/// One run's figures, in seconds.
#[derive(Debug, Clone)]
pub struct Round {
    pub fault: Fault,
    /// Switch → receiver, per monitor (first arrival of its down alert),
    /// ascending.
    pub from_switch: Vec<f64>,
    /// The confirming check → receiver: what the pipeline adds; ascending.
    pub from_check: Vec<f64>,
    /// Alerts that never arrived within the round's limit.
    pub missing: usize,
    /// Down alerts that arrived more than once (same webhook-id: receivers dedupe).
    pub repeated: usize,
}

/// Seeds the monitors and contacts; each monitor alerts one contact.
async fn seed(
    db: &TestDb,
    opts: &AlertLatencyOptions,
    target: &str,
    hook: &WebhookReceiver,
) -> anyhow::Result<()> {
    let mut conn = uptime_db::pool::conn(&db.pool).await?;
    let user: i64 = uptime_db::users::create(&mut conn, "bench").await?.id;
    let mut contacts = Vec::new();
    for c in 0..opts.contacts {
        let contact = uptime_db::contacts::create(
            &mut conn,
            &uptime_testkit::fixtures::webhook_contact(
                user,
                format!("receiver {c}"),
                hook.url(&format!("/contact/{c}")),
            ),
        )
        .await?;
        contacts.push(contact.id);
    }
    for m in 0..opts.monitors {
        uptime_testkit::fixtures::insert_alerting_monitor(
            &mut conn,
            user,
            MonitorDefinition {
                name: format!("monitor {m}"),
                target: Some(format!("{target}?m={m}")),
                interval_secs: opts.interval_secs,
                timeout_secs: opts.timeout_secs,
                confirmation_count: opts.confirmation_count,
                ..uptime_testkit::fixtures::monitor_definition(uptime_contracts::MonitorKind::Http)
            },
            contacts[m % contacts.len()],
        )
        .await?;
    }
    Ok(())
}

/// Runs every round and returns its figures.
pub async fn run(opts: AlertLatencyOptions, faults: &[Fault]) -> anyhow::Result<Vec<Round>> {
    let db = TestDb::create().await;
    let target = TargetServer::start().await;
    let hook = WebhookReceiver::start().await;
    seed(&db, &opts, &target.url("/health"), &hook).await?;
    let mut procs = Processes::start(ProcessOptions {
        bin_dir: opts.bin_dir.clone(),
        nats_server: opts.nats_server.clone(),
        db_url: db.url.clone(),
    })
    .await?;
    for name in PIPELINE_SERVICES {
        let instance = ("UPTIME_NOTIFIER__INSTANCE_ID", "bench-notifier".to_string());
        procs.start_service(name, &[instance])?;
    }
    // Every monitor's first check turns it from pending to up (a
    // `monitor.up` alert, which the rounds ignore: they count only
    // `monitor.down`): wait for all of them.
    wait_until_all_up(&db, opts.monitors, Duration::from_secs(60)).await?;

    let mut rounds = Vec::new();
    for &fault in faults {
        rounds.push(round(&mut procs, &db, &target, &hook, &opts, fault).await?);
    }
    Ok(rounds)
}

async fn statuses(db: &TestDb) -> anyhow::Result<Vec<String>> {
    let mut conn = uptime_db::pool::conn(&db.pool).await?;
    Ok(monitors::table
        .select(monitors::status)
        .load(&mut *conn)
        .await?)
}

async fn wait_until_all_up(db: &TestDb, n: usize, limit: Duration) -> anyhow::Result<()> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        // The database may be restarting after a fault: keep asking.
        if let Ok(s) = statuses(db).await {
            if s.len() == n && s.iter().all(|s| s == "up") {
                return Ok(());
            }
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "monitors not all up within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn round(
    procs: &mut Processes,
    db: &TestDb,
    target: &TargetServer,
    hook: &WebhookReceiver,
    opts: &AlertLatencyOptions,
    fault: Fault,
) -> anyhow::Result<Round> {
    let before = hook.received().len();
    let switched_at = Utc::now();
    target.set_status(503);
    let floor = (opts.interval_secs * opts.confirmation_count + opts.timeout_secs) as f64;
    let limit = Duration::from_secs_f64(floor + 60.0);

    if fault != Fault::None {
        tokio::time::sleep(Duration::from_secs(1)).await;
        match fault {
            Fault::Kill(name) => procs.kill(name).await?,
            Fault::PostgresStop => pg(opts, "crash").await?,
            Fault::None => {}
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        match fault {
            Fault::Kill(name) => procs.restart(name).await?,
            Fault::PostgresStop => pg(opts, "start").await?,
            Fault::None => {}
        }
    }

    let deadline = tokio::time::Instant::now() + limit;
    let downs = loop {
        let downs = down_alerts(&hook.received()[before..]);
        if downs.len() >= opts.monitors || tokio::time::Instant::now() >= deadline {
            break downs;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    // Seconds per monitor, ascending.
    let sorted = |span: &dyn Fn(&FirstArrival) -> f64| {
        let mut v: Vec<f64> = downs.values().map(span).collect();
        v.sort_by(|a, b| a.total_cmp(b));
        v
    };
    let from_switch = sorted(&|d| seconds(switched_at, d.received_at));
    let from_check = sorted(&|d| seconds(d.checked_at, d.received_at));
    let repeated = downs.values().filter(|d| d.copies > 1).count();
    if std::env::var_os("UPTIME_BENCH_VERBOSE").is_some() {
        let checks = sorted(&|d| seconds(switched_at, d.checked_at));
        let checks: Vec<String> = checks.iter().map(|c| format!("{c:.1}")).collect();
        eprintln!(
            "{}: confirming checks at +{} s",
            fault.label(),
            checks.join(" ")
        );
    }

    // Back to healthy before the next round.
    target.set_status(200);
    wait_until_all_up(db, opts.monitors, limit).await?;
    // Let the recoveries' alerts go out, so the next round starts quiet.
    tokio::time::sleep(Duration::from_secs(1)).await;
    Ok(Round {
        fault,
        from_switch,
        from_check,
        missing: opts.monitors.saturating_sub(downs.len()),
        repeated,
    })
}

struct FirstArrival {
    received_at: DateTime<Utc>,
    checked_at: DateTime<Utc>,
    copies: usize,
}

/// The first arrival of each monitor's `monitor.down` alert.
fn down_alerts(
    requests: &[uptime_testkit::receiver::ReceivedRequest],
) -> HashMap<i64, FirstArrival> {
    let mut firsts: HashMap<i64, FirstArrival> = HashMap::new();
    for r in requests {
        let body = r.json();
        if body["event"] != "monitor.down" {
            continue;
        }
        let (Some(monitor), Some(checked_at)) = (
            body["monitor"]["id"].as_i64(),
            body["check"]["checked_at"]
                .as_str()
                .and_then(|t| DateTime::parse_from_rfc3339(t).ok()),
        ) else {
            continue;
        };
        firsts
            .entry(monitor)
            .and_modify(|f| f.copies += 1)
            .or_insert(FirstArrival {
                received_at: r.received_at,
                checked_at: checked_at.with_timezone(&Utc),
                copies: 1,
            });
    }
    firsts
}

fn seconds(from: DateTime<Utc>, to: DateTime<Utc>) -> f64 {
    (to - from).num_microseconds().unwrap_or(i64::MAX) as f64 / 1e6
}

async fn pg(opts: &AlertLatencyOptions, action: &str) -> anyhow::Result<()> {
    let (cluster, port) = opts
        .pg_cluster
        .clone()
        .context("the PostgreSQL fault needs UPTIME_BENCH_PG_CLUSTER (set by just bench)")?;
    let status = Command::new(&opts.pg_script)
        .args([action, &cluster, &port.to_string()])
        .status()
        .await?;
    anyhow::ensure!(status.success(), "pg.sh {action} failed");
    Ok(())
}
