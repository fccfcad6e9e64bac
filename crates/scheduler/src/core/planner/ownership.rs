//! The planner's side of sharding: which monitors it keeps, how a moved
//! shard's monitors are placed, and how far its work is published (see
//! `core::shards` and `crate::lease`).

use super::super::shards::Owned;
use super::Planner;
use crate::shards::ShardSet;
use crate::timing::Timing;
use std::cmp::Reverse;

impl Planner {
    /// A planner of a replica with leases: it owns none of the `shards`
    /// until its first grant. (A planner starts out owning everything, as
    /// one without leases does; a replica's would then place a monitor
    /// changed before the first grant, fire its first slot while no grant
    /// lets it be published, and keep the monitor at its next slot.)
    pub(crate) fn owning_nothing(mut self, shards: u16) -> Self {
        self.owned = Owned::nothing(shards);
        self
    }

    /// Schedules only the monitors of `set` from `now` on: forgets the
    /// others, and loads those of the `gained` shards (each with where it
    /// resumes) with a new walk over all active monitors.
    pub(crate) fn set_shards(
        &mut self,
        set: ShardSet,
        gained: &[(u16, i64)],
        resume_max_gap_ms: i64,
        now: i64,
    ) {
        let owned = std::mem::replace(&mut self.owned, Owned::everything());
        self.owned = owned.with_max_gap(resume_max_gap_ms);
        let gone = self.owned.replace(set, gained, now, &self.queue);
        for id in &gone {
            self.queue.remove(*id);
            self.config_cache.remove(*id);
        }
        if !gone.is_empty() {
            self.report_size();
        }
        if !gained.is_empty() {
            // From the first id again, so the gained shards are read whole.
            self.resync = None;
            self.start_resync(true);
        }
    }

    /// Whether no shard is scheduled here.
    pub(crate) fn owns_nothing(&self) -> bool {
        self.owned.is_empty()
    }

    /// Every slot due before the returned instant that this planner
    /// scheduled has been handed out for publishing: the last round fired
    /// everything due by its `now`; nothing earlier is left on the timeline
    /// (a read that failed puts its items back there) or staged; a moved
    /// shard's resume point counts while it loads, and so do the items
    /// held for catch-up.
    pub(crate) fn published_through(&mut self) -> i64 {
        let mut through = self.fired_through.saturating_add(1);
        if let Some(next) = self.queue.next_due_at() {
            through = through.min(next);
        }
        if let Some(Reverse(ready)) = self.ready.peek() {
            through = through.min(ready.due.due_at_ms);
        }
        if let Some(resume) = self.owned.earliest_resume() {
            through = through.min(resume);
        }
        if let Some(held) = self.catchup.held_floor(&self.queue) {
            through = through.min(held);
        }
        through
    }

    /// Places a monitor read from its row: at its resume slot if its shard
    /// just moved here, else as usual (see `core::catchup`).
    pub(super) fn place(&mut self, timing: &Timing, now: i64) {
        match self.owned.resumed_due(timing) {
            Some(first) => {
                self.queue
                    .schedule(timing.id, timing.kind, timing.interval_secs(), first);
            }
            None => self.catchup.place(&mut self.queue, timing, now),
        }
    }
}
