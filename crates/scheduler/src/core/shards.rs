//! The shards this replica schedules, and where a newly taken shard resumes.
//!
//! The planner keeps only the monitors of its shards on the timeline. A
//! shard taken from another replica comes with the instant its last holder
//! had published everything before (`resume_from`, from the lease: the old
//! holder's watermark stays below anything it had not published: staged, in
//! flight, held for catch-up, or put back after a failed read). While the
//! walk that loads the shard runs, its checked monitors are placed at their
//! first slot at or after that instant (and after their last recorded
//! check) instead of the usual rule (the latest unrecorded slot): every slot
//! of the gap between the two holders is published, and none the old holder
//! had published. The gap's slots go out at once rather than through the
//! catch-up budget (its superseding would skip them); a gap longer than
//! `resume_max_gap_ms` (the whole deployment was down) falls back to the
//! usual rule and the budget.
//!
//! Heartbeat monitors follow the usual rule after a move: the latest missed
//! deadline is reported unless recorded.

use crate::queue::{DueQueue, Kind};
use crate::shards::{shard_of, ShardSet};
use crate::slots;
use crate::timing::Timing;
use std::collections::HashMap;

#[derive(Debug)]
pub(crate) struct Owned {
    set: ShardSet,
    /// Shards being loaded after a move, and where each resumes.
    resuming: HashMap<u16, i64>,
    resume_max_gap_ms: i64,
}

impl Owned {
    /// Every shard of one: what a planner without leases schedules.
    pub(crate) fn everything() -> Self {
        let mut set = ShardSet::empty(1);
        set.insert(0);
        Self {
            set,
            resuming: HashMap::new(),
            resume_max_gap_ms: 0,
        }
    }

    /// No shard of `count`: what a replica schedules until its first grant.
    pub(crate) fn nothing(count: u16) -> Self {
        Self {
            set: ShardSet::empty(count),
            resuming: HashMap::new(),
            resume_max_gap_ms: 0,
        }
    }

    pub(crate) fn with_max_gap(mut self, resume_max_gap_ms: i64) -> Self {
        self.resume_max_gap_ms = resume_max_gap_ms;
        self
    }

