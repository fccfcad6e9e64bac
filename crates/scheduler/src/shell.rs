//! The replica's loop: the shell around the [`crate::core`]. It runs the
//! reads the core asks for, publishes what it decides, reports the stats,
//! and sleeps until the core's next wake-up, a change to a monitor, an
//! acknowledgement, new shard grants or the resync timer. It decides nothing.
//!
//! It schedules the shards the lease driver grants it ([`crate::lease`]),
//! publishes a shard's checks only while its grant is valid, and reports
//! back how far everything it scheduled is published (the watermark the
//! leases carry to the next holder).

mod reads;

use crate::clock::Clock;
use crate::core::{grants, Planner, Publication, Report, Step};
use crate::lease::driver::LeaseLink;
use crate::lease::{EngineProgress, Grants, Stopped};
use crate::publisher::{record, Outbound, Publisher};
use crate::settings::ScheduleSettings;
use crate::shards::{shard_of, ShardSet};
use crate::stats::{PublishKind, SchedulerStats};
use async_nats::jetstream::{self, consumer};
use futures::{FutureExt, StreamExt};
use reads::read_rows;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_config::RegionsSettings;
use uptime_contracts::streams::MONITORS_STREAM;
use uptime_contracts::{check_due, check_result, Message, MonitorChangedV1};
use uptime_telemetry::Throttle;

/// Change events applied per query.
const CHANGES_PER_BATCH: usize = 1_000;
/// The longest the loop sleeps, however far the next due instant: it comes
/// round (and ticks its progress for `/readyz`) at least this often.
pub(crate) const LONGEST_SLEEP: Duration = Duration::from_secs(10);
/// How long in-flight publishes may take to be acknowledged at shutdown.
const DRAIN_GRACE: Duration = Duration::from_secs(10);
/// Change feed errors logged (see `uptime_telemetry::throttle`).
static CHANGE_FEED_ERRORS: Throttle = Throttle::new(Duration::from_secs(5));

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("following monitor changes: {0}")]
    Subscribe(String),
    #[error("the monitor change feed ended")]
    ChangesEnded,
}

pub(crate) struct Engine {
    pool: uptime_db::Pool,
    js: jetstream::Context,
    config: ScheduleSettings,
    stats: Arc<SchedulerStats>,
    clock: Clock,
    /// What the grants' `valid_until_ms` is measured by.
    lease_clock: Clock,
    planner: Planner,
    publisher: Publisher,
    /// The shards granted now, and until when each may be published.
    owned: ShardSet,
    valid_until_ms: Vec<i64>,
    /// The grants applied last.
    applied: Grants,
    /// The latest grants, read again before a publish is given up.
    grants: Option<tokio::sync::watch::Receiver<Grants>>,
    /// Per shard, the earliest slot not published because its grant had
    /// run out: the watermark stays below it while the shard stays here (a
    /// renewal may have landed meanwhile), so its next holder publishes it.
    dropped: BTreeMap<u16, i64>,
    /// The shards stopped and not granted since, with how far everything
    /// was published just before (reported with the progress: a shard
    /// given up is released with it, see `lease::replica`).
    stopped: Arc<BTreeMap<u16, Stopped>>,
    /// Ticked every time the loop comes round (`/readyz`).
    rounds: uptime_ops::Progress,
}

impl Engine {
    pub fn new(
        pool: uptime_db::Pool,
        js: jetstream::Context,
        config: ScheduleSettings,
        regions: RegionsSettings,
        stats: Arc<SchedulerStats>,
        clock: Clock,
    ) -> Self {
        let publisher = Publisher::new(js.clone(), config.max_in_flight);
        let shards = config.lease_timing().shards;
        let planner = Planner::new(config.lookahead(), config.catchup())
            .with_regions(regions)
            .with_config_cache_bytes(config.config_cache_bytes())
            .owning_nothing(shards);
        Self {
            owned: ShardSet::empty(shards),
            valid_until_ms: vec![i64::MIN; usize::from(shards)],
            applied: Grants {
                generation: 0,
                shards: BTreeMap::new(),
            },
            grants: None,
            dropped: BTreeMap::new(),
            stopped: Arc::default(),
            rounds: uptime_ops::Progress::unwatched(),
            pool,
            js,
            config,
            stats,
            lease_clock: clock.clone(),
            clock,
            planner,
            publisher,
        }
    }

    pub fn with_lease_clock(mut self, clock: Clock) -> Self {
        self.lease_clock = clock;
        self
    }

    /// Ticks `rounds` every time the loop comes round.
    pub fn watched_by(mut self, rounds: uptime_ops::Progress) -> Self {
        self.rounds = rounds;
        self
    }

