//! The leader's loop: keep the timeline in step with the database, read the
//! configuration of what is about to be due, and publish each check at its
//! due instant.
//!
//! One iteration:
//! 1. **stage**: pop everything due within the lookahead from the timeline and
//!    read the configuration of the checked ones in one query (`id = ANY`);
//!    they wait in `ready` with their `CheckSpecV1` snapshot;
//! 2. **fire**: publish everything in `ready` that is due, and put each
//!    monitor back on the timeline at its next slot; heartbeat deadlines that
//!    are due are re-read in one query and either moved (a ping arrived) or
//!    reported as a failed check;
//! 3. sleep until the next due instant, a change to a monitor, an
//!    acknowledgement, the lease check or the resync timer.
//!
//! The full load at the start of leadership and the periodic resync are the
//! same paged walk over the active monitors, one page per iteration, so a
//! large table never stalls publishing.

use crate::lease::Lease;
use crate::publisher::{record, Outbound, Publisher};
use crate::queue::{Due, DueQueue, Kind};
use crate::settings::ScheduleSettings;
use crate::slots;
use crate::stats::{PublishKind, SchedulerStats};
use crate::timing::Timing;
use async_nats::jetstream::{self, consumer};
use chrono::{DateTime, Utc};
use futures::{FutureExt, StreamExt};
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::streams::MONITORS_STREAM;
use uptime_contracts::{
    CheckDueV2, CheckOutcome, CheckResultV2, CheckSpecV1, KeywordType, Message, MonitorChangedV1,
    MonitorKind, Trigger,
};
use uptime_db::schedule::{self, CheckConfig, MonitorTiming};
use uptime_db::DbError;

/// Rows per page of the full load and resync.
const RESYNC_PAGE: i64 = 5_000;
/// Ids per `id = ANY($1)` query.
const IDS_PER_QUERY: usize = 10_000;
/// Change events applied per query.
const CHANGES_PER_BATCH: usize = 1_000;
/// How long the scheduler waits before retrying after a failed query.
const DB_RETRY_MS: i64 = 500;
/// A query that takes longer counts as failed (and is retried).
const DB_TIMEOUT: Duration = Duration::from_secs(5);
/// A resync page is not read when a publish is due sooner than this...
const RESYNC_SLACK_MS: i64 = 20;
/// ...unless the last page was read this long ago (a dense schedule never
/// leaves 20 ms of slack, and the resync must still finish).
const RESYNC_MAX_PAUSE_MS: i64 = 200;
/// How long in-flight publishes may take to be acknowledged at shutdown.
const DRAIN_GRACE: Duration = Duration::from_secs(10);

pub(crate) const REPORTER: &str = "scheduler";

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("following monitor changes: {0}")]
    Subscribe(String),
    #[error("the monitor change feed ended")]
    ChangesEnded,
}

/// Why leadership ended without an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Shutdown,
    LostLease,
}

/// An item taken off the timeline, waiting for its due instant.
struct Ready {
    due: Due,
    /// The snapshot for a checked monitor; `None` for a heartbeat deadline,
    /// which is re-read at the deadline itself.
    snapshot: Option<Snapshot>,
}

/// What a due check is made of, read from the row just before it is due.
struct Snapshot {
    spec: CheckSpecV1,
    /// The row's definition version, which the check and its result carry.
    definition_version: i64,
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.due == other.due
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ready {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.due.cmp(&other.due)
    }
}

/// The walk over all active monitors (full load or resync) in progress.
struct Resync {
    after_id: i64,
    /// When the last page was read.
    last_page_at: i64,
    /// Ids seen so far, ascending (pages come in id order).
    seen: Vec<i64>,
    full_load: bool,
}

pub(crate) struct Engine {
    pool: uptime_db::Pool,
    js: jetstream::Context,
    config: ScheduleSettings,
    stats: Arc<SchedulerStats>,
    queue: DueQueue,
    ready: BinaryHeap<Reverse<Ready>>,
    publisher: Publisher,
    /// Staging runs at most this often unless something is due already.
    next_stage_at: i64,
    /// After a failed query, staging and resync wait until then.
    db_backoff_until: i64,
    resync: Option<Resync>,
    /// Monitors to re-read: changed, or possibly gone (from a resync).
    pending_changes: BTreeSet<i64>,
}

