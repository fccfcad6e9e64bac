//! The refresh loop: reads what pages and badges show in a fixed set of
//! statements ([`uptime_db::status_snapshot`]) every `refresh_ms`, the
//! slower aggregates every `aggregate_refresh_secs` (or at once when a
//! monitor appears that they do not cover yet), builds the next
//! [`Snapshot`] and swaps it in. Page views never reach PostgreSQL: a rush
//! costs nothing more than an idle page, and a database outage leaves the
//! last snapshot served.

use crate::model::{AggregateRows, StateRows, BAR_DAYS, HOURLY_WINDOW_HOURS};
use crate::snapshot::Snapshot;
use chrono::{DateTime, Duration, Utc};
use std::collections::HashSet;
use std::sync::{Arc, RwLock};
use std::time::Instant;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use uptime_db::status_snapshot as rows;

/// The current snapshot, shared by every worker.
#[derive(Clone, Default)]
pub struct Shared {
    current: Arc<RwLock<Arc<Snapshot>>>,
    /// Counts refreshes (tests wait on it instead of sleeping).
    generation: Arc<watch::Sender<u64>>,
}

impl Shared {
    pub fn get(&self) -> Arc<Snapshot> {
        match self.current.read() {
            Ok(guard) => guard.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        }
    }

    fn set(&self, snapshot: Snapshot) {
        let snapshot = Arc::new(snapshot);
        match self.current.write() {
            Ok(mut guard) => *guard = snapshot,
            Err(poisoned) => *poisoned.into_inner() = snapshot,
        }
        self.generation.send_modify(|g| *g += 1);
    }

    /// Refreshes so far.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Resolves once `generation` refreshes have completed.
    pub async fn wait_for_generation(&self, generation: u64) {
        let mut rx = self.generation.subscribe();
        let _ = rx.wait_for(|g| *g >= generation).await;
    }
}

async fn load_state(pool: &uptime_db::Pool) -> Result<StateRows, uptime_db::DbError> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    let pages = rows::load_pages(&mut conn).await?;
    let badges = rows::load_badges(&mut conn).await?;
    let monitors = rows::load_shown_monitors(&mut conn).await?;
    let ids: Vec<i64> = monitors.iter().map(|m| m.id).collect();
    let open_incidents = rows::load_open_incidents(&mut conn, &ids).await?;
    let (notices, notice_updates) = uptime_db::status_notices::load_all(&mut conn).await?;
    // Bounded per organisation (`maintenance.max_windows_per_org`); the
    // occurrences are expanded per refresh, in memory.
    let maintenance =
        uptime_db::maintenance::sweep::windows_to_expand(&mut conn, Utc::now()).await?;
    Ok(StateRows {
        pages,
        badges,
        monitors,
        open_incidents,
        notices,
        notice_updates,
        maintenance,
    })
}

async fn load_aggregates(
    pool: &uptime_db::Pool,
    ids: &[i64],
    now: DateTime<Utc>,
) -> Result<AggregateRows, uptime_db::DbError> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    let since_day = now.date_naive() - Duration::days(BAR_DAYS as i64 - 1);
    let days = rows::load_daily_uptime(&mut conn, ids, since_day).await?;
    let hours =
        rows::load_hourly_stats(&mut conn, ids, now - Duration::hours(HOURLY_WINDOW_HOURS)).await?;
    Ok(AggregateRows { days, hours })
}

/// Refreshes until `shutdown`.
pub async fn run(
    pool: uptime_db::Pool,
    shared: Shared,
    settings: crate::settings::ServeSettings,
    shutdown: CancellationToken,
    progress: uptime_ops::Progress,
) {
    let mut aggregates = AggregateRows::default();
    let mut covered: HashSet<i64> = HashSet::new();
    let mut aggregated_at: Option<Instant> = None;
    loop {
        progress.tick();
        let started = Instant::now();
        match refresh_once(
            &pool,
            &shared,
            &settings,
            &mut aggregates,
            &mut covered,
            &mut aggregated_at,
        )
        .await
        {
            Ok(()) => {
                metrics::histogram!("status_pages_refresh_seconds")
                    .record(started.elapsed().as_secs_f64());
            }
            Err(e) => {
                metrics::counter!("status_pages_refresh_failures_total").increment(1);
                tracing::warn!(error = %e, "refreshing the snapshot failed; serving the previous one");
            }
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(settings.refresh_interval()) => {}
        }
    }
}

async fn refresh_once(
    pool: &uptime_db::Pool,
    shared: &Shared,
    settings: &crate::settings::ServeSettings,
    aggregates: &mut AggregateRows,
    covered: &mut HashSet<i64>,
    aggregated_at: &mut Option<Instant>,
) -> Result<(), uptime_db::DbError> {
    let now = Utc::now();
    let state = load_state(pool).await?;
    let ids: HashSet<i64> = state.monitors.iter().map(|m| m.id).collect();
    let stale = aggregated_at.is_none_or(|at| at.elapsed() >= settings.aggregate_interval());
    if stale || !ids.is_subset(covered) {
        let list: Vec<i64> = ids.iter().copied().collect();
        *aggregates = load_aggregates(pool, &list, now).await?;
        *covered = ids;
        *aggregated_at = Some(Instant::now());
    }
    let previous = shared.get();
    let horizon = Duration::days(i64::from(settings.maintenance_horizon_days));
    let next = Snapshot::build(&previous, &state, aggregates, now, horizon);
    metrics::gauge!("status_pages_pages").set(next.pages_by_slug.len() as f64);
    metrics::gauge!("status_pages_badges").set(next.badges.len() as f64);
    shared.set(next);
    Ok(())
}
