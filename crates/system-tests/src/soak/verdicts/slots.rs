//! "Every scheduled slot checked exactly once", pure: each monitor's slots
//! (`scheduler::slots`: `offset(m) + k × interval`) from its creation to
//! the end of the run, sorted into those that must have exactly one
//! scheduled result, those that may have one (a boundary the pipeline
//! crosses at a moment nobody can pin to the millisecond: a pause, a
//! window, a deletion, the catch-up of the slot just before a monitor was
//! created or resumed; a new monitor's first check, due at its creation
//! instant) and those that must have none (paused, deleted),
//! against the scheduled results stored.

use scheduler::slots::{slot_at_or_after, slot_at_or_before};
use std::collections::HashMap;

/// How long before a boundary the pipeline may already act on it (a slot
/// read a lookahead early), and how long after it may still not have.
pub const BEFORE_MS: i64 = 2_000;
pub const AFTER_MS: i64 = 3_000;

/// What the driver knows of one scheduled monitor's life.
#[derive(Debug, Clone)]
pub struct MonitorLife {
    pub monitor_id: i64,
    pub interval_ms: i64,
    pub created_ms: i64,
    pub deleted_ms: Option<i64>,
    /// Spans it was not to be checked in: paused by its user, or inside a
    /// `pause` maintenance window.
    pub off: Vec<Off>,
}

/// A span `[from, to)` without checks. The pipeline may learn of its start
/// up to `late_ms` after `from` (a window's occurrence starts at `from`
/// and the recorder's sweep marks its monitors at its next round); `to`
/// is when it ended for the pipeline (the resume, the sweep that closed
/// the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Off {
    pub from: i64,
    pub to: i64,
    pub late_ms: i64,
}

/// What a slot must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Once,
    AtMostOnce,
    None,
}

impl MonitorLife {
    /// What the slot due at `due` (on this monitor's grid) must have.
    pub fn expect(&self, due: i64) -> Expect {
        if let Some(deleted) = self.deleted_ms {
            if due >= deleted + AFTER_MS {
                return Expect::None;
            }
            if due >= deleted - BEFORE_MS {
                return Expect::AtMostOnce;
            }
        }
        if due < self.created_ms {
            // The latest slot before creation may be caught up; earlier ones never.
            return if due >= self.created_ms - self.interval_ms {
                Expect::AtMostOnce
            } else {
                Expect::None
            };
        }
        let mut expect = Expect::Once;
        for off in &self.off {
            let starting = due >= off.from - BEFORE_MS && due < off.from + off.late_ms + AFTER_MS;
            let ending = due >= off.to - BEFORE_MS && due < off.to + AFTER_MS;
            // The latest slot of the span may be caught up at its end.
            let caught_up = due >= off.to - self.interval_ms && due < off.to;
            if starting || ending || caught_up {
                return Expect::AtMostOnce;
            }
            if due >= off.from && due < off.to {
                expect = Expect::None;
            }
        }
        expect
    }
}

/// One slot that went wrong, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotProblem {
    pub monitor_id: i64,
    pub due_ms: i64,
    pub what: &'static str,
    pub rows: usize,
}

/// The figures, and the first problems found.
#[derive(Debug, Default, Clone)]
pub struct SlotVerdict {
    /// Slots that had to be checked once.
    pub due: usize,
    /// Of those, checked (at least once).
    pub checked: usize,
    /// Rows beyond the first of any slot.
    pub doubled: usize,
    /// Slots due that have no result.
    pub missed: usize,
    /// Results of slots that were to have none (paused, deleted).
    pub unwanted: usize,
    /// Scheduled results due at no slot of their monitor.
    pub off_schedule: usize,
    /// Boundary slots that were checked (may have been, were).
    pub boundary_checked: usize,
    pub problems: Vec<SlotProblem>,
}

impl SlotVerdict {
    pub fn clean(&self) -> bool {
        self.missed == 0 && self.doubled == 0 && self.unwanted == 0 && self.off_schedule == 0
    }
}

/// Problems kept for the report at most.
const MAX_PROBLEMS: usize = 40;

