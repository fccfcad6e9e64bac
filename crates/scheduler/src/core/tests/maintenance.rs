//! A monitor in a `pause` maintenance window: its slots are skipped, it
//! stays on the timeline, and it is checked again at the first slot after
//! the window (the mark read with each slot's configuration).

use super::*;

#[test]
fn a_paused_monitor_skips_its_slots_and_is_checked_again_after_the_window() {
    let mut world = World::with([
        http(1, 10, NOW - 100 * TEN_S),
        http(2, 10, NOW - 100 * TEN_S),
    ]);
    for id in [1, 2] {
        world.row(id).timing.last_checked_at = Some(at(NOW));
    }
    world.row(1).config.maintenance_effect = Some("pause".into());
    let mut planner = loaded(&mut world, NOW);
    world.run(&mut planner, NOW, NOW + 3 * TEN_S);
    assert!(world.checks(1).is_empty(), "{:?}", world.checks(1));
    assert_eq!(world.checks(2).len(), 3, "the other monitor runs on");
    assert_eq!(world.monitors_reported, Some(2), "still on the timeline");

    // A `silence` window changes nothing here: checks go on.
    world.row(1).config.maintenance_effect = Some("silence".into());
    world.run(&mut planner, NOW + 3 * TEN_S, NOW + 4 * TEN_S);
    let checks = world.checks(1);
    assert_eq!(checks.len(), 1, "checked again at its next slot");
    assert_eq!(checks[0].0, due_ms(&checks[0].1), "on its slot");
}
