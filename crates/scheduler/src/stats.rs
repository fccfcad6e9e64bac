//! What the scheduler reports: Prometheus metrics for operators, and the same
//! figures per instance ([`SchedulerStats`]) for tests and benchmarks, which
//! may run several schedulers in one process (metrics are process-wide).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};

pub const PUBLISHED_TOTAL: &str = "scheduler_published_total";
pub const DUPLICATES_TOTAL: &str = "scheduler_publish_duplicates_total";
pub const PUBLISH_RETRIES_TOTAL: &str = "scheduler_publish_retries_total";
pub const PUBLISH_LATENESS: &str = "scheduler_publish_lateness_seconds";
pub const MONITORS: &str = "scheduler_monitors";
/// 1 while the replica schedules at least one shard.
pub const IS_LEADER: &str = "scheduler_is_leader";
/// Shards the replica schedules.
pub const SHARDS_OWNED: &str = "scheduler_shards_owned";
pub const CATCHUP_WAITING: &str = "scheduler_catchup_waiting";
pub const CATCHUP_RELEASED_TOTAL: &str = "scheduler_catchup_released_total";
pub const CATCHUP_SUPERSEDED_TOTAL: &str = "scheduler_catchup_superseded_total";
/// Checks published from the configuration cache because their read failed.
pub const CONFIG_CACHE_HITS_TOTAL: &str = "scheduler_config_cache_hits_total";
/// Checks whose read failed and that the cache did not hold: they waited.
pub const CONFIG_CACHE_MISSES_TOTAL: &str = "scheduler_config_cache_misses_total";
/// Monitors not cached because the budget was full.
pub const CONFIG_CACHE_REJECTED_TOTAL: &str = "scheduler_config_cache_rejected_total";
pub const CONFIG_CACHE_ENTRIES: &str = "scheduler_config_cache_entries";
pub const CONFIG_CACHE_BYTES: &str = "scheduler_config_cache_bytes";

/// What a publish was for (the `kind` label).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PublishKind {
    Check,
    MissedHeartbeat,
}

impl PublishKind {
    pub fn as_str(self) -> &'static str {
        match self {
            PublishKind::Check => "check",
            PublishKind::MissedHeartbeat => "missed_heartbeat",
        }
    }
}

/// Upper bounds (ms) of the lateness buckets.
const LATENESS_BOUNDS_MS: [u64; 14] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 60_000,
];

/// Counters of one scheduler instance.
#[derive(Debug, Default)]
pub struct SchedulerStats {
    leader: AtomicBool,
    shards: AtomicU64,
    /// Rounds of lease writes made (renewals, takes, releases).
    lease_rounds: AtomicU64,
    /// Publishes the stream acknowledged as new messages.
    published: AtomicU64,
    /// Publishes the stream acknowledged as duplicates of an earlier one.
    duplicates: AtomicU64,
    monitors: AtomicU64,
    /// Completed walks over all active monitors (the load at the start of
    /// leadership, then each resync).
    loads: AtomicU64,
    bytes_per_monitor: AtomicU64,
    /// Overdue checks held for the catch-up budget (see `core::catchup`).
    catchup_waiting: AtomicU64,
    catchup_released: AtomicU64,
    catchup_superseded: AtomicU64,
    config_cache_hits: AtomicU64,
    config_cache_misses: AtomicU64,
    config_cache_entries: AtomicU64,
    config_cache_bytes: AtomicU64,
    lateness_buckets: [AtomicU64; LATENESS_BOUNDS_MS.len() + 1],
    lateness_max_ms: AtomicU64,
}

/// Lateness (publish time minus due time) of the sends so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LatenessSummary {
    pub count: u64,
    /// Upper bounds of the buckets holding the median and the 99th percentile
    /// (`u64::MAX` when above the largest bound).
    pub p50_ms_at_most: u64,
    pub p99_ms_at_most: u64,
    pub max_ms: u64,
}

impl SchedulerStats {
    /// Whether it schedules at least one shard.
    pub fn is_leader(&self) -> bool {
        self.leader.load(Relaxed)
    }

