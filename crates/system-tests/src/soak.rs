//! `scripts/soak.sh`'s driver (`uptime-soak`): the README's stack
//! (`scripts/up.sh`, debug builds) on ports and in a state directory of
//! its own, under a mixed workload of every feature for `UPTIME_SOAK_SECS`
//! (600 by default), against real loopback targets and receivers; then the
//! verdicts, each a pure function of what the stack recorded and what the
//! driver did:
//!
//! - every service alive and never restarted, healthy and ready;
//! - no panic, and no ERROR line but those `verdicts::logs::ALLOWED` lists
//!   with their reasons;
//! - every scheduled slot checked exactly once (`verdicts::slots`), every
//!   missed heartbeat deadline reported once (`verdicts::heartbeats`);
//! - every state change alerted exactly once to every contact that wants it
//!   (`verdicts::alerts`), every outage one incident (`verdicts::phases`);
//! - every feature exercised (the coverage list), every API answer one the
//!   contract allows.
//!
//! Figures are printed; the exit status says whether everything held.

pub mod api;
pub mod collect;
pub mod context;
pub mod judge;
pub mod ledger;
pub mod plan;
pub mod receivers;
pub mod report;
pub mod setup;
pub mod stack;
pub mod targets;
pub mod timeline;
pub mod verdicts;
pub mod workload;

use anyhow::Context;
use plan::Plan;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use targets::{Fails, Targets};

/// The shortest run the plan makes sense for.
pub const MIN_SECS: u64 = 120;

/// Runs the soak; `Ok(true)` when every verdict held.
pub async fn run() -> anyhow::Result<bool> {
    let began = Instant::now();
    let secs: u64 = std::env::var("UPTIME_SOAK_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    anyhow::ensure!(
        secs >= MIN_SECS,
        "UPTIME_SOAK_SECS={secs}: at least {MIN_SECS}"
    );
    let config = stack::StackConfig::from_env()?;
    let soak_dir = config.local.join("soak");
    std::fs::create_dir_all(&soak_dir)?;
    let plan = Plan::new(secs);

    // Targets and receivers first: the stack's checker must trust the
    // targets' authorities, and its SMTP port must be ours.
    let reminder = plan.reminder.clone().unwrap_or_default();
    let schedules = vec![
        ("http-flip", plan.http_flip.clone(), Fails::Status),
        ("keyword", plan.keyword.clone(), Fails::Keyword),
        ("slow", plan.slow.clone(), Fails::Slow),
        ("silenced", plan.silenced.clone(), Fails::Status),
        ("parent", plan.parent.clone(), Fails::Status),
        ("child", plan.child.clone(), Fails::Status),
        ("reminded", reminder, Fails::Status),
        ("escalated", plan.escalated.clone(), Fails::Status),
        ("flapping", plan.flapping.clone(), Fails::Status),
    ];
    let targets = Targets::start(schedules, plan.tcp.clone(), plan.dns.clone()).await?;
    let receivers = receivers::Receivers::start(config.smtp_port).await?;
    let ca = soak_dir.join("targets-ca.pem");
    targets.write_cas(&ca)?;
    eprintln!(
        "soak: starting the stack (scripts/up.sh) in {}",
        config.local.display()
    );
    let stack_began = Instant::now();
    let extra = [(
        "UPTIME_CHECKER__EXTRA_ROOT_CA_PEM",
        ca.display().to_string(),
    )];
    let key = stack::up(&config, &extra, &soak_dir.join("up.log")).await?;
    let stack_secs = stack_began.elapsed().as_secs_f64();
    let services_at_start = stack::service_states(&config);
    let api = api::Api::new(&config.api_url(), &key)?;

    let mut setup_ledger = ledger::Ledger::default();
    let views = setup::run(
        &api,
        &plan,
        &targets,
        &receivers,
        &config.status_pages_url(),
        &mut setup_ledger,
    )
    .await
    .context("setting up the workload")?;
    let ledger = Arc::new(Mutex::new(setup_ledger));
    let steady_url = targets.steady.url("");
    let start = Instant::now();
    let start_wall = chrono::Utc::now();
    eprintln!("soak: workload started: {secs} s");
    let targets = Arc::new(tokio::sync::Mutex::new(targets));
    let switching = targets::run(targets.clone(), start);
    let ctx = context::Ctx {
        api: api.clone(),
        plan: plan.clone(),
        start,
        start_wall,
        ledger: ledger.clone(),
        steady_url,
        applied_url: receivers.webhooks.url("/applied"),
        applied_receiver: receivers::webhook_receiver("/applied"),
        views,
    };
    let mut tasks = workload::start(&ctx);
    // Watch the services while the workload runs: a death is reported at once.
    let mut reported_dead = std::collections::HashSet::new();
    while start.elapsed().as_secs() < secs {
        tokio::time::sleep(Duration::from_secs(5)).await;
        for s in stack::service_states(&config) {
            if !s.alive && reported_dead.insert(s.name) {
                eprintln!(
                    "soak: {} is not running ({:.0} s in)",
                    s.name,
                    start.elapsed().as_secs_f64()
                );
            }
        }
        let done = start.elapsed().as_secs();
        if done % 60 < 5 {
            eprintln!("soak: {done} s of {secs}");
        }
    }
    while tasks.join_next().await.is_some() {}
    let until = start_wall + chrono::Duration::seconds(secs as i64);

    let db = collect::Db::connect(&config.database_url())?;
    let sources = judge::Sources {
        db: &db,
        plan: &plan,
        ledger: &ledger,
        receivers: &receivers,
        start_wall,
        until,
    };
    let (judgement, drained) =
        judge::drain(&sources, Duration::from_secs(180), Duration::from_secs(10)).await?;
    switching.abort();

    let services_at_end = stack::service_states(&config);
    let unhealthy = stack::unhealthy(&config, &api.http).await;
    let logs: Vec<(&str, verdicts::logs::LogScan)> = stack::SERVICES
        .iter()
        .map(|(name, _)| {
            (
                *name,
                verdicts::logs::scan(name, &stack::log_of(&config, name), verdicts::logs::ALLOWED),
            )
        })
        .collect();
    let findings = std::mem::take(&mut *api.findings.lock().expect("findings"));
    let report = report::Report {
        secs,
        stack_secs,
        drained_secs: drained.as_secs_f64(),
        total_secs: began.elapsed().as_secs_f64(),
        judgement,
        services_at_start,
        services_at_end,
        unhealthy,
        logs,
        findings,
        counts: ledger.lock().expect("ledger").counts.clone(),
    };
    report.print();
    Ok(report.passed())
}
