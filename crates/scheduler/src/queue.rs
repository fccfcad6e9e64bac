//! The timeline: a min-heap of `(due_at, monitor_id, generation)` plus one
//! small entry per monitor. Nothing else about a monitor is kept in memory;
//! its configuration is read shortly before it is due.
//!
//! Heap items are never searched for or removed in place. A change to a
//! monitor gives it a new generation and pushes a new item; the old item
//! stays in the heap and is discarded when it reaches the top (lazy
//! invalidation). Each live monitor therefore has exactly one current item,
//! either in the heap, staged for publication by the engine, or held for
//! catch-up (`core::catchup`).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// How a monitor is served.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Checked monitors: a `DueCheck` per region and slot, for the checkers.
    Checked,
    /// heartbeat monitors: a failed result per missed deadline.
    Heartbeat,
}

impl Kind {
    /// How a monitor of this type is served.
    pub fn of(kind: uptime_contracts::MonitorKind) -> Self {
        match kind {
            uptime_contracts::MonitorKind::Heartbeat => Kind::Heartbeat,
            uptime_contracts::MonitorKind::Http
            | uptime_contracts::MonitorKind::Keyword
            | uptime_contracts::MonitorKind::Tcp
            | uptime_contracts::MonitorKind::Tls
            | uptime_contracts::MonitorKind::Dns
            | uptime_contracts::MonitorKind::Icmp => Kind::Checked,
        }
    }
}

/// One point on the timeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Due {
    pub due_at_ms: i64,
    pub monitor_id: i64,
    pub generation: u32,
}

/// What the scheduler remembers about a monitor between its checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub interval_secs: u32,
    pub generation: u32,
    pub kind: Kind,
    /// Its current item is held for catch-up, off the heap.
    pub held: bool,
}

#[derive(Debug, Default)]
pub struct DueQueue {
    heap: BinaryHeap<Reverse<Due>>,
    entries: HashMap<i64, Entry>,
    /// Global, so a monitor removed and added again never reuses a generation
    /// an old heap item still carries.
    next_generation: u32,
    /// The steady rate of the monitors here (the sum of 1/interval), in
    /// checks per 10^9 seconds: integers, so adding and removing never drift.
    rate_nanos: u64,
    /// Monitors whose current item is held for catch-up.
    held: usize,
}

impl DueQueue {
    pub fn new() -> Self {
        Self::default()
    }

    /// Places `monitor_id` at `due_at_ms`, replacing whatever was scheduled
    /// for it. Returns the new generation.
    pub fn schedule(
        &mut self,
        monitor_id: i64,
        kind: Kind,
        interval_secs: u32,
        due_at_ms: i64,
    ) -> u32 {
        let due = self.place(monitor_id, kind, interval_secs, due_at_ms, false);
        self.heap.push(Reverse(due));
        self.compact_if_bloated();
        due.generation
    }

    /// Like [`DueQueue::schedule`], but the new current item is *held*:
    /// handed to the caller instead of being put in the heap, until
    /// [`DueQueue::unhold`] and [`DueQueue::requeue`] bring it back.
    pub fn schedule_held(
        &mut self,
        monitor_id: i64,
        kind: Kind,
        interval_secs: u32,
        due_at_ms: i64,
    ) -> Due {
        self.place(monitor_id, kind, interval_secs, due_at_ms, true)
    }

    /// Whether `due` is its monitor's current item and held; if so, it is
    /// no longer held (put it back with [`DueQueue::requeue`]).
    pub fn unhold(&mut self, due: &Due) -> bool {
        match self.entries.get_mut(&due.monitor_id) {
            Some(e) if e.generation == due.generation && e.held => {
                e.held = false;
                self.held -= 1;
                true
            }
            _ => false,
        }
    }

    /// Monitors whose current item is held.
    pub fn held(&self) -> usize {
        self.held
    }

    fn place(
        &mut self,
        monitor_id: i64,
        kind: Kind,
        interval_secs: u32,
        due_at_ms: i64,
        held: bool,
    ) -> Due {
        let generation = self.next_generation;
        self.next_generation = self.next_generation.wrapping_add(1);
        let old = self.entries.insert(
            monitor_id,
            Entry {
                interval_secs,
                generation,
                kind,
                held,
            },
        );
        if let Some(old) = old {
            self.rate_nanos -= rate_nanos(old.interval_secs);
            self.held -= usize::from(old.held);
        }
        self.rate_nanos += rate_nanos(interval_secs);
        self.held += usize::from(held);
        Due {
            due_at_ms,
            monitor_id,
            generation,
        }
    }