    pub(crate) fn owns(&self, monitor_id: i64) -> bool {
        self.set.owns(monitor_id)
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Takes `set` as the shards owned from `now`; `gained` are the ones
    /// to load, each with where it resumes: new ones, or owned ones loaded
    /// again (a grant that ran out and is valid again, see `core::grants`).
    /// Returns the monitors on `queue` that are no longer owned or are to be
    /// loaded again (for the caller to remove): a monitor left on the
    /// timeline would keep its next slot, and the walk would not place it
    /// at its resume slot.
    pub(crate) fn replace(
        &mut self,
        set: ShardSet,
        gained: &[(u16, i64)],
        now: i64,
        queue: &DueQueue,
    ) -> Vec<i64> {
        self.set = set;
        self.resuming.retain(|shard, _| self.set.contains(*shard));
        for (shard, resume_from) in gained {
            if now - resume_from <= self.resume_max_gap_ms && *resume_from <= now {
                self.resuming.insert(*shard, *resume_from);
            }
        }
        let mut loading = ShardSet::empty(self.set.count());
        for (shard, _) in gained {
            loading.insert(*shard);
        }
        queue
            .ids()
            .filter(|id| !self.set.owns(*id) || loading.owns(*id))
            .collect()
    }

    /// The walk that loaded the gained shards is complete.
    pub(crate) fn loaded(&mut self) {
        self.resuming.clear();
    }

    /// The earliest instant a shard being loaded resumes from: nothing
    /// before it may be reported as published yet.
    pub(crate) fn earliest_resume(&self) -> Option<i64> {
        self.resuming.values().copied().min()
    }

    /// When `timing`'s monitor resumes, if its shard is being loaded after a
    /// move; `None`: place it as usual.
    pub(crate) fn resumed_due(&self, timing: &Timing) -> Option<i64> {
        if timing.kind != Kind::Checked {
            return None;
        }
        let resume_from = *self.resuming.get(&shard_of(timing.id, self.set.count()))?;
        if timing.last_checked_ms.is_none() && timing.created_ms >= resume_from {
            // Created after the old holder's last publish: as usual.
            return None;
        }
        let mut from = resume_from.max(timing.created_ms);
        if let Some(checked) = timing.last_checked_ms {
            from = from.max(checked + 1);
        }
        Some(slots::slot_at_or_after(timing.id, timing.interval_ms, from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;
    const TEN_S: i64 = 10_000;

    fn checked(id: i64, last_checked: Option<i64>) -> Timing {
        Timing {
            id,
            kind: Kind::Checked,
            interval_ms: TEN_S,
            grace_ms: 1_000,
            created_ms: NOW - 3_600_000,
            last_checked_ms: last_checked,
            heartbeat: None,
            definition_version: 1,
        }
    }

    fn all_gained(resume_from: i64) -> Owned {
        let mut owned = Owned::everything().with_max_gap(30_000);
        let mut set = ShardSet::empty(1);
        set.insert(0);
        owned.replace(set, &[(0, resume_from)], NOW, &DueQueue::new());
        owned
    }

    #[test]
    fn a_moved_shard_resumes_at_the_first_unpublished_slot_of_the_gap() {
        let id = 5;
        let latest = slots::slot_at_or_before(id, TEN_S, NOW);
        // The old holder published up to 25 s ago; the recorder is behind.
        let owned = all_gained(NOW - 25_000);
        let t = checked(id, Some(NOW - 60_000));
        let first = owned.resumed_due(&t).unwrap();
        assert_eq!(first, slots::slot_at_or_after(id, TEN_S, NOW - 25_000));
        assert!(first <= latest - 2 * TEN_S, "two slots before the latest");
        // Recorded since: from after the recorded check.
        let t = checked(id, Some(latest - 2 * TEN_S + 1));
        assert_eq!(owned.resumed_due(&t), Some(latest - TEN_S));
        // Everything recorded: the next slot.
        let t = checked(id, Some(latest + 1));
        assert_eq!(owned.resumed_due(&t), Some(latest + TEN_S));
        // The old holder published the latest slot, unrecorded yet: not again.
        let owned = all_gained(latest + 1);
        let t = checked(id, Some(latest - TEN_S + 1));
        assert_eq!(owned.resumed_due(&t), Some(latest + TEN_S));
    }

    #[test]
    fn a_long_gap_or_a_new_monitor_follows_the_usual_rule() {
        let owned = all_gained(NOW - 31_000);
        assert_eq!(owned.resumed_due(&checked(5, Some(NOW - 60_000))), None);
        let owned = all_gained(NOW - 5_000);
        let new = Timing {
            created_ms: NOW - 1_000,
            ..checked(5, None)
        };
        assert_eq!(owned.resumed_due(&new), None);
        let mut loaded = all_gained(NOW - 25_000);
        loaded.loaded();
        assert_eq!(loaded.resumed_due(&checked(5, Some(NOW - 60_000))), None);
        assert_eq!(loaded.earliest_resume(), None);
    }

    #[test]
    fn lost_shards_leave_the_timeline() {
        let mut queue = DueQueue::new();
        for id in 0..100 {
            queue.schedule(id, Kind::Checked, 10, NOW);
        }
        let mut owned = Owned::everything();
        let mut half = ShardSet::empty(2);
        half.insert(1);
        let mut gone = owned.replace(half.clone(), &[], NOW, &queue);
        gone.sort_unstable();
        let expected: Vec<i64> = (0..100).filter(|id| !half.owns(*id)).collect();
        assert_eq!(gone, expected);
        assert!(!gone.is_empty() && gone.len() < 100);
    }
}
