//! Catch-up: checks that are already overdue when their monitor comes onto
//! the timeline go out at a bounded rate instead of all at once.
//!
//! A monitor is overdue when it is placed (by the load at the start of
//! leadership, a change event, a resync) with a due time at or before now:
//! never checked, or its latest slot passed unrecorded (see
//! [`crate::timing`]), or a heartbeat period ended without a ping while no
//! scheduler ran. One new monitor or a handful after a short restart is the
//! common case and goes at once; a bulk import of a million monitors, or a
//! restart after minutes down, would put up to a million checks on the
//! checkers, the recorder and the notifier in the same instant, and the whole
//! pipeline would then run minutes late.
//!
//! So such an item is *held* here instead of being put on the timeline, and a
//! token bucket releases held items back onto the timeline:
//!
//! - **rate** = max(`catchup_min_per_sec`, `catchup_headroom` × steady),
//!   where steady is the schedule's own rate: the sum over the monitors on
//!   the timeline of 1/interval (checks per second in steady state). The
//!   catch-up is extra load on top of the regular slots, which are never
//!   held, so the offered rate stays within (1 + headroom) × steady. The
//!   floor lets a small installation catch up at once.
//! - **burst** = one second's worth of the rate, so a new monitor (the bucket
//!   is full when nothing waits) or a handful of overdue ones go at once.
//! - **order**: the monitor unchecked the longest first (since its last
//!   recorded check, else its creation), so after an outage the slot missed
//!   longest ago goes first; among equals (a bulk import created in one
//!   go), the one whose next slot is furthest away, since a catch-up is
//!   worth the time it saves before that slot. An import of n monitors is
//!   then all checked within n / (budget + steady) seconds, half an interval
//!   at headroom 1, where earliest-next-slot-first would catch each up a
//!   moment before its first slot: twice the checks for nothing.
//! - **never more than one interval**: an item still held when its
//!   monitor's next slot is a lookahead away is *superseded*: that next slot
//!   is checked instead, on time, under its own id, and the caught-up slot is
//!   not checked (counted in `scheduler_catchup_superseded_total`, never
//!   silent). Either way the monitor is checked once, and no slot twice.
//!   With headroom h an outage of up to h intervals (monitors sharing an
//!   interval) is caught up in full before the next slots.
//! - A released item keeps the slot it catches up: same `check_id` (a
//!   restart republishes the same id whenever it releases it) and the slot
//!   as `due_at`, so lateness metrics show the catch-up delay, and the
//!   recorder files the result under the same `slot_at` whoever releases it.
//! - Releases come in batches at most every [`RELEASE_TICK_MS`] (one
//!   configuration read per batch, not per check), and not before the load
//!   at the start of leadership is complete, so the rate is known and the
//!   order holds across all monitors.
//!
//! Missed heartbeats found at a start are held the same way: a whole-stack
//! outage leaves every heartbeat monitor silent, and reporting them all at
//! once floods the recorder and the notifier; spread, each is re-read when
//! released, so a job that has pinged again since is not reported at all.

use crate::queue::{Due, DueQueue, Kind};
use crate::slots;
use crate::timing::Timing;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Held items are released at most this often, in one batch.
pub(crate) const RELEASE_TICK_MS: i64 = 100;
/// The bucket holds this long's worth of the rate.
const BURST_MS: f64 = 1_000.0;

/// How fast overdue work may go out (`scheduler.catchup_*` settings).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct CatchupPolicy {
    /// Catch-up rate as a multiple of the steady rate.
    pub headroom: f64,
    /// The rate (checks per second) never goes below this.
    pub min_per_sec: f64,
}

impl CatchupPolicy {
    /// Checks per second released, given the steady rate. At least one a
    /// second, so that a backlog always moves.
    pub(crate) fn rate_per_sec(&self, steady_per_sec: f64) -> f64 {
        (self.headroom.max(0.0) * steady_per_sec)
            .max(self.min_per_sec)
            .max(1.0)
    }
}

/// A held item, in the order it is released: the monitor unchecked the
/// longest first, then the one whose next slot is furthest away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Held {
    /// Its last recorded check, else its creation (a heartbeat: the start of
    /// the period that was missed).
    since_ms: i64,
    next_due_ms: Reverse<i64>,
    due: Due,
}

/// What happened since the last report, for the metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Tally {
    /// Items held now.
    pub waiting: usize,
    pub released: u64,
    pub superseded: u64,
}

#[derive(Debug)]
pub(crate) struct Catchup {
    policy: CatchupPolicy,
    /// In release order.
    held: BinaryHeap<Reverse<Held>>,
    /// The same items by next slot, for superseding. An item leaves by one
    /// way; the queue knows which are still held ([`DueQueue::unhold`]).
    deadlines: BinaryHeap<Reverse<(i64, Due)>>,
    /// `None` until the first release: the bucket starts full, at the rate
    /// known then.
    tokens: Option<f64>,
    refilled_at: i64,
    last_release_at: i64,
    released: u64,
    superseded: u64,
    reported_waiting: usize,
    /// No held item is due earlier than this (a bound, kept until nothing
    /// is held): how far the shard leases may say the slots are published.
    held_floor: Option<i64>,
}

impl Catchup {
    pub(crate) fn new(policy: CatchupPolicy) -> Self {
        Self {
            policy,
            held: BinaryHeap::new(),
            deadlines: BinaryHeap::new(),
            tokens: None,
            refilled_at: 0,
            last_release_at: i64::MIN / 2,
            released: 0,
            superseded: 0,
            reported_waiting: 0,
            held_floor: None,
        }
    }