    /// Puts the current item of a monitor back on the timeline at a new time
    /// (its next slot after publishing, a moved heartbeat deadline, or an
    /// item whose configuration could not be loaded). Ignored if the monitor
    /// changed since (`due.generation` is no longer current).
    pub fn requeue(&mut self, due: Due) -> bool {
        if !self.is_current(&due) {
            return false;
        }
        self.heap.push(Reverse(due));
        true
    }

    /// Forgets a monitor; its items in the heap become stale.
    pub fn remove(&mut self, monitor_id: i64) -> bool {
        match self.entries.remove(&monitor_id) {
            Some(old) => {
                self.rate_nanos -= rate_nanos(old.interval_secs);
                self.held -= usize::from(old.held);
                true
            }
            None => false,
        }
    }

    /// Checks (or heartbeat periods) per second the monitors here come due
    /// at in steady state: the sum of 1/interval.
    pub fn steady_rate_per_sec(&self) -> f64 {
        self.rate_nanos as f64 / 1e9
    }

    pub fn entry(&self, monitor_id: i64) -> Option<&Entry> {
        self.entries.get(&monitor_id)
    }

    pub fn is_current(&self, due: &Due) -> bool {
        self.entries
            .get(&due.monitor_id)
            .is_some_and(|e| e.generation == due.generation)
    }

    /// The due time of the earliest current item.
    pub fn next_due_at(&mut self) -> Option<i64> {
        self.drop_stale_top();
        self.heap.peek().map(|Reverse(d)| d.due_at_ms)
    }

    /// Takes the earliest current item if it is due at or before `limit_ms`.
    pub fn pop_due_until(&mut self, limit_ms: i64) -> Option<Due> {
        self.drop_stale_top();
        match self.heap.peek() {
            Some(Reverse(d)) if d.due_at_ms <= limit_ms => self.heap.pop().map(|Reverse(d)| d),
            _ => None,
        }
    }

    /// Monitors on the timeline.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Items in the heap, stale ones included.
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    pub fn ids(&self) -> impl Iterator<Item = i64> + '_ {
        self.entries.keys().copied()
    }

    /// Heap bytes allocated per monitor: the heap's and the map's allocations
    /// (capacity, not length, so growth slack counts) divided by the number
    /// of monitors. The map's cost is a bucket per slot plus hashbrown's one
    /// control byte. Staged items (at most a lookahead's worth) are not counted.
    pub fn approx_bytes_per_monitor(&self) -> usize {
        let heap = self.heap.capacity() * std::mem::size_of::<Reverse<Due>>();
        let map = self.entries.capacity() * (std::mem::size_of::<(i64, Entry)>() + 1);
        (heap + map) / self.entries.len().max(1)
    }

    fn drop_stale_top(&mut self) {
        while let Some(Reverse(top)) = self.heap.peek() {
            if self.is_current(top) {
                return;
            }
            self.heap.pop();
        }
    }

    /// Rebuilds the heap without stale items when they outnumber live ones
    /// (e.g. after many changes to monitors with long intervals).
    fn compact_if_bloated(&mut self) {
        if self.heap.len() > 2 * self.entries.len() + 1024 {
            let heap = std::mem::take(&mut self.heap);
            self.heap = heap
                .into_vec()
                .into_iter()
                .filter(|Reverse(d)| self.is_current(d))
                .collect();
        }
    }
}