    /// Schedules the granted shards until shutdown or a broken change feed.
    /// `restarted_through`: after a previous engine failed, how far it had
    /// published (its shards resume there, not at their lease's start).
    pub async fn run(
        mut self,
        link: &mut LeaseLink,
        restarted_through: Option<i64>,
        shutdown: &CancellationToken,
    ) -> Result<(), EngineError> {
        // Follow changes first, then load: a change committed while the load
        // runs is then in the feed whether or not the load saw it.
        let mut changes = Box::pin(subscribe_changes(&self.js).await?);
        let resync_every = self.config.resync_interval();
        let mut resync_timer =
            tokio::time::interval_at(tokio::time::Instant::now() + resync_every, resync_every);
        resync_timer.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let mut clock_moves = self.clock.moves();
        self.grants = Some(link.grants.clone());
        let mut grants_changed = true;

        let ended = loop {
            if std::mem::take(&mut grants_changed) {
                let grants = link.grants.borrow_and_update().clone();
                self.apply(&grants, restarted_through);
            }
            let wake = if self.planner.owns_nothing() {
                self.clock.now_ms() + 60_000
            } else {
                self.round().await
            };
            link.progress.send_replace(self.progress());
            self.rounds.tick();
            // An early round is harmless (every change event and ack
            // brings one): the planner does what is due by then.
            let wait = Duration::from_millis((wake - self.clock.now_ms()).max(0) as u64);
            let sleep = tokio::time::sleep(wait.min(LONGEST_SLEEP));
            tokio::select! {
                biased;
                _ = shutdown.cancelled() => break Ok(()),
                changed = link.grants.changed() => {
                    if changed.is_err() {
                        // The driver stopped: nothing is granted any more.
                        break Ok(());
                    }
                    grants_changed = true;
                }
                change = changes.next() => match change {
                    Some(first) => {
                        take_change(&mut self.planner, first);
                        // Apply what else has arrived with it in the same query.
                        while self.planner.pending_changes() < CHANGES_PER_BATCH {
                            match changes.next().now_or_never() {
                                Some(Some(more)) => take_change(&mut self.planner, more),
                                _ => break,
                            }
                        }
                        self.planner.changes_arrived();
                    }
                    None => break Err(EngineError::ChangesEnded),
                },
                done = self.publisher.next_acked() => record(&self.stats, done),
                _ = resync_timer.tick() => {
                    if !self.planner.owns_nothing() {
                        self.planner.start_resync(false);
                    }
                }
                _ = clock_moves.changed() => {}
                _ = sleep => {}
            }
        };
        self.publisher.drain(DRAIN_GRACE, &self.stats).await;
        // Stopped: everything it will ever publish is acknowledged or given
        // up (a given-up slot is earlier than this watermark only if it is
        // still in flight, and then the drain has kept it below).
        link.progress.send_replace(EngineProgress {
            generation: u64::MAX,
            ..self.progress()
        });
        ended
    }

    /// Schedules the shards of `grants` from now on.
    fn apply(&mut self, grants: &Grants, restarted_through: Option<i64>) {
        let now = self.clock.now_ms();
        let set = grants.set(self.owned.count());
        // How far the shards stopped now were published: the figure before
        // they leave the timeline (after, it rises with the others).
        let stopping: Vec<u16> = self.owned.iter().filter(|s| !set.contains(*s)).collect();
        let regained = self.stopped.keys().any(|s| set.contains(*s));
        if !stopping.is_empty() || regained {
            let through_ms = self.handed_out_through();
            let stopped = Arc::make_mut(&mut self.stopped);
            stopped.retain(|s, _| !set.contains(*s));
            for shard in stopping {
                let at = Stopped {
                    generation: grants.generation,
                    through_ms,
                };
                stopped.insert(shard, at);
            }
        }
        let load = grants::to_load(
            &self.applied,
            grants,
            &self.dropped,
            restarted_through,
            self.lease_clock.now_ms(),
        );
        // A shard loaded again resumes at or below its floor: the planner's
        // resume point holds the watermark back while it loads.
        for (shard, _) in &load {
            self.dropped.remove(shard);
        }
        self.dropped
            .retain(|shard, _| grants.shards.contains_key(shard));
        self.valid_until_ms.fill(i64::MIN);
        for (shard, grant) in &grants.shards {
            if let Some(until) = self.valid_until_ms.get_mut(usize::from(*shard)) {
                *until = grant.valid_until_ms;
            }
        }
        if set != self.owned || !load.is_empty() {
            let lost = self.owned.iter().filter(|s| !set.contains(*s)).count();
            tracing::info!(
                shards = set.len(),
                loaded = load.len(),
                lost,
                "scheduling a new set of shards"
            );
            self.planner
                .set_shards(set.clone(), &load, self.config.resume_max_gap_ms(), now);
            self.owned = set;
            self.stats.set_shards(self.owned.len());
        }
        self.applied = grants.clone();
    }

    /// How far everything scheduled here is handed to the publisher (the
    /// publishes in flight not counted: they are retried until acknowledged).
    fn handed_out_through(&mut self) -> i64 {
        let mut through = self.planner.published_through();
        if let Some(dropped) = self.dropped.values().min() {
            through = through.min(*dropped);
        }
        through
    }