pub(crate) fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

fn to_datetime(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

impl Engine {
    pub fn new(
        pool: uptime_db::Pool,
        js: jetstream::Context,
        config: ScheduleSettings,
        stats: Arc<SchedulerStats>,
    ) -> Self {
        let publisher = Publisher::new(js.clone(), config.max_in_flight);
        Self {
            pool,
            js,
            config,
            stats,
            queue: DueQueue::new(),
            ready: BinaryHeap::new(),
            publisher,
            next_stage_at: 0,
            db_backoff_until: 0,
            resync: None,
            pending_changes: BTreeSet::new(),
        }
    }

    /// Schedules until shutdown, a lost lease or a broken change feed.
    pub async fn lead(
        mut self,
        lease: &mut Lease,
        shutdown: &CancellationToken,
    ) -> Result<Ended, EngineError> {
        // Follow changes first, then load: a change committed while the load
        // runs is then in the feed whether or not the load saw it.
        let mut changes = Box::pin(subscribe_changes(&self.js).await?);
        self.resync = Some(Resync::start(true));

        let mut lease_check = tokio::time::interval(self.config.lease_interval());
        lease_check.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        lease_check.tick().await;
        let resync_every = self.config.resync_interval();
        let mut resync_timer =
            tokio::time::interval_at(tokio::time::Instant::now() + resync_every, resync_every);
        resync_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);

        let ended = loop {
            if !self.pending_changes.is_empty() && now_ms() >= self.db_backoff_until {
                self.apply_pending_changes().await;
            }
            self.stage(now_ms()).await;
            self.fire().await;
            if self.resync_may_step(now_ms()) {
                self.resync_step().await;
            }
            let wake = self.next_wake(now_ms());
            let sleep = tokio::time::sleep(Duration::from_millis((wake - now_ms()).max(0) as u64));
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break Ok(Ended::Shutdown),
                _ = lease_check.tick() => {
                    if !lease.still_held().await {
                        break Ok(Ended::LostLease);
                    }
                }
                change = changes.next() => match change {
                    Some(first) => {
                        self.take_changes(first);
                        // Apply what else has arrived with it in the same query.
                        while self.pending_changes.len() < CHANGES_PER_BATCH {
                            match changes.next().now_or_never() {
                                Some(Some(more)) => self.take_changes(more),
                                _ => break,
                            }
                        }
                        self.apply_pending_changes().await;
                    }
                    None => break Err(EngineError::ChangesEnded),
                },
                done = self.publisher.next_acked() => record(&self.stats, done),
                _ = resync_timer.tick() => {
                    if self.resync.is_none() {
                        self.resync = Some(Resync::start(false));
                    }
                }
                _ = sleep => {}
            }
        };
        self.publisher.drain(DRAIN_GRACE, &self.stats).await;
        ended
    }

    fn take_changes(&mut self, message: Result<jetstream::Message, consumer::pull::OrderedError>) {
        match message {
            Ok(message) => match MonitorChangedV1::from_bytes(&message.payload) {
                Ok(change) => {
                    tracing::debug!(monitor_id = change.monitor_id, change = ?change.change, "monitor changed");
                    // Upserted or deleted: either way the row says what is true now.
                    self.pending_changes.insert(change.monitor_id);
                }
                Err(error) => tracing::warn!(%error, "ignoring an unreadable monitor change"),
            },
            // The ordered consumer recreates itself after gaps and reconnects.
            Err(error) => tracing::warn!(%error, "monitor change feed error"),
        }
    }

    /// Re-reads the changed monitors and puts them on (or takes them off) the timeline.
    async fn apply_pending_changes(&mut self) {
        let ids: Vec<i64> = self.pending_changes.iter().copied().collect();
        let rows = match timings_by_ids(&self.pool, &ids).await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, changes = ids.len(), "reading changed monitors failed; retrying");
                self.db_backoff_until = now_ms() + DB_RETRY_MS;
                return;
            }
        };
        self.pending_changes.clear();
        let now = now_ms();
        let mut present = std::collections::HashSet::with_capacity(rows.len());
        for row in &rows {
            present.insert(row.id);
            let timing = Timing::from_row(row);
            self.queue.schedule(
                timing.id,
                timing.kind,
                timing.interval_secs(),
                timing.first_due(now),
            );
        }
        for id in ids.iter().filter(|id| !present.contains(id)) {
            // Deleted or paused: its items in the heap and in `ready` are stale now.
            self.queue.remove(*id);
        }
        self.report_size();
    }

    /// Takes what is due within the lookahead off the timeline and reads the
    /// configuration of the checked monitors among it.
    async fn stage(&mut self, now: i64) {
        if now < self.db_backoff_until {
            return;
        }
        let urgent = self.queue.next_due_at().is_some_and(|due| due <= now);
        if now < self.next_stage_at && !urgent {
            return;
        }
        let lookahead = self.config.lookahead();
        self.next_stage_at = now + (lookahead / 4).max(10);
        let mut staged = Vec::new();
        while let Some(due) = self.queue.pop_due_until(now + lookahead) {
            staged.push(due);
        }
        if staged.is_empty() {
            return;
        }
        let checked: Vec<i64> = staged
            .iter()
            .filter(|d| self.queue.entry(d.monitor_id).map(|e| e.kind) == Some(Kind::Checked))
            .map(|d| d.monitor_id)
            .collect();
        let configs = match check_configs(&self.pool, &checked).await {
            Ok(configs) => configs,
            Err(error) => {
                tracing::warn!(%error, staged = staged.len(), "reading check configurations failed; retrying");
                for due in staged {
                    self.queue.requeue(due);
                }
                self.db_backoff_until = now_ms() + DB_RETRY_MS;
                return;
            }
        };
        let mut configs: HashMap<i64, CheckConfig> =
            configs.into_iter().map(|c| (c.id, c)).collect();
        let mut removed = false;
        for due in staged {
            let Some(entry) = self.queue.entry(due.monitor_id).copied() else {
                continue;
            };
            if entry.kind == Kind::Heartbeat {
                self.ready.push(Reverse(Ready {
                    due,
                    snapshot: None,
                }));
                continue;
            }
            let Some(config) = configs.remove(&due.monitor_id) else {
                // Paused or deleted, and the change event has not arrived (or was lost).
                removed |= self.queue.remove(due.monitor_id);
                continue;
            };
            if Kind::of(&config.kind) != Kind::Checked
                || config.interval_secs.max(1) as u32 != entry.interval_secs
            {
                // Changed without (or ahead of) its event: start over from the row.
                self.pending_changes.insert(due.monitor_id);
                continue;
            }
            match spec_of(&config) {
                Some(spec) => self.ready.push(Reverse(Ready {
                    due,
                    snapshot: Some(Snapshot {
                        spec,
                        definition_version: config.definition_version,
                    }),
                })),
                None => {
                    tracing::warn!(
                        monitor_id = due.monitor_id,
                        "monitor row cannot be checked (no target or unknown type); skipping it"
                    );
                    removed |= self.queue.remove(due.monitor_id);
                }
            }
        }
        if removed {
            self.report_size();
        }
    }

    /// Publishes everything in `ready` that is due.
    async fn fire(&mut self) {
        let now = now_ms();
        let mut heartbeats = Vec::new();
        while self
            .ready
            .peek()
            .is_some_and(|Reverse(r)| r.due.due_at_ms <= now)
        {
            let Some(Reverse(ready)) = self.ready.pop() else {
                break;
            };
            if !self.queue.is_current(&ready.due) {
                continue;
            }
            match ready.snapshot {
                Some(snapshot) => self.publish_check(ready.due, snapshot).await,
                None => heartbeats.push(ready.due),
            }
        }
        if !heartbeats.is_empty() {
            self.fire_heartbeats(heartbeats).await;
        }
    }

    async fn publish_check(&mut self, due: Due, snapshot: Snapshot) {
        let check_id = slots::check_id(due.monitor_id, due.due_at_ms);
        let Some(entry) = self.queue.entry(due.monitor_id).copied() else {
            return;
        };
        let message = CheckDueV2 {
            check_id,
            monitor_id: due.monitor_id,
            definition_version: snapshot.definition_version,
            interval_secs: entry.interval_secs,
            trigger: Trigger::Scheduled,
            due_at: to_datetime(due.due_at_ms),
            spec: snapshot.spec,
        };
        let span = tracing::info_span!("schedule_check", monitor_id = due.monitor_id, %check_id);
        let headers =
            span.in_scope(|| uptime_telemetry::nats::headers_with_msg_id(&check_id.to_string()));
        self.publisher
            .send(
                Outbound {
                    kind: PublishKind::Check,
                    subject: CheckDueV2::SUBJECT,
                    headers,
                    payload: message.to_bytes(),
                },
                &self.stats,
            )
            .await;
        self.stats
            .record_sent(PublishKind::Check, now_ms() - due.due_at_ms);
        let interval_ms = i64::from(entry.interval_secs) * 1000;
        self.queue.requeue(Due {
            due_at_ms: slots::slot_after(due.monitor_id, interval_ms, due.due_at_ms),
            ..due
        });
    }

    /// Heartbeat deadlines that are due: re-read the rows; a ping since moved
    /// the deadline, otherwise the period is a failed check.
    async fn fire_heartbeats(&mut self, dues: Vec<Due>) {
        let ids: Vec<i64> = dues.iter().map(|d| d.monitor_id).collect();
        let rows = match timings_by_ids(&self.pool, &ids).await {
            Ok(rows) => rows,
            Err(error) => {
                tracing::warn!(%error, deadlines = dues.len(), "reading heartbeat monitors failed; retrying");
                for due in dues {
                    self.queue.requeue(due);
                }
                self.db_backoff_until = now_ms() + DB_RETRY_MS;
                return;
            }
        };
        let rows: HashMap<i64, Timing> = rows.iter().map(|r| (r.id, Timing::from_row(r))).collect();
        let mut removed = false;
        for due in dues {
            let Some(timing) = rows.get(&due.monitor_id) else {
                removed |= self.queue.remove(due.monitor_id);
                continue;
            };
            if timing.kind != Kind::Heartbeat {
                self.pending_changes.insert(due.monitor_id);
                continue;
            }
            let deadline = timing.heartbeat_deadline();
            if deadline > due.due_at_ms {
                self.queue.requeue(Due {
                    due_at_ms: deadline,
                    ..due
                });
                continue;
            }
            self.publish_missed_heartbeat(due, timing).await;
            let next = due.due_at_ms + timing.interval_ms;
            let unchanged = self
                .queue
                .entry(due.monitor_id)
                .is_some_and(|e| e.interval_secs == timing.interval_secs());
            if unchanged {
                self.queue.requeue(Due {
                    due_at_ms: next,
                    ..due
                });
            } else {
                self.queue.schedule(
                    due.monitor_id,
                    Kind::Heartbeat,
                    timing.interval_secs(),
                    next,
                );
            }
        }
        if removed {
            self.report_size();
        }
    }

    async fn publish_missed_heartbeat(&mut self, due: Due, timing: &Timing) {
        let check_id = slots::missed_heartbeat_id(due.monitor_id, due.due_at_ms);
        let deadline = to_datetime(due.due_at_ms);
        let result = CheckResultV2 {
            check_id,
            monitor_id: due.monitor_id,
            definition_version: timing.definition_version,
            trigger: Trigger::Heartbeat,
            due_at: Some(deadline),
            checked_at: deadline,
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some(format!(
                "no ping received within {}s + {}s grace",
                timing.interval_ms / 1000,
                timing.grace_ms / 1000
            )),
            ssl_expires_at: None,
            reporter: REPORTER.to_string(),
        };
        let span = tracing::info_span!("missed_heartbeat", monitor_id = due.monitor_id, %check_id);
        let headers =
            span.in_scope(|| uptime_telemetry::nats::headers_with_msg_id(&check_id.to_string()));
        span.in_scope(|| tracing::info!("no heartbeat ping before the deadline"));
        self.publisher
            .send(
                Outbound {
                    kind: PublishKind::MissedHeartbeat,
                    subject: CheckResultV2::SUBJECT,
                    headers,
                    payload: result.to_bytes(),
                },
                &self.stats,
            )
            .await;
        self.stats
            .record_sent(PublishKind::MissedHeartbeat, now_ms() - due.due_at_ms);
    }

    /// Whether to read the next resync page now. The load at the start of
    /// leadership goes at full speed (catching up missed slots depends on it);
    /// a periodic resync yields to publishes that are about to be due.
    fn resync_may_step(&self, now: i64) -> bool {
        let Some(resync) = &self.resync else {
            return false;
        };
        if now < self.db_backoff_until {
            return false;
        }
        resync.full_load
            || now - resync.last_page_at >= RESYNC_MAX_PAUSE_MS
            || self
                .ready
                .peek()
                .is_none_or(|Reverse(r)| r.due.due_at_ms - now > RESYNC_SLACK_MS)
    }

    /// Reads one page of active monitors and reconciles the timeline with it.
    async fn resync_step(&mut self) {
        let Some(after_id) = self.resync.as_ref().map(|r| r.after_id) else {
            return;
        };
        let page = match timings_page(&self.pool, after_id).await {
            Ok(page) => page,
            Err(error) => {
                tracing::warn!(%error, "reading monitors for the resync failed; retrying");
                self.db_backoff_until = now_ms() + DB_RETRY_MS;
                return;
            }
        };
        let now = now_ms();
        let Some(resync) = self.resync.as_mut() else {
            return;
        };
        resync.last_page_at = now;
        for row in &page {
            resync.seen.push(row.id);
            resync.after_id = row.id;
            let timing = Timing::from_row(row);
            let known = self.queue.entry(timing.id).is_some_and(|e| {
                e.kind == timing.kind && e.interval_secs == timing.interval_secs()
            });
            if !known {
                self.queue.schedule(
                    timing.id,
                    timing.kind,
                    timing.interval_secs(),
                    timing.first_due(now),
                );
            }
        }
        if page.len() as i64 == RESYNC_PAGE {
            self.report_size();
            return;
        }
        // Done. Monitors on the timeline that the walk did not see were
        // deleted or paused, or created after their page was read: re-read
        // them like changed monitors to tell which.
        let Some(resync) = self.resync.take() else {
            return;
        };
        let unseen: Vec<i64> = self
            .queue
            .ids()
            .filter(|id| resync.seen.binary_search(id).is_err())
            .collect();
        self.pending_changes.extend(unseen);
        self.report_size();
        self.stats.record_load();
        tracing::info!(
            monitors = self.queue.len(),
            bytes_per_monitor = self.queue.approx_bytes_per_monitor(),
            full_load = resync.full_load,
            "monitors loaded"
        );
    }

    fn next_wake(&mut self, now: i64) -> i64 {
        let mut wake = self
            .ready
            .peek()
            .map(|Reverse(r)| r.due.due_at_ms)
            .unwrap_or(now + 60_000);
        if let Some(next) = self.queue.next_due_at() {
            let stage_at = (next - self.config.lookahead())
                .max(self.next_stage_at)
                .min(next);
            wake = wake.min(stage_at.max(self.db_backoff_until));
        }
        if !self.pending_changes.is_empty() {
            wake = wake.min(self.db_backoff_until);
        }
        if let Some(resync) = &self.resync {
            let step_at = if self.resync_may_step(now) {
                now
            } else {
                // Waiting for slack: the publish due first wakes us anyway.
                resync.last_page_at + RESYNC_MAX_PAUSE_MS
            };
            wake = wake.min(step_at.max(self.db_backoff_until));
        }
        wake
    }

    fn report_size(&self) {
        self.stats
            .set_monitors(self.queue.len(), self.queue.approx_bytes_per_monitor());
    }
}