    /// Shards it schedules.
    pub fn shards(&self) -> u64 {
        self.shards.load(Relaxed)
    }

    /// Rounds of lease writes so far (tests wait for the next one).
    pub fn lease_rounds(&self) -> u64 {
        self.lease_rounds.load(Relaxed)
    }

    pub(crate) fn record_lease_round(&self) {
        self.lease_rounds.fetch_add(1, Relaxed);
    }

    pub fn published(&self) -> u64 {
        self.published.load(Relaxed)
    }

    pub fn duplicates(&self) -> u64 {
        self.duplicates.load(Relaxed)
    }

    /// Monitors on the timeline (0 while not leading).
    pub fn monitors(&self) -> u64 {
        self.monitors.load(Relaxed)
    }

    /// Walks over all active monitors completed so far: 1 once the load at
    /// the start of leadership is done.
    pub fn loads(&self) -> u64 {
        self.loads.load(Relaxed)
    }

    /// See [`crate::DueQueue::approx_bytes_per_monitor`]; updated as monitors
    /// are loaded.
    pub fn bytes_per_monitor(&self) -> u64 {
        self.bytes_per_monitor.load(Relaxed)
    }

    /// Overdue checks (and missed heartbeats) waiting for the catch-up budget.
    pub fn catchup_waiting(&self) -> u64 {
        self.catchup_waiting.load(Relaxed)
    }

    /// Overdue checks released by the catch-up budget so far.
    pub fn catchup_released(&self) -> u64 {
        self.catchup_released.load(Relaxed)
    }

    /// Overdue checks not released before their monitor's next slot, which
    /// was checked instead.
    pub fn catchup_superseded(&self) -> u64 {
        self.catchup_superseded.load(Relaxed)
    }

    /// Checks published from the configuration cache (their read failed).
    pub fn config_cache_hits(&self) -> u64 {
        self.config_cache_hits.load(Relaxed)
    }

    /// Checks whose read failed and that the cache did not hold.
    pub fn config_cache_misses(&self) -> u64 {
        self.config_cache_misses.load(Relaxed)
    }

    /// Monitors whose configuration is cached.
    pub fn config_cache_entries(&self) -> u64 {
        self.config_cache_entries.load(Relaxed)
    }

    /// Bytes the cache counts against its budget.
    pub fn config_cache_bytes(&self) -> u64 {
        self.config_cache_bytes.load(Relaxed)
    }

    pub fn lateness(&self) -> LatenessSummary {
        let counts: Vec<u64> = self
            .lateness_buckets
            .iter()
            .map(|b| b.load(Relaxed))
            .collect();
        let count: u64 = counts.iter().sum();
        let quantile = |q: f64| {
            let rank = ((count as f64) * q).ceil().max(1.0) as u64;
            let mut seen = 0;
            for (i, n) in counts.iter().enumerate() {
                seen += n;
                if seen >= rank {
                    return LATENESS_BOUNDS_MS.get(i).copied().unwrap_or(u64::MAX);
                }
            }
            u64::MAX
        };
        LatenessSummary {
            count,
            p50_ms_at_most: if count == 0 { 0 } else { quantile(0.5) },
            p99_ms_at_most: if count == 0 { 0 } else { quantile(0.99) },
            max_ms: self.lateness_max_ms.load(Relaxed),
        }
    }

    pub(crate) fn set_shards(&self, shards: usize) {
        let leader = shards > 0;
        self.shards.store(shards as u64, Relaxed);
        metrics::gauge!(SHARDS_OWNED).set(shards as f64);
        self.leader.store(leader, Relaxed);
        metrics::gauge!(IS_LEADER).set(if leader { 1.0 } else { 0.0 });
        if !leader {
            self.set_monitors(0, 0);
            self.catchup_waiting.store(0, Relaxed);
            metrics::gauge!(CATCHUP_WAITING).set(0.0);
        }
    }

