//! Catch-up: checks that are overdue when their monitor comes onto the
//! timeline (the load at a start, a bulk import, a resume) go out at a
//! bounded rate derived from the schedule, each exactly once, under the id of
//! the slot it catches up, before its monitor's next slot (or replaced by
//! it); a new monitor and a handful of overdue ones still go at once.

use super::super::planner::Planner;
use super::super::{CatchupPolicy, Publication};
use super::world::*;
use crate::slots;
use std::collections::{HashMap, HashSet};
use uptime_contracts::DueCheck;

const FIVE_MIN: i64 = 300_000;
const MINUTE: i64 = 60_000;
const HOUR: i64 = 3_600_000;

/// A planner whose catch-up budget is `headroom` times the steady rate (the
/// sum of 1/interval over the timeline), at least `floor_per_sec`.
fn spreading(headroom: f64, floor_per_sec: f64) -> Planner {
    let policy = CatchupPolicy {
        headroom,
        min_per_sec: floor_per_sec,
    };
    Planner::new(LOOKAHEAD, policy)
}

/// A planner with the service's default settings.
fn by_default() -> Planner {
    let settings = crate::settings::ScheduleSettings::default();
    Planner::new(LOOKAHEAD, settings.catchup())
}

/// Every scheduled check: (published at, the check).
fn all_checks(world: &World) -> Vec<(i64, &DueCheck)> {
    world
        .published
        .iter()
        .filter_map(|(t, p)| match p {
            Publication::Check(due) => Some((*t, due)),
            _ => None,
        })
        .collect()
}

/// No check id went out twice.
fn assert_ids_unique(world: &World) {
    let mut ids = HashSet::new();
    for (_, p) in &world.published {
        let id = match p {
            Publication::Check(due) => due.check_id,
            Publication::MissedHeartbeat(result) => result.check_id,
        };
        assert!(ids.insert(id), "{id} published twice");
    }
}

/// By any instant, no more went out since `start` than the burst (one
/// second's worth) plus the rate times the time elapsed.
fn assert_bounded(mut sent: Vec<i64>, start: i64, rate_per_sec: f64) {
    sent.sort_unstable();
    let burst = rate_per_sec;
    for (i, t) in sent.iter().enumerate() {
        let allowed = burst + rate_per_sec * (t - start) as f64 / 1000.0;
        assert!(
            (i + 1) as f64 <= allowed + 1.0,
            "{} released {} ms after the start, at most {allowed:.0} allowed",
            i + 1,
            t - start
        );
    }
}

#[test]
fn a_hundred_thousand_overdue_monitors_are_released_at_a_bounded_rate_each_once() {
    let n: i64 = 100_000;
    // Never checked, created an hour ago (a bulk import, then a start):
    // every one is overdue, under its latest slot.
    let mut world = World::with((1..=n).map(|id| http(id, 300, NOW - HOUR)));
    let headroom = 2.0;
    let mut planner = loaded_by(spreading(headroom, 10.0), &mut world, NOW);
    // Steady: n checks per 300 s; the budget is twice that.
    let steady = n as f64 / 300.0;
    let rate = headroom * steady;
    let at_once = world.published.len();
    assert!(at_once as f64 <= rate + 1.0, "{at_once} published at once");

    world.run(&mut planner, NOW, NOW + FIVE_MIN);
    let checks = all_checks(&world);
    let mut caught_up: HashMap<i64, (i64, &DueCheck)> = HashMap::new();
    let mut next_slots: HashMap<i64, i64> = HashMap::new();
    for (sent, due) in &checks {
        if due_ms(due) <= NOW {
            let again = caught_up.insert(due.monitor_id, (*sent, due));
            assert!(
                again.is_none(),
                "monitor {} caught up twice",
                due.monitor_id
            );
        } else {
            next_slots.entry(due.monitor_id).or_insert(*sent);
        }
    }
    // The budget releases the monitors whose first slot is furthest away,
    // while the others reach their first slot: everyone is checked by the
    // time both meet, n / (budget + steady) seconds in, instead of up to an
    // interval later.
    let all_checked_by = NOW + (n as f64 / (rate + steady) * 1000.0) as i64 + 2_000;
    let mut superseded = 0;
    for id in 1..=n {
        let slot = slots::slot_at_or_before(id, FIVE_MIN, NOW);
        let next = slot + FIVE_MIN;
        let Some(&(sent, due)) = caught_up.get(&id) else {
            // Not released before its next slot: that slot is its first
            // check, on time, under its own id; never both.
            assert_eq!(next_slots.get(&id), Some(&next), "monitor {id}");
            assert!(
                next <= all_checked_by,
                "monitor {id} first checked at {next}"
            );
            superseded += 1;
            continue;
        };
        assert_eq!(due_ms(due), slot, "due_at is the slot it catches up");
        assert_eq!(due.check_id, slots::check_id(id, slot), "deterministic id");
        assert!(
            sent < next,
            "monitor {id} caught up at {sent}, after its next slot"
        );
        assert!(sent <= all_checked_by, "monitor {id} caught up at {sent}");
    }
    assert_eq!(
        (world.catchup_released, world.catchup_superseded),
        (caught_up.len() as u64, superseded),
        "the metrics count them"
    );
    assert_eq!(world.catchup_waiting, 0, "nothing left waiting");
    assert_bounded(caught_up.values().map(|(t, _)| *t).collect(), NOW, rate);
    assert_ids_unique(&world);
}

