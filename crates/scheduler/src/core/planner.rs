//! The planner: the timeline ([`DueQueue`]), the staged items waiting for
//! their due instant, and the decisions of each round (see the module
//! documentation of [`crate::core`]).

use super::catchup::{Catchup, CatchupPolicy};
use super::config_cache::{CacheTally, ConfigCache};
use super::heartbeats;
use super::messages::Ready;
use super::shards::Owned;
use super::{DbFailed, Publication, Read, Report, Rows, Step, RESYNC_PAGE};
use crate::queue::{Due, DueQueue};
use crate::slots;
use crate::timing::Timing;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashSet, VecDeque};
use uptime_config::RegionsSettings;
use uptime_db::schedule::MonitorTiming;

mod outage;
mod ownership;
mod stage;

/// How long the scheduler waits before retrying after a failed query.
pub(crate) const DB_RETRY_MS: i64 = 500;
/// A resync page is not read when a publish is due sooner than this...
const RESYNC_SLACK_MS: i64 = 20;
/// ...unless the last page was read this long ago (a dense schedule never
/// leaves 20 ms of slack, and the resync must still finish).
const RESYNC_MAX_PAUSE_MS: i64 = 200;
/// How long the planner sleeps when nothing at all is scheduled.
const IDLE_MS: i64 = 60_000;

/// The walk over all active monitors (full load or resync) in progress.
#[derive(Debug)]
struct Resync {
    after_id: i64,
    /// When the last page was read.
    last_page_at: i64,
    /// Ids seen so far, ascending (pages come in id order).
    seen: Vec<i64>,
    full_load: bool,
}

/// Where the current round is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Changes,
    Catchup,
    Stage,
    Fire,
    Heartbeats,
    Resync,
    Sleep,
}

/// The read the planner waits for, with what it needs to use the answer.
#[derive(Debug)]
enum Awaiting {
    Changed,
    CheckConfigs(Vec<Due>),
    Heartbeats(Vec<Due>),
    Page,
}

#[derive(Debug)]
pub(crate) struct Planner {
    lookahead_ms: i64,
    queue: DueQueue,
    /// Overdue items waiting for the catch-up budget.
    catchup: Catchup,
    ready: BinaryHeap<Reverse<Ready>>,
    /// Staging runs at most this often unless something is due already.
    next_stage_at: i64,
    /// After a failed query, staging and resync wait until then.
    db_backoff_until: i64,
    resync: Option<Resync>,
    /// Monitors to re-read: changed, or possibly gone (from a resync).
    pending_changes: BTreeSet<i64>,
    /// A change event arrived since the last round: re-read at once, even
    /// while backing off.
    changes_arrived: bool,
    phase: Phase,
    /// The read handed out last and not answered yet. Set only when the
    /// [`Step::Read`] is returned, never while steps queued before it are
    /// still in the outbox.
    awaiting: Option<Awaiting>,
    /// Heartbeat deadlines fired this round, to re-read once the
    /// publications fired with them are handed out.
    heartbeats_due: Vec<Due>,
    /// Publications and reports decided but not handed out yet.
    outbox: VecDeque<Step>,
    /// Where a monitor naming no regions is checked from.
    regions: RegionsSettings,
    /// The shards on the timeline (see `core::shards`).
    owned: Owned,
    /// The `now` of the last round: everything due by then was fired.
    fired_through: i64,
    /// The last configuration read of each checked monitor, for when a read
    /// fails (see `core::config_cache`).
    config_cache: ConfigCache,
}

impl Planner {
    /// `lookahead_ms`: how long before its due instant a check's
    /// configuration is read; `catchup`: how fast overdue work goes out.
    pub(crate) fn new(lookahead_ms: i64, catchup: CatchupPolicy) -> Self {
        Self {
            lookahead_ms,
            queue: DueQueue::new(),
            catchup: Catchup::new(catchup),
            ready: BinaryHeap::new(),
            next_stage_at: 0,
            db_backoff_until: 0,
            resync: None,
            pending_changes: BTreeSet::new(),
            changes_arrived: false,
            phase: Phase::Changes,
            awaiting: None,
            heartbeats_due: Vec::new(),
            outbox: VecDeque::new(),
            regions: RegionsSettings::default(),
            owned: Owned::everything(),
            fired_through: i64::MIN,
            config_cache: ConfigCache::new(0),
        }
    }