/// Judges `lives` up to `until_ms` (slots due before it) against
/// `results`: the scheduled results' (monitor, due ms), one per row.
/// Results of monitors not in `lives`, or due at or after `until_ms`, are
/// not looked at.
pub fn judge(lives: &[MonitorLife], results: &[(i64, i64)], until_ms: i64) -> SlotVerdict {
    let by_id: HashMap<i64, &MonitorLife> = lives.iter().map(|l| (l.monitor_id, l)).collect();
    let mut rows: HashMap<(i64, i64), usize> = HashMap::new();
    let mut created: HashMap<i64, usize> = HashMap::new();
    let mut verdict = SlotVerdict::default();
    let problem = |verdict: &mut SlotVerdict, p: SlotProblem| {
        if verdict.problems.len() < MAX_PROBLEMS {
            verdict.problems.push(p);
        }
    };
    for &(monitor_id, due) in results {
        let Some(life) = by_id.get(&monitor_id) else {
            continue;
        };
        if due >= until_ms {
            continue;
        }
        if due == life.created_ms {
            // A new monitor's first check is due at its creation instant
            // (`scheduler::timing`), unless its first slot came first.
            *created.entry(monitor_id).or_default() += 1;
            continue;
        }
        if slot_at_or_after(monitor_id, life.interval_ms, due) != due {
            verdict.off_schedule += 1;
            problem(
                &mut verdict,
                SlotProblem {
                    monitor_id,
                    due_ms: due,
                    what: "off schedule",
                    rows: 1,
                },
            );
            continue;
        }
        *rows.entry((monitor_id, due)).or_default() += 1;
    }
    for life in lives {
        let first = slot_at_or_before(life.monitor_id, life.interval_ms, life.created_ms - 1);
        let mut due = first;
        while due < until_ms {
            let n = rows.remove(&(life.monitor_id, due)).unwrap_or(0);
            let p = |what, rows| SlotProblem {
                monitor_id: life.monitor_id,
                due_ms: due,
                what,
                rows,
            };
            match life.expect(due) {
                Expect::Once => {
                    verdict.due += 1;
                    if n == 0 {
                        verdict.missed += 1;
                        problem(&mut verdict, p("missed", 0));
                    } else {
                        verdict.checked += 1;
                    }
                }
                Expect::AtMostOnce => verdict.boundary_checked += n.min(1),
                Expect::None if n > 0 => {
                    verdict.unwanted += n;
                    problem(&mut verdict, p("checked while paused or deleted", n));
                }
                Expect::None => {}
            }
            if n > 1 {
                verdict.doubled += n - 1;
                problem(&mut verdict, p("doubled", n));
            }
            due += life.interval_ms;
        }
    }
    for (monitor_id, n) in created {
        verdict.boundary_checked += 1;
        if n > 1 {
            verdict.doubled += n - 1;
            let due_ms = by_id[&monitor_id].created_ms;
            problem(
                &mut verdict,
                SlotProblem {
                    monitor_id,
                    due_ms,
                    what: "first check doubled",
                    rows: n,
                },
            );
        }
    }
    // Rows left are of slots before the latest one preceding creation.
    for ((monitor_id, due), n) in rows {
        verdict.unwanted += n;
        problem(
            &mut verdict,
            SlotProblem {
                monitor_id,
                due_ms: due,
                what: "before creation",
                rows: n,
            },
        );
    }
    verdict
}

#[cfg(test)]
mod tests {
    use super::*;

    const I: i64 = 10_000;

    fn life(created_ms: i64) -> MonitorLife {
        MonitorLife {
            monitor_id: 7,
            interval_ms: I,
            created_ms,
            deleted_ms: None,
            off: vec![],
        }
    }

    fn slots(life: &MonitorLife, from: i64, until: i64) -> Vec<i64> {
        let mut due = slot_at_or_after(life.monitor_id, I, from);
        let mut all = Vec::new();
        while due < until {
            all.push(due);
            due += I;
        }
        all
    }