#[test]
fn one_new_monitor_among_a_steady_load_is_due_at_once() {
    let n: i64 = 10_000;
    let mut world = World::with((1..=n).map(|id| http(id, 300, NOW - HOUR)));
    for id in 1..=n {
        let slot = slots::slot_at_or_before(id, FIVE_MIN, NOW);
        world.row(id).timing.last_checked_at = Some(at(slot + 1));
    }
    let mut planner = loaded_by(spreading(1.0, 10.0), &mut world, NOW);
    assert!(world.published.is_empty(), "nothing was overdue");
    let now = NOW + MINUTE;
    world.run(&mut planner, NOW, now);
    assert!(all_checks(&world).len() > 1_000, "a steady load runs");

    let id = n + 1;
    world.rows.insert(id, http(id, 300, now - 5));
    planner.monitor_changed(id);
    planner.changes_arrived();
    world.round(&mut planner, now);
    let checks = world.checks(id);
    assert_eq!(checks.len(), 1, "due at once");
    assert_eq!(checks[0].0, now);
    assert_eq!(due_ms(&checks[0].1), now - 5);
    assert_eq!(checks[0].1.check_id, slots::check_id(id, now - 5));
}

/// `n` monitors at 300 s whose checks were recorded until `outage` ms
/// before `NOW`, and the slot each one missed since (those that missed one).
fn after_outage(n: i64, outage: i64) -> (World, HashMap<i64, i64>) {
    let mut world = World::with((1..=n).map(|id| http(id, 300, NOW - HOUR)));
    let mut missed = HashMap::new();
    for id in 1..=n {
        let latest = slots::slot_at_or_before(id, FIVE_MIN, NOW);
        let recorded = if latest > NOW - outage {
            missed.insert(id, latest);
            latest - FIVE_MIN
        } else {
            latest
        };
        world.row(id).timing.last_checked_at = Some(at(recorded + 1));
    }
    (world, missed)
}

#[test]
fn a_restart_after_a_short_outage_catches_up_the_few_missed_slots_at_once() {
    let n: i64 = 3_000;
    let outage = 5_000;
    let (mut world, missed) = after_outage(n, outage);
    assert!((10..200).contains(&missed.len()), "{}", missed.len());
    loaded_by(by_default(), &mut world, NOW);
    let checks = all_checks(&world);
    assert_eq!(checks.len(), missed.len(), "only the missed slots");
    for (sent, due) in checks {
        assert_eq!(sent, NOW, "at once");
        let slot = missed[&due.monitor_id];
        assert_eq!(due_ms(due), slot);
        assert_eq!(due.check_id, slots::check_id(due.monitor_id, slot));
    }
}

#[test]
fn a_backlog_too_big_for_the_budget_gives_way_to_the_next_slots() {
    let n: i64 = 3_000;
    let mut world = World::with((1..=n).map(|id| http(id, 60, NOW - HOUR)));
    // Steady: 50 checks/s; the budget a tenth of that.
    let mut planner = loaded_by(spreading(0.1, 1.0), &mut world, NOW);
    world.run(&mut planner, NOW, NOW + 2 * MINUTE);
    let checks = all_checks(&world);
    let mut caught_up = 0;
    for id in 1..=n {
        let slot = slots::slot_at_or_before(id, MINUTE, NOW);
        let next = slot + MINUTE;
        let of = |at: i64| {
            checks
                .iter()
                .filter(|(_, d)| d.monitor_id == id && due_ms(d) == at)
                .map(|(sent, _)| *sent)
                .collect::<Vec<i64>>()
        };
        let catch_up = of(slot);
        assert!(catch_up.len() <= 1, "monitor {id}: {catch_up:?}");
        if let Some(sent) = catch_up.first() {
            assert!(*sent < next, "monitor {id} caught up after its next slot");
            caught_up += 1;
        }
        assert_eq!(of(next), vec![next], "monitor {id}: the next slot on time");
    }
    assert!(caught_up > 0, "the budget was used");
    assert_eq!(
        (world.catchup_released, world.catchup_superseded),
        (caught_up as u64, (n - caught_up) as u64)
    );
    assert!(
        caught_up < n / 2,
        "{caught_up} caught up: no budget at all?"
    );
    assert_bounded(
        checks
            .iter()
            .filter(|(_, d)| due_ms(d) <= NOW)
            .map(|(t, _)| *t)
            .collect(),
        NOW,
        (0.1 * n as f64 / 60.0_f64).max(1.0),
    );
    assert_ids_unique(&world);
}