// Queries take the pool, not the engine: a borrowed engine held across an
// await would have to be `Sync`, which its publish futures are not. Waiting
// for a connection counts towards the timeout, so a database that does not
// answer stalls nothing for long.
async fn timings_by_ids(
    pool: &uptime_db::Pool,
    ids: &[i64],
) -> Result<Vec<MonitorTiming>, DbError> {
    let mut rows = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        rows.extend(
            with_timeout(async {
                let mut conn = uptime_db::pool::conn(pool).await?;
                schedule::active_timings_by_ids(&mut conn, chunk).await
            })
            .await?,
        );
    }
    Ok(rows)
}

async fn check_configs(pool: &uptime_db::Pool, ids: &[i64]) -> Result<Vec<CheckConfig>, DbError> {
    let mut rows = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(IDS_PER_QUERY) {
        rows.extend(
            with_timeout(async {
                let mut conn = uptime_db::pool::conn(pool).await?;
                schedule::active_check_configs(&mut conn, chunk).await
            })
            .await?,
        );
    }
    Ok(rows)
}

async fn timings_page(
    pool: &uptime_db::Pool,
    after_id: i64,
) -> Result<Vec<MonitorTiming>, DbError> {
    with_timeout(async {
        let mut conn = uptime_db::pool::conn(pool).await?;
        schedule::active_timings_page(&mut conn, after_id, RESYNC_PAGE).await
    })
    .await
}