    fn rows(life: &MonitorLife, dues: &[i64]) -> Vec<(i64, i64)> {
        dues.iter().map(|d| (life.monitor_id, *d)).collect()
    }

    #[test]
    fn every_slot_once_is_clean() {
        let l = life(1_000_000);
        let dues = slots(&l, 1_000_000, 1_100_000);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert_eq!((v.due, v.checked, v.missed, v.doubled), (10, 10, 0, 0));
        assert!(v.clean(), "{v:?}");
    }

    #[test]
    fn a_gap_is_missed_and_a_repeat_doubled() {
        let l = life(1_000_000);
        let mut dues = slots(&l, 1_000_000, 1_100_000);
        let gone = dues.remove(4);
        dues.push(dues[0]);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert_eq!((v.due, v.checked, v.missed, v.doubled), (10, 9, 1, 1));
        assert!(!v.clean());
        assert!(v
            .problems
            .iter()
            .any(|p| p.what == "missed" && p.due_ms == gone));
    }

    #[test]
    fn a_result_between_slots_is_off_schedule() {
        let l = life(1_000_000);
        let mut dues = slots(&l, 1_000_000, 1_100_000);
        dues.push(dues[2] + 1);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert_eq!(v.off_schedule, 1);
        assert!(!v.clean());
    }

    #[test]
    fn the_slot_before_creation_may_be_caught_up_but_no_earlier_one() {
        let l = life(1_000_000);
        let before = slot_at_or_before(7, I, 999_999);
        let mut dues = slots(&l, 1_000_000, 1_100_000);
        dues.push(before);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert!(v.clean(), "{v:?}");
        assert_eq!(v.boundary_checked, 1);
        dues.push(before - I);
        assert_eq!(
            judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000).unwanted,
            1
        );
    }

    #[test]
    fn a_first_check_at_the_creation_instant_is_on_schedule_once() {
        let l = life(1_000_123);
        let mut dues = slots(&l, 1_000_123, 1_100_000);
        dues.push(1_000_123);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert!(v.clean(), "{v:?}");
        dues.push(1_000_123);
        assert_eq!(
            judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000).doubled,
            1
        );
    }

    #[test]
    fn nothing_is_due_while_paused_and_a_check_then_is_unwanted() {
        let mut l = life(1_000_000);
        l.off = vec![Off {
            from: 1_030_000,
            to: 1_070_000,
            late_ms: 0,
        }];
        let all = slots(&l, 1_000_000, 1_100_000);
        let outside: Vec<i64> = all
            .iter()
            .copied()
            .filter(|d| l.expect(*d) == Expect::Once)
            .collect();
        let v = judge(std::slice::from_ref(&l), &rows(&l, &outside), 1_100_000);
        assert!(v.clean(), "{v:?}");
        assert!(v.due < 10 && v.due >= 5, "{v:?}");
        let inside = all
            .iter()
            .copied()
            .find(|d| l.expect(*d) == Expect::None)
            .unwrap();
        let mut with = outside.clone();
        with.push(inside);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &with), 1_100_000);
        assert_eq!(v.unwanted, 1);
        assert!(!v.clean());
    }

    #[test]
    fn after_deletion_nothing_more() {
        let mut l = life(1_000_000);
        l.deleted_ms = Some(1_050_000);
        let all = slots(&l, 1_000_000, 1_100_000);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &all), 1_100_000);
        assert!(v.unwanted >= 4, "{v:?}");
        let kept: Vec<i64> = all
            .into_iter()
            .filter(|d| *d < 1_050_000 - BEFORE_MS)
            .collect();
        assert!(judge(std::slice::from_ref(&l), &rows(&l, &kept), 1_100_000).clean());
    }

    #[test]
    fn slots_from_the_end_on_are_not_looked_at() {
        let l = life(1_000_000);
        let dues = slots(&l, 1_000_000, 1_200_000);
        let v = judge(std::slice::from_ref(&l), &rows(&l, &dues), 1_100_000);
        assert!(v.clean());
        assert_eq!(v.due, 10);
    }
}