    /// Puts a monitor read from its row on `queue`'s timeline or, when it
    /// is overdue already, holds its item here until the budget lets it go,
    /// at the latest its next slot.
    pub(crate) fn place(&mut self, queue: &mut DueQueue, timing: &Timing, now: i64) {
        let (id, kind, interval_secs) = (timing.id, timing.kind, timing.interval_secs());
        let due_at = timing.first_due(now);
        if due_at > now {
            queue.schedule(id, kind, interval_secs, due_at);
            return;
        }
        let next_due_ms = match kind {
            Kind::Checked => slots::slot_after(id, timing.interval_ms, due_at),
            Kind::Heartbeat => timing.heartbeat_deadline_after(due_at),
        };
        let since_ms = match kind {
            Kind::Checked => timing.last_checked_ms.unwrap_or(timing.created_ms),
            // One period back (exact for an interval; for a schedule, the
            // gap to the next run, which orders the held items as well).
            Kind::Heartbeat => due_at.saturating_sub(next_due_ms.saturating_sub(due_at)),
        };
        let due = queue.schedule_held(id, kind, interval_secs, due_at);
        self.held_floor = Some(self.held_floor.map_or(due_at, |floor| floor.min(due_at)));
        self.deadlines.push(Reverse((next_due_ms, due)));
        self.held.push(Reverse(Held {
            since_ms,
            next_due_ms: Reverse(next_due_ms),
            due,
        }));
    }

    /// Puts held items back on `queue`: those whose next slot is within the
    /// lookahead (and a tick) as that slot (superseded); then, unless
    /// `may_release` is false (the load at the start is still running), as
    /// many as the budget allows at the slot they catch up (due at once).
    pub(crate) fn release(
        &mut self,
        now: i64,
        lookahead_ms: i64,
        may_release: bool,
        queue: &mut DueQueue,
    ) {
        let rate = self.policy.rate_per_sec(queue.steady_rate_per_sec());
        self.refill(now, rate);
        // A tick's worth at a time, so that superseding wakes the planner
        // once per tick rather than once per item.
        let supersede_until = now + lookahead_ms + RELEASE_TICK_MS;
        while let Some(Reverse((next_due_ms, due))) = self.deadlines.peek().copied() {
            if next_due_ms > supersede_until {
                break;
            }
            self.deadlines.pop();
            if queue.unhold(&due) {
                queue.requeue(Due {
                    due_at_ms: next_due_ms,
                    ..due
                });
                self.superseded += 1;
            }
        }
        if queue.held() == 0 {
            // Only entries that left the other way (or went stale) remain.
            self.held.clear();
            self.deadlines.clear();
            self.held_floor = None;
        }
        if !may_release || now - self.last_release_at < RELEASE_TICK_MS {
            return;
        }
        let mut tokens = self.tokens.unwrap_or(rate * BURST_MS / 1000.0);
        let before = self.released;
        while tokens >= 1.0 {
            let Some(Reverse(held)) = self.held.pop() else {
                break;
            };
            // An edited, removed or superseded item costs no token.
            if queue.unhold(&held.due) {
                queue.requeue(held.due);
                tokens -= 1.0;
                self.released += 1;
            }
        }
        if self.released > before {
            self.last_release_at = now;
        }
        self.tokens = Some(tokens);
    }

    fn refill(&mut self, now: i64, rate: f64) {
        let elapsed = (now - self.refilled_at).max(0) as f64;
        self.refilled_at = now;
        if let Some(tokens) = self.tokens.as_mut() {
            *tokens = (*tokens + rate * elapsed / 1000.0).min(rate * BURST_MS / 1000.0);
        }
    }

    /// When [`Catchup::release`] has something to do next, if anything is held.
    pub(crate) fn next_action_at(
        &self,
        now: i64,
        lookahead_ms: i64,
        may_release: bool,
        queue: &DueQueue,
    ) -> Option<i64> {
        if queue.held() == 0 {
            return None;
        }
        let Reverse((next_due_ms, _)) = self.deadlines.peek()?;
        let supersede_at = next_due_ms - lookahead_ms;
        if !may_release {
            return Some(supersede_at);
        }
        let rate = self.policy.rate_per_sec(queue.steady_rate_per_sec());
        let tokens_at = match self.tokens {
            Some(tokens) if tokens < 1.0 => {
                let elapsed = (now - self.refilled_at).max(0) as f64;
                let missing = 1.0 - tokens - rate * elapsed / 1000.0;
                now + (missing.max(0.0) * 1000.0 / rate).ceil() as i64
            }
            _ => now,
        };
        let release_at = tokens_at.max(self.last_release_at + RELEASE_TICK_MS);
        Some(supersede_at.min(release_at))
    }

    /// No item still held is due before this.
    pub(crate) fn held_floor(&self, queue: &DueQueue) -> Option<i64> {
        self.held_floor.filter(|_| queue.held() > 0)
    }

    /// What changed since the last call, if anything.
    pub(crate) fn tally(&mut self, queue: &DueQueue) -> Option<Tally> {
        let waiting = queue.held();
        if self.released == 0 && self.superseded == 0 && waiting == self.reported_waiting {
            return None;
        }
        self.reported_waiting = waiting;
        Some(Tally {
            waiting,
            released: std::mem::take(&mut self.released),
            superseded: std::mem::take(&mut self.superseded),
        })
    }
}
