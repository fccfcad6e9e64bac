//! A scheduler replica: waits for the leader lock, then schedules until it
//! loses it or is told to stop.

use crate::clock::Clock;
use crate::lease::Lease;
use crate::settings::ScheduleSettings;
use crate::shell::{Ended, Engine};
use crate::stats::SchedulerStats;
use async_nats::jetstream;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use uptime_config::RegionsSettings;

/// One replica. Build it with the service's pool and JetStream context (or a
/// benchmark's), then [`Scheduler::run`] it; [`Scheduler::stats`] reports what
/// it does while it runs.
pub struct Scheduler {
    pool: uptime_db::Pool,
    js: jetstream::Context,
    database_url: String,
    config: ScheduleSettings,
    regions: RegionsSettings,
    stats: Arc<SchedulerStats>,
    clock: Clock,
}

impl Scheduler {
    /// `database_url` is for the leader lock's own connection, which must not
    /// come from `pool` (a pooled connection would carry the lock elsewhere).
    pub fn new(
        pool: uptime_db::Pool,
        js: jetstream::Context,
        database_url: impl Into<String>,
        config: ScheduleSettings,
    ) -> Self {
        Self {
            pool,
            js,
            database_url: database_url.into(),
            config,
            regions: RegionsSettings::default(),
            stats: Arc::new(SchedulerStats::default()),
            clock: Clock::system(),
        }
    }

    /// Reads time from `clock` instead of the system clock (tests move it
    /// forward rather than wait).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    /// Checks monitors from the deployment's `regions` (the default: one
    /// region, `default`): one due check per region of a monitor each slot.
    pub fn with_regions(mut self, regions: RegionsSettings) -> Self {
        self.regions = regions;
        self
    }

    pub fn stats(&self) -> Arc<SchedulerStats> {
        self.stats.clone()
    }

    /// Competes for leadership and schedules while leading, until `shutdown`.
    /// In-flight publishes are awaited before it returns.
    pub async fn run(&self, shutdown: CancellationToken) {
        self.stats.set_leader(false);
        loop {
            if shutdown.is_cancelled() {
                break;
            }
            match Lease::try_acquire(&self.database_url).await {
                Ok(Some(mut lease)) => {
                    tracing::info!("took the leader lock; scheduling");
                    self.stats.set_leader(true);
                    let engine = Engine::new(
                        self.pool.clone(),
                        self.js.clone(),
                        self.config.clone(),
                        self.regions.clone(),
                        self.stats.clone(),
                        self.clock.clone(),
                    );
                    let ended = engine.lead(&mut lease, &shutdown).await;
                    self.stats.set_leader(false);
                    match ended {
                        Ok(Ended::Shutdown) => {
                            lease.release().await;
                            break;
                        }
                        Ok(Ended::LostLease) => {
                            tracing::warn!("lost the leader lock; stopped scheduling")
                        }
                        Err(error) => {
                            tracing::warn!(%error, "stopped scheduling; giving the leader lock up");
                            lease.release().await;
                        }
                    }
                }
                Ok(None) => tracing::debug!("another replica leads"),
                Err(error) => tracing::warn!(%error, "could not compete for the leader lock"),
            }
            tokio::select! {
                _ = shutdown.cancelled() => break,
                _ = tokio::time::sleep(self.config.lease_interval()) => {}
            }
        }
        tracing::info!("scheduler stopped");
    }
}