    /// Keeps up to `budget_bytes` of configurations to publish from while
    /// the database cannot be read (0: none).
    pub(crate) fn with_config_cache_bytes(mut self, budget_bytes: usize) -> Self {
        self.config_cache = ConfigCache::new(budget_bytes);
        self
    }

    /// The configuration cache's size now and its counts since the last call.
    pub(crate) fn config_cache_tally(&mut self) -> CacheTally {
        self.config_cache.take_tally()
    }

    /// The deployment's regions (the default: one region, `default`).
    pub(crate) fn with_regions(mut self, regions: RegionsSettings) -> Self {
        self.regions = regions;
        self
    }

    /// Starts a walk over all active monitors, unless one is running. The
    /// full load (at the start of leadership) reads page after page; a
    /// periodic resync yields to publishes about to be due.
    pub(crate) fn start_resync(&mut self, full_load: bool) {
        if self.resync.is_none() {
            self.resync = Some(Resync {
                after_id: 0,
                last_page_at: 0,
                seen: Vec::new(),
                full_load,
            });
        }
    }

    /// A change event named `monitor_id`: upserted or deleted, either way
    /// the row says what is true now.
    pub(crate) fn monitor_changed(&mut self, monitor_id: i64) {
        // Whatever changed, the cached configuration may be stale now: the
        // next read stores the new one.
        self.config_cache.remove(monitor_id);
        self.pending_changes.insert(monitor_id);
    }

    /// The change events that arrived together are all in: the next round
    /// re-reads them at once.
    pub(crate) fn changes_arrived(&mut self) {
        self.changes_arrived = true;
    }

    /// Monitors waiting to be re-read.
    pub(crate) fn pending_changes(&self) -> usize {
        self.pending_changes.len()
    }

    /// Monitors on the timeline.
    #[cfg(test)]
    pub(crate) fn monitors(&self) -> usize {
        self.queue.len()
    }

    /// The next thing to do at `now`. After a [`Step::Read`], call
    /// [`Planner::loaded`] first; after [`Step::Sleep`], the next call starts
    /// a new round.
    pub(crate) fn next(&mut self, now: i64) -> Step {
        debug_assert!(self.awaiting.is_none(), "a read is still outstanding");
        loop {
            if let Some(step) = self.outbox.pop_front() {
                return step;
            }
            match self.phase {
                Phase::Changes => {
                    self.phase = Phase::Catchup;
                    let arrived = std::mem::take(&mut self.changes_arrived);
                    if !self.pending_changes.is_empty() && (arrived || now >= self.db_backoff_until)
                    {
                        let ids: Vec<i64> = self.pending_changes.iter().copied().collect();
                        self.awaiting = Some(Awaiting::Changed);
                        return Step::Read(Read::Changed(ids));
                    }
                }
                Phase::Catchup => {
                    self.phase = Phase::Stage;
                    self.release_catchup(now);
                }
                Phase::Stage => {
                    self.phase = Phase::Fire;
                    if let Some(read) = self.stage(now) {
                        return Step::Read(read);
                    }
                }
                Phase::Fire => {
                    self.phase = Phase::Heartbeats;
                    self.fire(now);
                }
                Phase::Heartbeats => {
                    self.phase = Phase::Resync;
                    // The outbox is empty here: what `fire` queued has been
                    // handed out, so the read is the only step outstanding.
                    if !self.heartbeats_due.is_empty() {
                        let dues = std::mem::take(&mut self.heartbeats_due);
                        let ids = dues.iter().map(|d| d.monitor_id).collect();
                        self.awaiting = Some(Awaiting::Heartbeats(dues));
                        return Step::Read(Read::Heartbeats(ids));
                    }
                }
                Phase::Resync => {
                    self.phase = Phase::Sleep;
                    if self.resync_may_step(now) {
                        if let Some(resync) = &self.resync {
                            self.awaiting = Some(Awaiting::Page);
                            return Step::Read(Read::Page {
                                after_id: resync.after_id,
                            });
                        }
                    }
                }
                Phase::Sleep => {
                    self.phase = Phase::Changes;
                    self.fired_through = now;
                    return Step::Sleep(self.next_wake(now));
                }
            }
        }
    }

