//! The planner of a replica with leases: nothing before its first grant,
//! and a shard loaded again from where its grant ran out.

use super::super::planner::Planner;
use super::world::*;
use crate::settings::ScheduleSettings;
use crate::shards::ShardSet;

const MAX_GAP: i64 = 30_000;

fn replica_planner(shards: u16) -> Planner {
    let settings = ScheduleSettings::default();
    Planner::new(LOOKAHEAD, settings.catchup()).owning_nothing(shards)
}

fn all(shards: u16) -> ShardSet {
    let mut set = ShardSet::empty(shards);
    for shard in 0..shards {
        set.insert(shard);
    }
    set
}

#[test]
fn a_monitor_changed_before_the_first_grant_is_checked_at_once_when_it_comes() {
    let mut world = World::with([http(7, 3600, NOW - 5)]);
    let mut planner = replica_planner(4);
    assert!(
        planner.owns_nothing(),
        "no round runs before the first grant"
    );
    planner.monitor_changed(7);
    planner.changes_arrived();

    let later = NOW + 9_000;
    let gained: Vec<(u16, i64)> = (0..4).map(|shard| (shard, 0)).collect();
    planner.set_shards(all(4), &gained, MAX_GAP, later);
    world.run(&mut planner, later, later);
    let checks = world.checks(7);
    assert_eq!(checks.len(), 1, "checked once, at once");
    assert_eq!(checks[0].0, later);
    assert_eq!(due_ms(&checks[0].1), NOW - 5, "named after its creation");
}

#[test]
fn a_shard_loaded_again_publishes_the_slot_its_lapsed_grant_refused() {
    let mut world = World::with([http(7, 10, NOW - 100 * TEN_S)]);
    world.row(7).timing.last_checked_at = Some(at(NOW - 2 * TEN_S));
    let mut planner = replica_planner(1);
    planner.set_shards(all(1), &[(0, 0)], MAX_GAP, NOW);
    world.run(&mut planner, NOW, NOW);
    let fired = world.checks(7);
    assert_eq!(fired.len(), 1, "the latest unrecorded slot, at once");
    // The shell refused it (its grant had run out) and reports the shard
    // granted again a moment later, from that slot.
    let (_, refused) = fired[0].clone();
    let refused_at = due_ms(&refused);
    let now = NOW + 1;
    planner.set_shards(all(1), &[(0, refused_at)], MAX_GAP, now);
    world.run(&mut planner, now, now);
    let checks = world.checks(7);
    assert_eq!(checks.len(), 2, "published again: {checks:?}");
    let (sent_at, again) = &checks[1];
    assert_eq!((*sent_at, due_ms(again)), (now, refused_at));
    assert_eq!(again.check_id, refused.check_id, "under its own id");
}
