//! The shell every service runs in, whatever it does inside: its ops
//! server (`/healthz`, `/readyz` with the [`Watchdog`] of its loops,
//! `/metrics`), the tasks it runs beside its main loop, and one way to
//! stop: on `shutdown` the main loop finishes what it has started (the
//! batch in progress, the checks in flight, the requests being served),
//! every task stops after its current round, then the ops server, and only
//! then does [`Shell::run`] return.
//!
//! The tasks are spawned (they run in parallel on the runtime's workers)
//! and owned by a `JoinSet`: dropping the future of [`Shell::run`] (a
//! crash, in tests) stops every task it started, as it stops the ops
//! server. The NATS side of a consumer service (connect, streams, its
//! durable consumer, the flush before exit) is `uptime_consumer::bus`.

use crate::{OpsServer, Progress, Readiness, Watchdog};
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// A service's ops server, its watchdog and the tasks it started.
pub struct Shell {
    name: &'static str,
    ops: OpsServer,
    watchdog: Watchdog,
    readiness: Readiness,
    tasks: JoinSet<()>,
    /// Each task's name, by its id (to say which one panicked).
    names: Vec<(tokio::task::Id, &'static str)>,
}

impl Shell {
    /// Binds the ops server of the service `name` on `settings.listen`
    /// (port 0 picks a free one). `/readyz` runs `readiness`'s checks and
    /// `progress`: every loop registered with [`Shell::watchdog`], before
    /// or after this, comes round within its bound (`ops.stall_after_secs`).
    pub fn bind(
        name: &'static str,
        settings: &uptime_config::OpsSettings,
        readiness: Readiness,
    ) -> std::io::Result<Self> {
        let watchdog = Watchdog::new(settings.stall_after());
        let readiness = readiness.with_watchdog(&watchdog);
        let ops = OpsServer::bind(&settings.listen, readiness.clone())?;
        Ok(Self {
            name,
            ops,
            watchdog,
            readiness,
            tasks: JoinSet::new(),
            names: Vec::new(),
        })
    }

    /// Where `/healthz`, `/readyz` and `/metrics` are served.
    pub fn addr(&self) -> SocketAddr {
        self.ops.addr
    }

    /// The watchdog behind `/readyz`'s `progress` check.
    pub fn watchdog(&self) -> &Watchdog {
        &self.watchdog
    }

    /// The checks behind the ops server's `/readyz`, for a public listener
    /// that serves the probes too (a clone shares their cached result).
    pub fn readiness(&self) -> Readiness {
        self.readiness.clone()
    }

    /// A loop of this service, registered with its watchdog as `name`,
    /// that comes round at least every `period` when all is well.
    pub fn watch(&self, name: impl Into<String>, period: Duration) -> Progress {
        self.watchdog.register(name, period)
    }

    /// Starts `task` now, in a task of its own. It is to end on the
    /// service's `shutdown` token (see [`Shell::run`]).
    pub fn spawn(&mut self, name: &'static str, task: impl Future<Output = ()> + Send + 'static) {
        let id = self.tasks.spawn(task).id();
        self.names.push((id, name));
    }

    /// Serves the ops endpoints and runs `main` until it returns (on
    /// `shutdown`, or of its own accord, which stops the rest too); then
    /// waits for every task and the ops server. The main loop's error comes
    /// first, then the ops server's.
    pub async fn run<E>(
        mut self,
        shutdown: CancellationToken,
        main: impl Future<Output = Result<(), E>>,
    ) -> Result<(), E>
    where
        E: From<std::io::Error>,
    {
        let ops = self.ops.run(shutdown.clone());
        let work = async {
            let ended = main.await;
            shutdown.cancel();
            while let Some(done) = self.tasks.join_next_with_id().await {
                if let Err(e) = done {
                    let task = self
                        .names
                        .iter()
                        .find(|(id, _)| *id == e.id())
                        .map_or("?", |(_, name)| name);
                    tracing::error!(service = self.name, task, error = %e, "a task of the service failed");
                }
            }
            ended
        };
        let (served, ended) = tokio::join!(ops, work);
        ended?;
        if let Err(e) = &served {
            tracing::warn!(error = %e, "ops server stopped with an error");
        }
        served?;
        tracing::info!("{} stopped", self.name);
        Ok(())
    }
}

/// Runs `round` every `every` until `shutdown`, ticking `progress` before
/// each: the loop of a sweeper. A round in progress is finished on
/// shutdown; a round that overruns delays the next rather than bunching
/// the missed ones up.
pub async fn every<F, Fut>(
    every: Duration,
    shutdown: &CancellationToken,
    progress: &Progress,
    mut round: F,
) where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    let mut ticker = tokio::time::interval(every);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = ticker.tick() => {}
        }
        progress.tick();
        round().await;
    }
}
