//! The scheduler: decides when each monitor is checked.
//!
//! - Checked monitors (every kind but heartbeat) get a `DueCheck` per
//!   region and slot on `uptime.checks.due.v5.<region>`; slots are
//!   deterministic ([`slots`]), so every replica and every restart names
//!   each check the same and JetStream drops a republished one.
//! - Heartbeat monitors get a failed `CheckResult` for each period that
//!   ends without a ping ([`timing`]).
//! - Monitors are hashed into shards ([`shards`]); each replica schedules
//!   the shards whose leases it holds in a NATS KV bucket ([`lease`]), so
//!   no PostgreSQL outage takes scheduling away. One replica holds them all.
//! - Work already overdue when it is loaded (a start, a bulk import, a
//!   resume) goes out at a bounded catch-up rate derived from the schedule,
//!   not all at once (`core::catchup`, settings `catchup_*`).
//! - Memory holds the timeline ([`DueQueue`]: ~60 bytes per monitor);
//!   configurations are read in batches just before they are due. The last
//!   one read of each monitor is kept too, within `config_cache_bytes`
//!   (~200 bytes a monitor), and used only when a read fails: checks go on,
//!   on time, while PostgreSQL is down (`core::config_cache`). A pure core
//!   (`core`: timeline and planner, `now` a parameter) decides what to read,
//!   publish and when to wake; a thin shell (`shell`) does the I/O.
//!
//! Benchmarks build a [`Scheduler`] on their own pool and JetStream context,
//! run it, and read [`SchedulerStats`]: published count, lateness quantiles
//! (publish instant minus due instant), monitors on the timeline, and
//! `bytes_per_monitor`, the timeline's allocated heap and map capacity per
//! monitor ([`DueQueue::approx_bytes_per_monitor`]). Staged items (one
//! lookahead's worth of configurations) come on top; comparing the process's
//! RSS before and after loading N monitors measures everything.
//!
//! Inside: [`queue`] (the timeline), `clock` (the wall clock, injected so
//! tests let time pass without waiting), `publisher` (many publish acks in
//! flight, failures retried), `scheduler` (the service: the shell started
//! on its shards), [`stats`] (metrics and per-instance figures) and
//! [`settings`].

mod clock;
mod core;
pub mod lease;
mod publisher;
pub mod queue;
mod scheduler;
pub mod settings;
pub mod shards;
mod shell;
pub mod slots;
pub mod stats;
pub mod timing;

pub use clock::Clock;
pub use queue::DueQueue;
pub use scheduler::Scheduler;
pub use stats::{LatenessSummary, SchedulerStats};

use settings::SchedulerSettings;
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Database(#[from] uptime_db::DbError),
    #[error("connecting to NATS: {0}")]
    Nats(#[from] async_nats::ConnectError),
    #[error("creating the JetStream streams: {0}")]
    Streams(#[from] uptime_contracts::streams::StreamsError),
    #[error(transparent)]
    Leases(#[from] lease::LeaseError),
    #[error("binding the ops server: {0}")]
    Ops(#[from] std::io::Error),
}

/// Runs the scheduler service until `shutdown`: the ops server (`/healthz`,
/// `/readyz`, `/metrics`) and a [`Scheduler`] replica.
pub async fn run(settings: SchedulerSettings, shutdown: CancellationToken) -> Result<(), RunError> {
    // Install the recorder before anything is recorded: gauges set once (the
    // leader gauge) would otherwise be missing until they next change.
    uptime_telemetry::metrics_handle();
    let pool = uptime_db::connect(&settings.database)?;
    let (client, js) = uptime_contracts::bus::connect(&settings.nats, "scheduler").await?;
    uptime_contracts::streams::ensure(&js, &settings.nats).await?;
    let replicas = settings.nats.stream_replicas.max(1);
    lease::driver::bucket(&js, replicas).await?;

    let shell = uptime_ops::Shell::bind(
        "scheduler",
        &settings.ops,
        uptime_ops::Readiness::new()
            .with_check("postgres", uptime_db::pool::readiness_check(&pool))
            .with_nats(&client),
    )?;
    tracing::info!(ops = %shell.addr(), "scheduler started");
    let scheduler = Scheduler::new(pool, js, settings.scheduler)
        .with_regions(settings.regions)
        .with_lease_replicas(replicas)
        .watched_by(shell.watchdog());
    let schedules = async {
        scheduler.run(shutdown.clone()).await;
        Ok::<_, RunError>(())
    };
    shell.run(shutdown.clone(), schedules).await
}