    /// How far everything scheduled here is published.
    fn progress(&mut self) -> EngineProgress {
        let mut through = self.handed_out_through();
        if let Some(in_flight) = self.publisher.earliest_in_flight() {
            through = through.min(in_flight);
        }
        EngineProgress {
            generation: self.applied.generation,
            published_through_ms: through,
            stopped: self.stopped.clone(),
        }
    }

    /// Does what the core asks until it wants to sleep; returns until when.
    async fn round(&mut self) -> i64 {
        loop {
            match self.planner.next(self.clock.now_ms()) {
                Step::Read(read) => {
                    let rows = read_rows(&self.pool, &read).await;
                    self.planner.loaded(rows, self.clock.now_ms());
                }
                Step::Publish(publication) => self.publish(publication).await,
                Step::Report(report) => self.report(report),
                Step::Sleep(until) => {
                    self.stats
                        .record_config_cache(self.planner.config_cache_tally());
                    return until;
                }
            }
        }
    }

    async fn publish(&mut self, publication: Publication) {
        let due_at_ms = publication.due_at_ms();
        let monitor_id = match &publication {
            Publication::Check(due) => due.monitor_id,
            Publication::MissedHeartbeat(result) => result.monitor_id,
        };
        // A shard whose lease could not be renewed in time may already be
        // another replica's: not a message more for it. Not publishing
        // keeps this slot at or after the watermark its lease last carried,
        // so the next holder publishes it.
        let shard = shard_of(monitor_id, self.owned.count());
        if !self.may_publish(shard) {
            tracing::debug!(monitor_id, shard, "shard lease ran out; not publishing");
            let floor = self.dropped.entry(shard).or_insert(due_at_ms);
            *floor = (*floor).min(due_at_ms);
            return;
        }
        let (kind, subject, headers, payload) = match publication {
            Publication::Check(due) => {
                let span = tracing::info_span!("schedule_check", monitor_id = due.monitor_id, check_id = %due.check_id, region = %due.region);
                let headers = span.in_scope(|| {
                    uptime_telemetry::nats::headers_with_msg_id(&due.check_id.to_string())
                });
                // Its region's subject, so only that region's checkers take it.
                let (subject, payload) = check_due::encode(&due);
                (PublishKind::Check, subject, headers, payload)
            }
            Publication::MissedHeartbeat(result) => {
                let span = tracing::info_span!("missed_heartbeat", monitor_id = result.monitor_id, check_id = %result.check_id);
                let headers = span.in_scope(|| {
                    uptime_telemetry::nats::headers_with_msg_id(&result.check_id.to_string())
                });
                span.in_scope(|| tracing::info!("no heartbeat ping before the deadline"));
                let (subject, payload) = check_result::encode(&result);
                (
                    PublishKind::MissedHeartbeat,
                    subject.to_string(),
                    headers,
                    payload,
                )
            }
        };
        self.publisher
            .send(
                Outbound {
                    kind,
                    subject,
                    headers,
                    payload,
                    due_at_ms,
                },
                &self.stats,
            )
            .await;
        self.stats
            .record_sent(kind, self.clock.now_ms() - due_at_ms);
    }

    /// Whether `shard`'s grant is valid now (by the latest grants, which the
    /// loop may not have applied yet).
    fn may_publish(&mut self, shard: u16) -> bool {
        let now = self.lease_clock.now_ms();
        let index = usize::from(shard);
        if self
            .valid_until_ms
            .get(index)
            .is_some_and(|until| now < *until)
        {
            return true;
        }
        let fresh = self
            .grants
            .as_ref()
            .and_then(|g| g.borrow().shards.get(&shard).map(|g| g.valid_until_ms));
        match (fresh, self.valid_until_ms.get_mut(index)) {
            (Some(until), Some(cached)) if now < until && self.owned.contains(shard) => {
                *cached = until;
                true
            }
            _ => false,
        }
    }

    fn report(&self, report: Report) {
        match report {
            Report::Size {
                monitors,
                bytes_per_monitor,
            } => self.stats.set_monitors(monitors, bytes_per_monitor),
            Report::Loaded {
                monitors,
                bytes_per_monitor,
                full_load,
            } => {
                self.stats.record_load();
                tracing::info!(monitors, bytes_per_monitor, full_load, "monitors loaded");
            }
            Report::Catchup(tally) => self.stats.record_catchup(tally),
        }
    }
}

fn take_change(
    planner: &mut Planner,
    message: Result<jetstream::Message, consumer::pull::OrderedError>,
) {
    match message {
        Ok(message) => match MonitorChangedV1::from_bytes(&message.payload) {
            Ok(change) => {
                tracing::debug!(monitor_id = change.monitor_id, change = ?change.change, "monitor changed");
                planner.monitor_changed(change.monitor_id);
            }
            Err(error) => tracing::warn!(%error, "ignoring an unreadable monitor change"),
        },
        // The ordered consumer recreates itself after gaps and reconnects
        // (an attempt every few milliseconds while its stream has no leader).
        Err(error) => {
            if let Some(held_back) = CHANGE_FEED_ERRORS.admit() {
                tracing::warn!(%error, held_back, "monitor change feed error (logged at most every 5 s)");
            }
        }
    }
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