impl Resync {
    fn start(full_load: bool) -> Self {
        Self {
            after_id: 0,
            last_page_at: 0,
            seen: Vec::new(),
            full_load,
        }
    }
}

async fn with_timeout<T>(
    query: impl std::future::Future<Output = Result<T, DbError>>,
) -> Result<T, DbError> {
    tokio::time::timeout(DB_TIMEOUT, query)
        .await
        .map_err(|_| DbError::Pool(format!("query timed out after {DB_TIMEOUT:?}")))?
}

/// The checker's snapshot of a monitor row; `None` when the row cannot be
/// checked (which the API never lets happen).
fn spec_of(config: &CheckConfig) -> Option<CheckSpecV1> {
    let kind = MonitorKind::parse(&config.kind)?;
    if kind == MonitorKind::Heartbeat {
        return None;
    }
    Some(CheckSpecV1 {
        kind,
        target: config.target.clone()?,
        timeout_secs: config.timeout_secs.max(1) as u32,
        expected_status: u16::try_from(config.expected_status).ok()?,
        keyword: config.keyword.clone(),
        keyword_type: config.keyword_type.as_deref().and_then(KeywordType::parse),
    })
}

/// An ordered consumer of monitor changes that starts with the next one
/// published: the full load that follows covers everything before it.
async fn subscribe_changes(
    js: &jetstream::Context,
) -> Result<consumer::pull::Ordered, EngineError> {
    let stream = js
        .get_stream(MONITORS_STREAM)
        .await
        .map_err(|e| EngineError::Subscribe(e.to_string()))?;
    let consumer = stream
        .create_consumer(consumer::pull::OrderedConfig {
            filter_subject: MonitorChangedV1::SUBJECT.to_string(),
            deliver_policy: consumer::DeliverPolicy::New,
            ..Default::default()
        })
        .await
        .map_err(|e| EngineError::Subscribe(e.to_string()))?;
    consumer
        .messages()
        .await
        .map_err(|e| EngineError::Subscribe(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: &str, target: Option<&str>) -> CheckConfig {
        CheckConfig {
            id: 1,
            kind: kind.into(),
            interval_secs: 60,
            target: target.map(Into::into),
            timeout_secs: 5,
            expected_status: 204,
            keyword: Some("ok".into()),
            keyword_type: Some("not_contains".into()),
            definition_version: 1,
        }
    }

    #[test]
    fn the_snapshot_carries_the_row() {
        let spec = spec_of(&config("keyword", Some("https://example.com"))).unwrap();
        assert_eq!(spec.kind, MonitorKind::Keyword);
        assert_eq!(spec.target, "https://example.com");
        assert_eq!((spec.timeout_secs, spec.expected_status), (5, 204));
        assert_eq!(spec.keyword.as_deref(), Some("ok"));
        assert_eq!(spec.keyword_type, Some(KeywordType::NotContains));
    }

    #[test]
    fn rows_that_cannot_be_checked_have_no_snapshot() {
        assert!(spec_of(&config("http", None)).is_none());
        assert!(spec_of(&config("heartbeat", Some("https://x"))).is_none());
    }

    #[test]
    fn ready_items_come_out_earliest_first() {
        let mut ready = BinaryHeap::new();
        for due_at_ms in [30, 10, 20] {
            ready.push(Reverse(Ready {
                due: Due {
                    due_at_ms,
                    monitor_id: due_at_ms,
                    generation: 0,
                },
                snapshot: None,
            }));
        }
        let order: Vec<i64> =
            std::iter::from_fn(|| ready.pop().map(|Reverse(r)| r.due.due_at_ms)).collect();
        assert_eq!(order, vec![10, 20, 30]);
    }
}
