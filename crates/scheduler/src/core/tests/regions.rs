//! Rounds: one due check per region a monitor is checked from, all named
//! after the slot.

use super::world::*;
use crate::core::planner::Planner;
use crate::slots;
use uptime_config::RegionsSettings;
use uptime_contracts::{check_id_in_round, DEFAULT_REGION};

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn planner_with(regions: RegionsSettings) -> Planner {
    let settings = crate::settings::ScheduleSettings::default();
    Planner::new(LOOKAHEAD, settings.catchup()).with_regions(regions)
}

#[test]
fn a_single_region_round_is_one_check_named_after_its_slot() {
    let created = created_just_before_now(1);
    let mut world = World::with([http(1, 10, created)]);
    let mut planner = loaded(&mut world, NOW);
    let second = slots::slot_after(1, TEN_S, created);
    world.run(&mut planner, NOW, second);

    let checks = world.checks(1);
    assert_eq!(checks.len(), 2, "one check per slot");
    for ((_, due), slot) in checks.iter().zip([created, second]) {
        assert_eq!(due.check_id, slots::check_id(1, slot), "today's id");
        assert_eq!(due.round_id, due.check_id);
        assert_eq!(due.region, DEFAULT_REGION);
        assert_eq!(due.subject(), "uptime.checks.due.v5.default");
    }
}

#[test]
fn a_three_region_round_is_three_checks_on_three_subjects() {
    let created = created_just_before_now(1);
    let mut row = http(1, 10, created);
    row.config.regions = Some(names(&["eu", "us", "ap"]));
    let mut world = World::with([row]);
    let regions = RegionsSettings {
        known: names(&["eu", "us", "ap"]),
        ..RegionsSettings::default()
    };
    let mut planner = loaded_by(planner_with(regions), &mut world, NOW);
    let second = slots::slot_after(1, TEN_S, created);
    world.run(&mut planner, NOW, second);

    let checks = world.checks(1);
    assert_eq!(checks.len(), 6, "two slots of three regions");
    for (slot, round) in [created, second].into_iter().zip(checks.chunks(3)) {
        let round_id = slots::check_id(1, slot);
        let mut subjects: Vec<_> = round.iter().map(|(_, d)| d.subject()).collect();
        subjects.sort();
        assert_eq!(
            subjects,
            [
                "uptime.checks.due.v5.ap",
                "uptime.checks.due.v5.eu",
                "uptime.checks.due.v5.us"
            ]
        );
        let ids: std::collections::HashSet<_> = round.iter().map(|(_, d)| d.check_id).collect();
        assert_eq!(ids.len(), 3, "a check id per region");
        for (sent_at, due) in round {
            assert_eq!(
                *sent_at,
                slot.max(NOW),
                "all at once, at the slot (or at load)"
            );
            assert_eq!(due.round_id, round_id, "one round, named after the slot");
            assert_eq!(due.check_id, check_id_in_round(round_id, &due.region, 3));
            assert_eq!(due_ms(due), slot);
        }
    }
}

#[test]
fn a_monitor_naming_no_regions_goes_to_the_default_ones() {
    let mut world = World::with([http(1, 10, created_just_before_now(1))]);
    let regions = RegionsSettings {
        known: names(&["eu", "us"]),
        default: names(&["eu", "us"]),
        ..RegionsSettings::default()
    };
    loaded_by(planner_with(regions), &mut world, NOW);
    let regions: Vec<_> = world
        .checks(1)
        .iter()
        .map(|(_, d)| d.region.clone())
        .collect();
    assert_eq!(regions, ["eu", "us"]);
}
