//! A failed database read: retried after the pause, and the work it was
//! for still goes out (a check at its slot, a heartbeat's miss, a change).

use super::super::planner::DB_RETRY_MS;
use super::super::Read;
use super::assert_missed;
use super::world::*;
use crate::slots;

#[test]
fn a_failed_read_is_retried_after_a_pause_and_the_check_still_goes_out() {
    let mut world = World::with([http(1, 10, NOW - 100 * TEN_S)]);
    world.row(1).timing.last_checked_at = Some(at(NOW));
    let mut planner = loaded(&mut world, NOW);
    let slot = slots::slot_after(1, TEN_S, NOW);
    world.reads.clear();
    world.failing = 1;
    let staged_at = world.run(&mut planner, NOW, slot - LOOKAHEAD);
    assert_eq!(world.reads.len(), 1, "the configuration read failed");
    assert_eq!(world.reads[0], (staged_at, Read::CheckConfigs(vec![1])));
    // Back on the timeline, but no read before the pause is over.
    let wake = world.round(&mut planner, staged_at + 1);
    assert_eq!(wake, staged_at + DB_RETRY_MS);
    assert_eq!(world.reads.len(), 1);
    world.run(&mut planner, wake, slot);
    assert_eq!(world.reads.len(), 2, "{:?}", world.reads);
    assert_eq!(world.reads[1].0, staged_at + DB_RETRY_MS);
    let checks = world.checks(1);
    assert_eq!((checks.len(), due_ms(&checks[0].1)), (1, slot));
}

#[test]
fn a_failed_heartbeat_reread_is_retried() {
    let created = NOW - 5_000;
    let deadline = created + 11_000;
    let mut world = World::with([heartbeat(1, 10, 1, created)]);
    let mut planner = loaded(&mut world, NOW);
    world.run(&mut planner, NOW, deadline - 1);
    world.failing = 1;
    world.run(&mut planner, deadline - 1, deadline + 1_000);
    let missed = world.missed(1);
    assert_eq!(missed.len(), 1);
    assert!(missed[0].0 >= deadline + DB_RETRY_MS, "after the pause");
    assert_missed(&missed[0], 1, deadline);
}

#[test]
fn a_failed_change_read_is_retried_and_a_new_event_does_not_wait() {
    let mut world = World::with([]);
    let mut planner = loaded(&mut world, NOW);
    world.rows.insert(1, http(1, 300, NOW - 1));
    planner.monitor_changed(1);
    planner.changes_arrived();
    world.failing = 1;
    let wake = world.round(&mut planner, NOW);
    assert!(world.checks(1).is_empty());
    assert_eq!(wake, NOW + DB_RETRY_MS, "retried after the pause");
    assert_eq!(planner.pending_changes(), 1, "still to re-read");
    // Another event: re-read at once, pause or not.
    world.rows.insert(2, http(2, 300, NOW - 1));
    planner.monitor_changed(2);
    planner.changes_arrived();
    world.round(&mut planner, NOW + 1);
    assert_eq!(
        world.reads.last().unwrap(),
        &(NOW + 1, Read::Changed(vec![1, 2]))
    );
    assert_eq!(planner.pending_changes(), 0);
    // Staging still waits for the pause to end.
    assert!(world.checks(1).is_empty());
    world.run(&mut planner, NOW + 1, NOW + DB_RETRY_MS);
    assert_eq!((world.checks(1).len(), world.checks(2).len()), (1, 1));
    assert_eq!(world.checks(1)[0].0, NOW + DB_RETRY_MS);
}
