//! A scheduler replica: joins the others through the lease bucket and
//! schedules the shards it is granted, until it is told to stop.

use crate::clock::Clock;
use crate::lease::driver;
use crate::settings::ScheduleSettings;
use crate::shell::{Engine, LONGEST_SLEEP};
use crate::stats::SchedulerStats;
use async_nats::jetstream;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_config::RegionsSettings;

/// How long a replica waits before starting its engine again after the
/// monitor change feed broke.
const ENGINE_RETRY: Duration = Duration::from_secs(1);

/// One replica. Build it with the service's pool and JetStream context (or a
/// benchmark's), then [`Scheduler::run`] it; [`Scheduler::stats`] reports what
/// it does while it runs.
pub struct Scheduler {
    pool: uptime_db::Pool,
    js: jetstream::Context,
    config: ScheduleSettings,
    regions: RegionsSettings,
    stats: Arc<SchedulerStats>,
    clock: Clock,
    /// What lease validity and expiry are measured by.
    lease_clock: Clock,
    /// Copies of the lease bucket (`nats.stream_replicas`).
    lease_replicas: usize,
    /// Where the engine's and the lease driver's loops report progress.
    watchdog: Option<uptime_ops::Watchdog>,
}

impl Scheduler {
    pub fn new(pool: uptime_db::Pool, js: jetstream::Context, config: ScheduleSettings) -> Self {
        Self {
            pool,
            js,
            config,
            regions: RegionsSettings::default(),
            stats: Arc::new(SchedulerStats::default()),
            clock: Clock::system(),
            lease_clock: Clock::system(),
            lease_replicas: 1,
            watchdog: None,
        }
    }

    /// Registers the engine's loop and the lease driver's with `watchdog`,
    /// so that `/readyz` says when either stops coming round.
    pub fn watched_by(mut self, watchdog: &uptime_ops::Watchdog) -> Self {
        self.watchdog = Some(watchdog.clone());
        self
    }

    /// Reads time from `clock` instead of the system clock (tests move it
    /// forward rather than wait). The leases keep the system clock: a jump
    /// of minutes would otherwise end them all at once (as if every replica
    /// had stalled that long).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Measures the leases by `clock` as well (tests of the leases move it a
    /// renewal at a time).
    pub fn with_lease_clock(mut self, clock: Clock) -> Self {
        self.lease_clock = clock;
        self
    }

    /// Checks monitors from the deployment's `regions` (the default: one
    /// region, `default`): one due check per region of a monitor each slot.
    pub fn with_regions(mut self, regions: RegionsSettings) -> Self {
        self.regions = regions;
        self
    }

    /// Creates the lease bucket with `replicas` copies (like the streams).
    pub fn with_lease_replicas(mut self, replicas: usize) -> Self {
        self.lease_replicas = replicas.max(1);
        self
    }

    pub fn stats(&self) -> Arc<SchedulerStats> {
        self.stats.clone()
    }

    /// Takes part in the leases and schedules the granted shards until
    /// `shutdown`. In-flight publishes are awaited and the leases released
    /// (with how far they are published) before it returns. Dropping the
    /// future instead is a crash: the leases run out and others take over.
    pub async fn run(&self, shutdown: CancellationToken) {
        self.stats.set_shards(0);
        let (lease_driver, mut link) = driver::new(
            self.js.clone(),
            self.lease_replicas,
            self.config.lease_timing(),
            self.lease_clock.clone(),
            self.stats.clone(),
        );
        let (engine_rounds, lease_rounds) = match &self.watchdog {
            Some(watchdog) => (
                watchdog.register("scheduler engine", LONGEST_SLEEP),
                watchdog.register(
                    "scheduler leases",
                    Duration::from_millis(self.config.lease_timing().renew_every_ms as u64),
                ),
            ),
            None => Default::default(),
        };
        let lease_driver = lease_driver.watched_by(lease_rounds);
        let leases_stop = CancellationToken::new();
        // One task: the driver runs while the engine awaits anything, and
        // dropping this future stops both (a crash, for the tests).
        let engine = async {
            let mut restarted_through = None;
            loop {
                let engine = Engine::new(
                    self.pool.clone(),
                    self.js.clone(),
                    self.config.clone(),
                    self.regions.clone(),
                    self.stats.clone(),
                    self.clock.clone(),
                )
                .with_lease_clock(self.lease_clock.clone())
                .watched_by(engine_rounds.clone());
                let ended = engine.run(&mut link, restarted_through, &shutdown).await;
                self.stats.set_shards(0);
                match ended {
                    Ok(()) => break,
                    Err(error) => tracing::warn!(%error, "stopped scheduling; starting again"),
                }
                restarted_through = Some(link.progress.borrow().published_through_ms);
                tokio::select! {
                    _ = shutdown.cancelled() => break,
                    _ = tokio::time::sleep(ENGINE_RETRY) => {}
                }
            }
            // The engine has stopped: the driver may release the leases.
            leases_stop.cancel();
        };
        tokio::join!(engine, lease_driver.run(leases_stop.clone()));
        tracing::info!("scheduler stopped");
    }
}