fn rate_nanos(interval_secs: u32) -> u64 {
    1_000_000_000 / u64::from(interval_secs.max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_due_order_only_what_is_due() {
        let mut q = DueQueue::new();
        q.schedule(1, Kind::Checked, 60, 300);
        q.schedule(2, Kind::Checked, 60, 100);
        q.schedule(3, Kind::Heartbeat, 60, 200);
        assert_eq!(q.next_due_at(), Some(100));
        assert_eq!(q.pop_due_until(250).map(|d| d.monitor_id), Some(2));
        assert_eq!(q.pop_due_until(250).map(|d| d.monitor_id), Some(3));
        assert_eq!(q.pop_due_until(250), None, "300 is not due yet");
        assert_eq!(q.len(), 3, "popping does not forget monitors");
    }

    #[test]
    fn rescheduling_invalidates_the_old_item() {
        let mut q = DueQueue::new();
        let old = q.schedule(1, Kind::Checked, 60, 100);
        let new = q.schedule(1, Kind::Checked, 30, 500);
        assert_ne!(old, new);
        assert_eq!(q.heap_len(), 2, "the old item stays until it surfaces");
        let due = q.pop_due_until(1_000).unwrap();
        assert_eq!((due.due_at_ms, due.generation), (500, new));
        assert_eq!(q.pop_due_until(1_000), None);
        assert_eq!(q.entry(1).unwrap().interval_secs, 30);
    }

    #[test]
    fn removed_monitors_never_surface_even_when_added_again() {
        let mut q = DueQueue::new();
        let first = q.schedule(1, Kind::Checked, 60, 100);
        q.remove(1);
        assert_eq!(q.next_due_at(), None);
        q.schedule(1, Kind::Checked, 60, 200);
        // The stale item of the first life must not come back to life.
        assert!(!q.requeue(Due {
            due_at_ms: 150,
            monitor_id: 1,
            generation: first
        }));
        let due = q.pop_due_until(1_000).unwrap();
        assert_eq!(due.due_at_ms, 200);
        assert_eq!(q.pop_due_until(1_000), None);
    }

    #[test]
    fn requeue_keeps_one_item_per_monitor() {
        let mut q = DueQueue::new();
        q.schedule(7, Kind::Checked, 10, 100);
        let due = q.pop_due_until(100).unwrap();
        assert!(q.requeue(Due {
            due_at_ms: 10_100,
            ..due
        }));
        assert_eq!(q.heap_len(), 1);
        assert_eq!(q.next_due_at(), Some(10_100));
    }

    #[test]
    fn the_steady_rate_follows_the_monitors() {
        let mut q = DueQueue::new();
        q.schedule(1, Kind::Checked, 10, 100);
        q.schedule(2, Kind::Heartbeat, 60, 100);
        q.schedule_held(3, Kind::Checked, 300, 100);
        let rate = |q: &DueQueue| (q.steady_rate_per_sec() * 1e6).round() / 1e6;
        assert_eq!(rate(&q), 0.12);
        q.schedule(1, Kind::Checked, 20, 100); // 0.1/s becomes 0.05/s
        q.remove(2);
        assert_eq!(rate(&q), 0.053333);
        q.remove(1);
        q.remove(3);
        assert!(!q.remove(3));
        assert_eq!(q.steady_rate_per_sec(), 0.0);
    }

    #[test]
    fn held_items_are_counted_until_unheld_replaced_or_removed() {
        let mut q = DueQueue::new();
        let a = q.schedule_held(1, Kind::Checked, 60, 100);
        let b = q.schedule_held(2, Kind::Checked, 60, 100);
        q.schedule_held(3, Kind::Checked, 60, 100);
        assert_eq!((q.held(), q.heap_len()), (3, 0), "off the heap");
        assert!(q.unhold(&a));
        assert!(!q.unhold(&a), "once");
        assert!(q.requeue(a));
        q.schedule(2, Kind::Checked, 60, 200);
        assert!(!q.unhold(&b), "replaced");
        q.remove(3);
        assert_eq!(q.held(), 0);
        let again = q.schedule_held(1, Kind::Checked, 60, 300);
        q.schedule_held(1, Kind::Checked, 60, 400);
        assert_eq!(q.held(), 1, "one item per monitor");
        assert!(!q.unhold(&again));
    }

    #[test]
    fn stale_items_are_compacted_away() {
        let mut q = DueQueue::new();
        for round in 0..5_000 {
            q.schedule(1, Kind::Checked, 60, 1_000_000 + round);
        }
        assert!(q.heap_len() <= 2 * q.len() + 1025, "{}", q.heap_len());
    }

    #[test]
    fn memory_per_monitor_stays_small() {
        let mut q = DueQueue::new();
        for id in 0..100_000 {
            q.schedule(id, Kind::Checked, 300, id * 3);
        }
        let bytes = q.approx_bytes_per_monitor();
        assert!(bytes < 128, "{bytes} bytes per monitor");
        assert_eq!(std::mem::size_of::<Entry>(), 12);
        assert_eq!(std::mem::size_of::<Due>(), 24);
    }
}