#[test]
fn missed_heartbeats_found_at_a_start_are_spread_and_a_late_ping_cancels_one() {
    let n: i64 = 2_000;
    // Silent for an hour (the whole stack was down): the latest period of
    // each ended 5 s ago and the next ends in 55 s.
    let created = NOW - HOUR - 5_000 - MINUTE;
    let latest = NOW - 5_000;
    let mut world = World::with((1..=n).map(|id| heartbeat(id, 60, 0, created)));
    let mut planner = loaded_by(spreading(2.0, 1.0), &mut world, NOW);
    let rate = 2.0 * n as f64 / 60.0;
    let at_once = world.published.len();
    assert!(at_once as f64 <= rate + 1.0, "{at_once} reported at once");
    // The job of the last monitor pings again before its turn comes.
    world.row(n).timing.last_heartbeat_at = Some(at(NOW + 1_000));
    world.run(&mut planner, NOW, NOW + 50_000);

    let mut sent = Vec::new();
    for id in 1..n {
        let missed = world.missed(id);
        assert_eq!(missed.len(), 1, "monitor {id}");
        let (at_ms, result) = &missed[0];
        assert_eq!(result.due_at, Some(at(latest)), "the period it reports");
        assert_eq!(result.check_id, slots::missed_heartbeat_id(id, latest));
        assert!(*at_ms < latest + MINUTE);
        sent.push(*at_ms);
    }
    assert!(world.missed(n).is_empty(), "its ping came first");
    assert_bounded(sent, NOW, rate);
    assert_ids_unique(&world);
}

#[test]
fn a_bulk_import_announced_by_change_events_is_released_at_a_bounded_rate() {
    // A steady load of 30,000 monitors at 300 s (100 checks/s)...
    let steady: i64 = 30_000;
    let mut world = World::with((1..=steady).map(|id| http(id, 300, NOW - HOUR)));
    for id in 1..=steady {
        let slot = slots::slot_at_or_before(id, FIVE_MIN, NOW);
        world.row(id).timing.last_checked_at = Some(at(slot + 1));
    }
    let mut planner = loaded_by(spreading(1.0, 10.0), &mut world, NOW);
    let start = NOW + MINUTE;
    world.run(&mut planner, NOW, start);
    // ...then 30,000 more created at once, announced 1,000 events at a time
    // (as the shell applies them).
    let imported = steady + 1..=2 * steady;
    for id in imported.clone() {
        world.rows.insert(id, http(id, 300, start - 1));
    }
    let ids: Vec<i64> = imported.clone().collect();
    for batch in ids.chunks(1_000) {
        for id in batch {
            planner.monitor_changed(*id);
        }
        planner.changes_arrived();
        world.round(&mut planner, start);
    }
    world.run(&mut planner, start, start + FIVE_MIN);

    // The budget: the steady rate of all 60,000 (200/s) times 1.0.
    let rate = 2.0 * steady as f64 / 300.0;
    let mut first: HashMap<i64, (i64, &DueCheck)> = HashMap::new();
    for (sent, due) in all_checks(&world) {
        if imported.contains(&due.monitor_id) {
            first.entry(due.monitor_id).or_insert((sent, due));
        }
    }
    let mut caught_up = Vec::new();
    for id in imported.clone() {
        let (sent, due) = first[&id];
        let next = slots::slot_after(id, FIVE_MIN, start - 1);
        if due_ms(due) == start - 1 {
            assert_eq!(due.check_id, slots::check_id(id, start - 1));
            assert!(sent < next, "monitor {id} caught up after its next slot");
            caught_up.push(sent);
        } else {
            assert_eq!((sent, due_ms(due)), (next, next), "monitor {id}");
        }
    }
    assert!(caught_up.len() as i64 > steady / 2, "{}", caught_up.len());
    assert_bounded(caught_up, start, rate);
    assert_ids_unique(&world);
}

#[test]
fn after_a_long_outage_the_longest_unchecked_go_first() {
    let n: i64 = 30_000;
    let outage = 150_000;
    let (mut world, missed) = after_outage(n, outage);
    // Steady 100 checks/s; the budget half that.
    let mut planner = loaded_by(spreading(0.5, 10.0), &mut world, NOW);
    world.run(&mut planner, NOW, NOW + FIVE_MIN);
    let caught_up: Vec<(i64, i64)> = all_checks(&world)
        .into_iter()
        .filter(|(_, d)| due_ms(d) <= NOW)
        .map(|(sent, d)| (sent, due_ms(d)))
        .collect();
    assert!(
        caught_up.len() > missed.len() * 9 / 10,
        "{}",
        caught_up.len()
    );
    for pair in caught_up.windows(2) {
        let ((sent_a, slot_a), (sent_b, slot_b)) = (pair[0], pair[1]);
        assert!(sent_a <= sent_b);
        assert!(slot_a <= slot_b, "the slot missed longest ago goes first");
    }
    assert_bounded(caught_up.iter().map(|(t, _)| *t).collect(), NOW, 50.0);
    assert_ids_unique(&world);
}
