//! The retention runner: every `interval_secs` (and once at start) each
//! replica tries to take the lease; the one that gets it runs a round
//! (partition maintenance, then every pruning step) and lets it go.
//!
//! **The lease** is a PostgreSQL session advisory lock
//! (`uptime_db::retention::RETENTION_LOCK`) taken with `pg_try_advisory_lock`
//! on a connection of its own, taken out of the pool for the round and closed
//! after it. A replica that finds the lock held skips its round. The lock
//! belongs to the session, so a holder that crashes, is killed or loses its
//! host frees it with its connection (at once when the process dies; within
//! seconds when the host vanishes, by the TCP keepalives set on that
//! session): there is no expiry to tune and no stale lease to wait out. The
//! connection never returns to the pool, so no pooled session can keep the
//! lock by accident, even when a round is cancelled mid-way.
//!
//! [`run_once`] is one round for an injected clock reading, the unit tests
//! drive; [`run`] is the loop the recorder spawns, with `Utc::now()`.

use crate::partitions::{self, PartitionReport};
use crate::pruning::{self, PruneReport, StepFailure};
use crate::{RetentionError, RetentionSettings};
use chrono::{DateTime, Utc};
use diesel_async::pooled_connection::deadpool::Object;
use diesel_async::AsyncPgConnection;
use std::time::Instant;
use tokio_util::sync::CancellationToken;
use uptime_db::Pool;

/// What one call of [`run_once`] did.
#[derive(Debug)]
pub enum Round {
    /// Another replica holds the lease; nothing was done.
    Skipped,
    /// Boxed: the report is large next to `Skipped`.
    Done(Box<RoundReport>),
}

impl Round {
    /// The report of a round that ran.
    pub fn done(self) -> Option<RoundReport> {
        match self {
            Round::Done(report) => Some(*report),
            Round::Skipped => None,
        }
    }
}

/// What a round removed and what went wrong.
#[derive(Debug)]
pub struct RoundReport {
    /// What partition maintenance did; `None` when it failed (see `failures`).
    pub partitions: Option<PartitionReport>,
    pub pruned: PruneReport,
    /// Steps that failed (the others still ran).
    pub failures: Vec<StepFailure>,
    /// Shutdown stopped the round before it had finished.
    pub interrupted: bool,
}

impl RoundReport {
    pub fn succeeded(&self) -> bool {
        self.failures.is_empty() && !self.interrupted
    }
}

/// One round for the clock reading `now`, if this replica gets the lease.
pub async fn run_once(
    pool: &Pool,
    settings: &RetentionSettings,
    now: DateTime<Utc>,
) -> Result<Round, RetentionError> {
    run_round(pool, settings, now, &CancellationToken::new()).await
}