    pub(crate) fn record_catchup(&self, tally: crate::core::Tally) {
        self.catchup_waiting.store(tally.waiting as u64, Relaxed);
        self.catchup_released.fetch_add(tally.released, Relaxed);
        self.catchup_superseded.fetch_add(tally.superseded, Relaxed);
        metrics::gauge!(CATCHUP_WAITING).set(tally.waiting as f64);
        metrics::counter!(CATCHUP_RELEASED_TOTAL).increment(tally.released);
        metrics::counter!(CATCHUP_SUPERSEDED_TOTAL).increment(tally.superseded);
    }

    pub(crate) fn record_config_cache(&self, tally: crate::core::CacheTally) {
        self.config_cache_entries
            .store(tally.entries as u64, Relaxed);
        self.config_cache_bytes.store(tally.bytes as u64, Relaxed);
        metrics::gauge!(CONFIG_CACHE_ENTRIES).set(tally.entries as f64);
        metrics::gauge!(CONFIG_CACHE_BYTES).set(tally.bytes as f64);
        if tally.hits > 0 {
            self.config_cache_hits.fetch_add(tally.hits, Relaxed);
            metrics::counter!(CONFIG_CACHE_HITS_TOTAL).increment(tally.hits);
        }
        if tally.misses > 0 {
            self.config_cache_misses.fetch_add(tally.misses, Relaxed);
            metrics::counter!(CONFIG_CACHE_MISSES_TOTAL).increment(tally.misses);
        }
        if tally.rejected > 0 {
            metrics::counter!(CONFIG_CACHE_REJECTED_TOTAL).increment(tally.rejected);
        }
    }

    pub(crate) fn set_monitors(&self, monitors: usize, bytes_per_monitor: usize) {
        self.monitors.store(monitors as u64, Relaxed);
        self.bytes_per_monitor
            .store(bytes_per_monitor as u64, Relaxed);
        metrics::gauge!(MONITORS).set(monitors as f64);
    }

    pub(crate) fn record_load(&self) {
        self.loads.fetch_add(1, Relaxed);
    }

    /// Lateness is measured from the slot, so a check caught up at the start
    /// of leadership (a slot missed while no scheduler ran) counts as late by
    /// the length of the outage.
    pub(crate) fn record_sent(&self, kind: PublishKind, lateness_ms: i64) {
        let late = lateness_ms.max(0) as u64;
        let bucket = LATENESS_BOUNDS_MS
            .iter()
            .position(|bound| late <= *bound)
            .unwrap_or(LATENESS_BOUNDS_MS.len());
        self.lateness_buckets[bucket].fetch_add(1, Relaxed);
        self.lateness_max_ms.fetch_max(late, Relaxed);
        metrics::histogram!(PUBLISH_LATENESS, "kind" => kind.as_str()).record(late as f64 / 1000.0);
    }

    pub(crate) fn record_acked(&self, kind: PublishKind, duplicate: bool) {
        if duplicate {
            self.duplicates.fetch_add(1, Relaxed);
            metrics::counter!(DUPLICATES_TOTAL, "kind" => kind.as_str()).increment(1);
        } else {
            self.published.fetch_add(1, Relaxed);
            metrics::counter!(PUBLISHED_TOTAL, "kind" => kind.as_str()).increment(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_the_buckets() {
        let stats = SchedulerStats::default();
        for _ in 0..98 {
            stats.record_sent(PublishKind::Check, 0);
        }
        stats.record_sent(PublishKind::Check, 30);
        stats.record_sent(PublishKind::Check, 700);
        let summary = stats.lateness();
        assert_eq!(summary.count, 100);
        assert_eq!(summary.p50_ms_at_most, 1);
        assert_eq!(summary.p99_ms_at_most, 50);
        assert_eq!(summary.max_ms, 700);
    }

    #[test]
    fn duplicates_are_counted_apart() {
        let stats = SchedulerStats::default();
        stats.record_acked(PublishKind::Check, false);
        stats.record_acked(PublishKind::Check, true);
        assert_eq!((stats.published(), stats.duplicates()), (1, 1));
    }
}