    /// The answer to the last [`Step::Read`], at `now`.
    pub(crate) fn loaded(&mut self, rows: Result<Rows, DbFailed>, now: i64) {
        let Some(awaiting) = self.awaiting.take() else {
            debug_assert!(false, "rows loaded that nobody asked for");
            return;
        };
        match (awaiting, rows) {
            (Awaiting::Changed, Ok(Rows::Timings(rows))) => self.changes_read(&rows, now),
            (Awaiting::CheckConfigs(staged), Ok(Rows::Configs(configs))) => {
                self.configs_read(staged, configs)
            }
            (Awaiting::Heartbeats(dues), Ok(Rows::Timings(rows))) => {
                self.heartbeats_read(dues, &rows)
            }
            (Awaiting::Page, Ok(Rows::Timings(page))) => self.page_read(&page, now),
            (Awaiting::CheckConfigs(staged), _) => {
                // What the cache knows goes out on time; the rest waits.
                let waiting = self.serve_from_cache(staged);
                self.failed(waiting, now)
            }
            (Awaiting::Heartbeats(dues), _) => self.failed(dues, now),
            (Awaiting::Changed | Awaiting::Page, _) => self.failed(Vec::new(), now),
        }
    }

    /// A failed read: what was taken off the timeline goes back on, and
    /// reads pause for a moment.
    fn failed(&mut self, taken: Vec<Due>, now: i64) {
        for due in taken {
            self.queue.requeue(due);
        }
        // Within the lookahead, so the next try (and the cache, if it fails
        // too) still stages the checks due after this batch before they are due.
        self.db_backoff_until = now + DB_RETRY_MS.min(self.lookahead_ms / 2);
    }

    /// Puts the changed monitors on (or takes them off) the timeline.
    fn changes_read(&mut self, rows: &[MonitorTiming], now: i64) {
        let ids = std::mem::take(&mut self.pending_changes);
        let mut present = HashSet::with_capacity(rows.len());
        for row in rows {
            if !self.owned.owns(row.id) {
                continue;
            }
            present.insert(row.id);
            self.place(&Timing::from_row(row), now);
        }
        for id in ids.iter().filter(|id| !present.contains(id)) {
            // Deleted or paused: its items in the heap and in `ready` are stale now.
            self.queue.remove(*id);
            self.config_cache.remove(*id);
        }
        self.report_size();
    }

    /// Lets what the catch-up budget allows back onto the timeline (not
    /// before the load at the start is complete, so that the rate is known).
    fn release_catchup(&mut self, now: i64) {
        let may_release = !self.loading();
        self.catchup
            .release(now, self.lookahead_ms, may_release, &mut self.queue);
        if let Some(tally) = self.catchup.tally(&self.queue) {
            self.outbox.push_back(Step::Report(Report::Catchup(tally)));
        }
    }