/// [`run_once`] that stops between batches once `stop` is cancelled.
pub async fn run_round(
    pool: &Pool,
    settings: &RetentionSettings,
    now: DateTime<Utc>,
    stop: &CancellationToken,
) -> Result<Round, RetentionError> {
    let started = Instant::now();
    let Some(mut lease) = Lease::try_acquire(pool).await.inspect_err(|error| {
        metrics::counter!("retention_errors_total", "step" => "lease").increment(1);
        metrics::counter!("retention_rounds_total", "outcome" => "failed").increment(1);
        tracing::warn!(%error, "retention round not started: lease");
    })?
    else {
        metrics::counter!("retention_rounds_total", "outcome" => "skipped").increment(1);
        tracing::debug!("retention round skipped: another replica holds the lease");
        return Ok(Round::Skipped);
    };

    // Partitions first: creating tomorrow's partition must not wait behind
    // a long pruning backlog. A failure here does not stop the pruning.
    let mut failures = Vec::new();
    let partitions = match partitions::maintain(lease.conn(), settings, now.date_naive()).await {
        Ok(report) => Some(report),
        Err(error) => {
            tracing::warn!(step = "partitions", %error, "retention step failed");
            failures.push(StepFailure {
                step: "partitions",
                error,
            });
            None
        }
    };
    let pruned = pruning::prune(lease.conn(), settings, now, stop).await;
    lease.release().await;
    failures.extend(pruned.failures);

    let report = RoundReport {
        partitions,
        pruned: pruned.report,
        failures,
        interrupted: pruned.interrupted,
    };
    if let Some(p) = &report.partitions {
        metrics::counter!("retention_partitions_created_total").increment(p.created.len() as u64);
        metrics::counter!("retention_partitions_dropped_total").increment(p.dropped.len() as u64);
        // Results the default partition held past retention, deleted row by row.
        metrics::counter!("retention_rows_removed_total", "table" => "check_results")
            .increment(p.expired_from_default);
        metrics::gauge!("retention_results_in_default_partition").set(p.left_in_default as f64);
    }
    for (table, rows) in report.pruned.by_table() {
        metrics::counter!("retention_rows_removed_total", "table" => table).increment(rows);
    }
    for failure in &report.failures {
        metrics::counter!("retention_errors_total", "step" => failure.step).increment(1);
    }
    let seconds = started.elapsed().as_secs_f64();
    if report.succeeded() {
        metrics::gauge!("retention_last_success_timestamp_seconds").set(now.timestamp() as f64);
        metrics::counter!("retention_rounds_total", "outcome" => "done").increment(1);
        tracing::info!(
            removed = report.pruned.total(),
            pruned = ?report.pruned,
            partitions = ?report.partitions,
            seconds,
            "retention round done"
        );
    } else {
        let outcome = if report.interrupted {
            "interrupted"
        } else {
            "failed"
        };
        metrics::counter!("retention_rounds_total", "outcome" => outcome).increment(1);
        tracing::warn!(
            removed = report.pruned.total(),
            pruned = ?report.pruned,
            partitions = ?report.partitions,
            failed_steps = ?report.failures.iter().map(|f| f.step).collect::<Vec<_>>(),
            interrupted = report.interrupted,
            seconds,
            "retention round incomplete"
        );
    }
    Ok(Round::Done(Box::new(report)))
}

/// Runs a round at once and then every `settings.interval_secs` until
/// `shutdown`; a round in progress stops after its current batch.
pub async fn run(pool: Pool, settings: RetentionSettings, shutdown: CancellationToken) {
    tracing::info!(?settings, "retention runner started");
    // The series exist from the start, so "no success yet" is visible.
    metrics::counter!("retention_errors_total", "step" => "lease").increment(0);
    loop {
        // Errors are counted and logged in the round; the next one retries.
        let _ = run_round(&pool, &settings, Utc::now(), &shutdown).await;
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tokio::time::sleep(settings.interval()) => {}
        }
    }
    tracing::info!("retention runner stopped");
}

/// The held retention lock, and the session that holds it.
struct Lease {
    conn: AsyncPgConnection,
}

impl Lease {
    /// Takes the lock on a connection taken out of the pool for good (the
    /// pool opens a new one in its place); `None` when another session holds
    /// it, and the connection is closed then too.
    async fn try_acquire(pool: &Pool) -> Result<Option<Lease>, RetentionError> {
        let mut conn = Object::take(uptime_db::pool::conn(pool).await?);
        // A holder whose host vanishes frees the lock within seconds.
        uptime_db::schedule::detect_dead_peer_quickly(&mut conn).await?;
        if uptime_db::retention::try_lock_round(&mut conn).await? {
            Ok(Some(Lease { conn }))
        } else {
            Ok(None)
        }
    }

    fn conn(&mut self) -> &mut AsyncPgConnection {
        &mut self.conn
    }

    /// Unlocks and closes the session (closing alone would free the lock;
    /// unlocking first frees it before the server has seen the socket close).
    async fn release(mut self) {
        match uptime_db::retention::unlock_round(&mut self.conn).await {
            Ok(true) => {}
            Ok(false) => tracing::warn!("retention lock was not held at the end of the round"),
            Err(error) => {
                tracing::warn!(%error, "unlocking retention failed; closing the session frees it")
            }
        }
    }
}