    /// Publishes everything in `ready` that is due, putting each checked
    /// monitor back on the timeline at its next slot; collects the heartbeat
    /// deadlines among it in `heartbeats_due`, read in the next phase.
    ///
    /// Those deadlines once went straight into `awaiting` while the checks
    /// fired with them were still queued, and the next call to `next`
    /// asserted that no read was outstanding: a debug build crashed when a
    /// check and a deadline were due in one pass. A release build lost
    /// nothing: the queued checks went out, then the deadlines were read in
    /// the same round, as now (the core test
    /// `a_heartbeat_deadline_and_a_check_due_in_one_pass_both_go_out`
    /// passes with debug assertions off before and after the fix).
    fn fire(&mut self, now: i64) {
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
            let due = ready.due;
            match ready.snapshot {
                Some(snapshot) => {
                    let Some(entry) = self.queue.entry(due.monitor_id).copied() else {
                        continue;
                    };
                    // Each region's check goes out on its own subject.
                    for check in snapshot.round {
                        self.outbox
                            .push_back(Step::Publish(Publication::Check(check)));
                    }
                    let interval_ms = i64::from(entry.interval_secs) * 1000;
                    self.queue.requeue(Due {
                        due_at_ms: slots::slot_after(due.monitor_id, interval_ms, due.due_at_ms),
                        ..due
                    });
                }
                None => self.heartbeats_due.push(due),
            }
        }
    }

    /// Heartbeat deadlines that are due, re-read (see [`heartbeats::reread`]).
    fn heartbeats_read(&mut self, dues: Vec<Due>, rows: &[MonitorTiming]) {
        let reread = heartbeats::reread(&mut self.queue, dues, rows);
        self.pending_changes.extend(reread.changed);
        let missed = reread.missed.into_iter();
        self.outbox
            .extend(missed.map(|m| Step::Publish(Publication::MissedHeartbeat(m))));
        if reread.removed {
            self.report_size();
        }
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

    /// Reconciles the timeline with one page of active monitors.
    fn page_read(&mut self, page: &[MonitorTiming], now: i64) {
        let Some(resync) = self.resync.as_mut() else {
            return;
        };
        resync.last_page_at = now;
        if let Some(last) = page.last() {
            resync.after_id = last.id;
        }
        for row in page {
            if !self.owned.owns(row.id) {
                continue;
            }
            if let Some(resync) = self.resync.as_mut() {
                resync.seen.push(row.id);
            }
            let timing = Timing::from_row(row);
            let known = self.queue.entry(timing.id).is_some_and(|e| {
                e.kind == timing.kind && e.interval_secs == timing.interval_secs()
            });
            if !known {
                self.place(&timing, now);
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
        self.owned.loaded();
        // Entries of monitors no longer scheduled here (deleted, paused or
        // moved without a change this replica saw) go.
        let queue = &self.queue;
        self.config_cache.retain(|id| queue.entry(id).is_some());
        let unseen: Vec<i64> = self
            .queue
            .ids()
            .filter(|id| resync.seen.binary_search(id).is_err())
            .collect();
        self.pending_changes.extend(unseen);
        self.report_size();
        self.outbox.push_back(Step::Report(Report::Loaded {
            monitors: self.queue.len(),
            bytes_per_monitor: self.queue.approx_bytes_per_monitor(),
            full_load: resync.full_load,
        }));
    }

    fn next_wake(&mut self, now: i64) -> i64 {
        let mut wake = self
            .ready
            .peek()
            .map(|Reverse(r)| r.due.due_at_ms)
            .unwrap_or(now + IDLE_MS);
        if let Some(next) = self.queue.next_due_at() {
            let stage_at = (next - self.lookahead_ms).max(self.next_stage_at).min(next);
            wake = wake.min(stage_at.max(self.db_backoff_until));
        }
        if !self.pending_changes.is_empty() {
            wake = wake.min(self.db_backoff_until);
        }
        let (lookahead, may_release) = (self.lookahead_ms, !self.loading());
        if let Some(at) = self
            .catchup
            .next_action_at(now, lookahead, may_release, &self.queue)
        {
            wake = wake.min(at);
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

    /// The load at the start of leadership is running.
    fn loading(&self) -> bool {
        self.resync.as_ref().is_some_and(|r| r.full_load)
    }

    fn report_size(&mut self) {
        self.outbox.push_back(Step::Report(Report::Size {
            monitors: self.queue.len(),
            bytes_per_monitor: self.queue.approx_bytes_per_monitor(),
        }));
    }
}
