//! The planner driven directly: rows in, steps out, time a number, against
//! the in-memory table of [`world`].

mod catchup;
mod config_cache;
mod heartbeats;
mod maintenance;
mod regions;
mod retries;
mod shards;
mod world;

use super::planner::Planner;
use super::{Read, RESYNC_PAGE};
use crate::slots;
use uptime_contracts::{CheckOutcome, CheckResult, KeywordType, MonitorKind, Trigger};
use world::*;

#[test]
fn a_new_monitor_is_due_at_once_then_on_its_slots() {
    let created = created_just_before_now(1);
    let mut world = World::with([http(1, 10, created)]);
    let mut planner = loaded(&mut world, NOW);

    let checks = world.checks(1);
    assert_eq!(checks.len(), 1, "due at once");
    let (sent_at, first) = &checks[0];
    assert_eq!(*sent_at, NOW);
    assert_eq!(due_ms(first), created, "named after its creation instant");
    assert_eq!(first.check_id, slots::check_id(1, created));
    assert_eq!(first.trigger, Trigger::Scheduled);

    let second = slots::slot_after(1, TEN_S, created);
    world.run(&mut planner, NOW, second - 1);
    assert_eq!(world.checks(1).len(), 1, "nothing before the next slot");
    world.run(&mut planner, second - 1, second);
    let checks = world.checks(1);
    assert_eq!(checks.len(), 2);
    assert_eq!(checks[1].0, second, "published at its due instant");
    assert_eq!(due_ms(&checks[1].1), second);
    assert_eq!(checks[1].1.check_id, slots::check_id(1, second));
    assert_eq!(
        due_ms(&checks[1].1).rem_euclid(TEN_S),
        slots::offset_ms(1, TEN_S)
    );
}

#[test]
fn monitors_sharing_an_interval_are_spread_over_it() {
    let ids: Vec<i64> = (1..=6).collect();
    let mut world = World::with(ids.iter().map(|id| http(*id, 10, NOW - 100 * TEN_S)));
    for id in &ids {
        world.row(*id).timing.last_checked_at = Some(at(NOW));
    }
    let mut planner = loaded(&mut world, NOW);
    world.run(&mut planner, NOW, NOW + TEN_S);
    let mut offsets = std::collections::HashSet::new();
    for id in &ids {
        let checks = world.checks(*id);
        assert_eq!(checks.len(), 1, "one slot per interval");
        let slot = due_ms(&checks[0].1);
        assert_eq!(checks[0].0, slot);
        assert_eq!(slot.rem_euclid(TEN_S), slots::offset_ms(*id, TEN_S));
        offsets.insert(slot.rem_euclid(TEN_S));
    }
    assert_eq!(offsets.len(), ids.len(), "every monitor has its own phase");
}

#[test]
fn a_due_check_carries_the_definition_version_interval_and_spec() {
    let mut keyword = http(2, 60, NOW - 1);
    keyword.config.kind = MonitorKind::Keyword;
    keyword.config.target = Some("http://127.0.0.1:9/status".into());
    keyword.config.timeout_secs = 3;
    keyword.config.expected_status = 200;
    keyword.config.keyword = Some("all good".into());
    keyword.config.keyword_type = Some("not_contains".into());
    keyword.config.definition_version = 4;
    keyword.timing.kind = MonitorKind::Keyword;
    let mut world = World::with([http(1, 60, NOW - 1), keyword]);
    loaded(&mut world, NOW);

    let http_due = &world.checks(1)[0].1;
    assert_eq!(
        (http_due.definition_version, http_due.interval_secs),
        (1, 60)
    );
    assert_eq!(http_due.spec.kind, MonitorKind::Http);
    assert_eq!(http_due.spec.target, "https://example.com/health");
    assert_eq!(
        (
            http_due.spec.timeout_secs.get(),
            http_due.spec.expected_status.get()
        ),
        (7, 204)
    );
    assert_eq!(
        (http_due.spec.keyword.clone(), http_due.spec.keyword_type),
        (None, None)
    );
    let keyword_due = &world.checks(2)[0].1;
    assert_eq!(
        (keyword_due.definition_version, keyword_due.interval_secs),
        (4, 60)
    );
    let spec = &keyword_due.spec;
    assert_eq!(spec.kind, MonitorKind::Keyword);
    assert_eq!(spec.target, "http://127.0.0.1:9/status");
    assert_eq!(
        (spec.timeout_secs.get(), spec.expected_status.get()),
        (3, 200)
    );
    assert_eq!(spec.keyword.as_deref(), Some("all good"));
    assert_eq!(spec.keyword_type, Some(KeywordType::NotContains));
}

#[test]
fn a_row_that_cannot_be_checked_is_skipped_and_leaves_the_timeline() {
    // The API never writes such a row; `uptime_db::monitors::check_spec`
    // refuses it instead of guessing, and the scheduler skips it.
    let mut broken = http(2, 60, NOW - 1);
    broken.config.expected_status = 0;
    let mut world = World::with([http(1, 60, NOW - 1), broken]);
    loaded(&mut world, NOW);
    assert_eq!(world.checks(1).len(), 1, "the sound monitor is checked");
    assert!(world.checks(2).is_empty(), "{:?}", world.checks(2));
    assert_eq!(world.monitors_reported, Some(1));
}

#[test]
fn configurations_are_read_a_lookahead_before_the_slot_and_published_at_it() {
    let mut world = World::with([http(1, 10, NOW - 100 * TEN_S)]);
    world.row(1).timing.last_checked_at = Some(at(NOW));
    let mut planner = loaded(&mut world, NOW);
    let slot = slots::slot_after(1, TEN_S, NOW);
    world.reads.clear();
    world.run(&mut planner, NOW, slot - LOOKAHEAD - 1);
    assert!(world.reads.is_empty(), "read too early: {:?}", world.reads);
    world.run(&mut planner, slot - LOOKAHEAD - 1, slot - 1);
    assert_eq!(world.reads.len(), 1, "{:?}", world.reads);
    let (read_at, read) = &world.reads[0];
    assert_eq!(read, &Read::CheckConfigs(vec![1]));
    assert!(
        (slot - LOOKAHEAD..slot).contains(read_at),
        "read at {read_at}"
    );
    assert!(world.checks(1).is_empty(), "staged, not published early");
    // The snapshot is what the read found, even if the row changes after.
    world.row(1).config.definition_version = 9;
    world.run(&mut planner, slot - 1, slot);
    let checks = world.checks(1);
    assert_eq!(checks.len(), 1);
    assert_eq!((checks[0].0, checks[0].1.definition_version), (slot, 1));
}

#[test]
fn a_change_event_rereads_the_monitor_and_a_new_one_is_due_at_once() {
    let mut world = World::with([]);
    let mut planner = loaded(&mut world, NOW);
    assert_eq!(world.run(&mut planner, NOW, NOW + 30_000), NOW);

    let now = NOW + 30_000;
    world.rows.insert(7, http(7, 300, now - 5).clone());
    planner.monitor_changed(7);
    planner.changes_arrived();
    world.round(&mut planner, now);
    assert!(world.reads.contains(&(now, Read::Changed(vec![7]))));
    assert_eq!(world.checks(7).len(), 1, "due at once");
    assert_eq!(world.checks(7)[0].0, now);
    assert_eq!(world.monitors_reported, Some(1));
}

/// Loads two monitors, applies `change` to monitor 1 once its first check is
/// out, and runs past both next slots: monitor 1 is never published again,
/// monitor 2 is.
fn stops_after(change: impl FnOnce(&mut World, &mut Planner), event: bool) {
    let mut world = World::with([http(1, 10, NOW - 1), http(2, 10, NOW - 1)]);
    let mut planner = loaded(&mut world, NOW);
    assert_eq!(world.checks(1).len(), 1);
    change(&mut world, &mut planner);
    if event {
        planner.monitor_changed(1);
        planner.changes_arrived();
    }
    world.run(&mut planner, NOW + 1, NOW + 2 * TEN_S);
    assert_eq!(world.checks(1).len(), 1, "still scheduled");
    assert!(world.checks(2).len() >= 2, "the other monitor kept going");
    assert_eq!(planner.monitors(), 1);
    assert_eq!(world.monitors_reported, Some(1));
}

#[test]
fn pausing_a_monitor_stops_its_checks() {
    stops_after(|world, _| world.row(1).active = false, true);
}

#[test]
fn deleting_a_monitor_stops_its_checks() {
    stops_after(
        |world, _| {
            world.rows.remove(&1);
        },
        true,
    );
}

#[test]
fn a_monitor_gone_without_its_event_is_dropped_when_staged() {
    stops_after(
        |world, _| {
            world.rows.remove(&1);
        },
        false,
    );
}

#[test]
fn an_interval_changed_without_its_event_is_reread_and_followed() {
    let mut world = World::with([http(1, 10, NOW - 1)]);
    let mut planner = loaded(&mut world, NOW);
    world.row(1).config.interval_secs = 20;
    world.row(1).timing.interval_secs = 20;
    world.row(1).timing.last_checked_at = Some(at(NOW));
    world.run(&mut planner, NOW + 1, NOW + 60_000);
    assert!(
        world
            .reads
            .iter()
            .any(|(_, r)| r == &Read::Changed(vec![1])),
        "{:?}",
        world.reads
    );
    let later: Vec<i64> = world.checks(1)[1..]
        .iter()
        .map(|(_, d)| due_ms(d))
        .collect();
    assert!(!later.is_empty());
    for due in &later {
        assert_eq!(
            due.rem_euclid(20_000),
            slots::offset_ms(1, 20_000),
            "on the 20 s slots"
        );
    }
    assert!(world.checks(1)[1..]
        .iter()
        .all(|(_, d)| d.interval_secs == 20));
}

#[test]
fn a_restart_publishes_the_slot_it_missed_once() {
    let created = NOW - 100 * TEN_S;
    let missed = slots::slot_at_or_before(1, TEN_S, NOW);
    let mut world = World::with([http(1, 10, created)]);
    // The check before the missed slot was recorded.
    world.row(1).timing.last_checked_at = Some(at(missed - TEN_S + 1));
    let mut planner = loaded(&mut world, NOW);
    world.run(&mut planner, NOW, NOW + 2 * TEN_S);
    let dues: Vec<i64> = world.checks(1).iter().map(|(_, d)| due_ms(d)).collect();
    assert_eq!(dues[0], missed);
    assert_eq!(world.checks(1)[0].1.check_id, slots::check_id(1, missed));
    assert_eq!(dues.iter().filter(|d| **d == missed).count(), 1);
    assert!(dues.iter().all(|d| *d >= missed), "nothing older: {dues:?}");
}

fn assert_missed(sent: &(i64, CheckResult), monitor_id: i64, deadline: i64) {
    let (sent_at, result) = sent;
    assert!(*sent_at >= deadline, "reported before its deadline");
    assert_eq!(result.monitor_id, monitor_id);
    assert_eq!(result.trigger, Trigger::Heartbeat);
    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        (result.checked_at, result.due_at),
        (at(deadline), Some(at(deadline)))
    );
    assert_eq!(
        result.error.as_deref(),
        Some("no ping received within 10s + 1s grace")
    );
    assert_eq!(result.reporter, "scheduler");
    assert_eq!(
        result.check_id,
        slots::missed_heartbeat_id(monitor_id, deadline)
    );
}

#[test]
fn a_silent_heartbeat_monitor_fails_after_interval_plus_grace_then_every_interval() {
    let created = NOW - 5_000;
    let mut world = World::with([heartbeat(1, 10, 1, created)]);
    world.row(1).timing.definition_version = 3;
    let mut planner = loaded(&mut world, NOW);
    let deadline = created + 11_000;
    world.run(&mut planner, NOW, deadline - 1);
    assert!(world.missed(1).is_empty(), "nothing before the deadline");
    world.run(&mut planner, deadline - 1, deadline + TEN_S);
    let missed = world.missed(1);
    assert_eq!(missed.len(), 2, "one failed check per silent period");
    assert_missed(&missed[0], 1, deadline);
    assert_missed(&missed[1], 1, deadline + TEN_S);
    assert_eq!(missed[0].1.definition_version, 3, "the row's version");
    assert!(world.checks(1).is_empty(), "never sent to checkers");
}

#[test]
fn a_ping_before_the_deadline_moves_it() {
    let created = NOW - 5_000;
    let mut world = World::with([heartbeat(1, 10, 1, created)]);
    let mut planner = loaded(&mut world, NOW);
    let ping = NOW + 1_000;
    world.run(&mut planner, NOW, ping);
    world.row(1).timing.last_heartbeat_at = Some(at(ping));
    world.run(&mut planner, ping, ping + 11_000 - 1);
    assert!(
        world.missed(1).is_empty(),
        "the first deadline passes quietly"
    );
    assert!(
        world
            .reads
            .iter()
            .any(|(_, r)| r == &Read::Heartbeats(vec![1])),
        "the row was re-read at the old deadline"
    );
    world.run(&mut planner, ping + 11_000 - 1, ping + 11_000);
    let missed = world.missed(1);
    assert_eq!(missed.len(), 1);
    assert_missed(&missed[0], 1, ping + 11_000);
}

#[test]
fn a_paused_heartbeat_monitor_is_not_reported_while_another_is() {
    let created = NOW - 5_000;
    let mut world = World::with([heartbeat(1, 10, 1, created), heartbeat(2, 10, 1, created)]);
    let mut planner = loaded(&mut world, NOW);
    world.row(1).active = false;
    planner.monitor_changed(1);
    planner.changes_arrived();
    world.run(&mut planner, NOW, created + 13_000);
    assert!(world.missed(1).is_empty());
    assert_eq!(world.missed(2).len(), 1, "the control was reported");
    assert_eq!(planner.monitors(), 1);
}

#[test]
fn a_resync_drops_vanished_monitors_and_adds_missing_ones() {
    let mut world = World::with([http(1, 10, NOW - 1), http(2, 10, NOW - 1)]);
    let mut planner = loaded(&mut world, NOW);
    // Changed while their events were lost.
    world.rows.remove(&1);
    world.rows.insert(3, http(3, 10, NOW));
    planner.start_resync(false);
    let later = NOW + 100;
    world.run(&mut planner, later, later + 1);
    assert_eq!(world.loads, vec![true, false]);
    assert!(
        world
            .reads
            .iter()
            .any(|(_, r)| r == &Read::Changed(vec![1])),
        "the unseen monitor was re-read: {:?}",
        world.reads
    );
    assert_eq!(planner.monitors(), 2);
    assert_eq!(world.monitors_reported, Some(2));
    assert_eq!(world.checks(3).len(), 1, "the missing one is due at once");
}

#[test]
fn the_full_load_reads_page_after_page_without_waiting() {
    let n = RESYNC_PAGE + 3;
    let mut world = World::with((1..=n).map(|id| http(id, 300, NOW - 1)));
    let planner = loaded(&mut world, NOW);
    let pages: Vec<&Read> = world
        .reads
        .iter()
        .filter(|(_, r)| matches!(r, Read::Page { .. }))
        .map(|(_, r)| r)
        .collect();
    assert_eq!(
        pages,
        vec![
            &Read::Page { after_id: 0 },
            &Read::Page {
                after_id: RESYNC_PAGE
            }
        ]
    );
    assert_eq!(planner.monitors() as i64, n);
}

#[test]
fn a_periodic_resync_waits_for_slack_before_a_publish() {
    let mut world = World::with((1..=(RESYNC_PAGE + 1)).map(|id| http(id, 300, NOW - 1)));
    let mut planner = loaded(&mut world, NOW);
    let wake = world.round(&mut planner, NOW);
    // The next publish (a 300 s slot) is far away: the resync has slack.
    world.reads.clear();
    planner.start_resync(false);
    world.round(&mut planner, wake.min(NOW + 1));
    assert!(matches!(
        world.reads.first(),
        Some((_, Read::Page { after_id: 0 }))
    ));
    assert_eq!(world.loads, vec![true], "one page per round");
}

#[test]
fn an_idle_planner_sleeps_and_wakes_for_pending_work() {
    let mut world = World::with([]);
    let mut planner = loaded(&mut world, NOW);
    assert_eq!(world.round(&mut planner, NOW), NOW + 60_000);
    world.rows.insert(1, heartbeat(1, 10, 1, NOW));
    planner.monitor_changed(1);
    planner.changes_arrived();
    let wake = world.round(&mut planner, NOW);
    assert_eq!(wake, NOW + 11_000 - LOOKAHEAD, "staged a lookahead early");
}

#[test]
fn ready_items_come_out_earliest_first() {
    use super::messages::Ready;
    use crate::queue::Due;
    use std::cmp::Reverse;
    let mut ready = std::collections::BinaryHeap::new();
    for due_at_ms in [30, 10, 20] {
        ready.push(Reverse(Ready {
            due: Due {
                due_at_ms,
                monitor_id: due_at_ms,
                generation: 0,
            },
            snapshot: None,
        }));
    }
    let order: Vec<i64> =
        std::iter::from_fn(|| ready.pop().map(|Reverse(r)| r.due.due_at_ms)).collect();
    assert_eq!(order, vec![10, 20, 30]);
}
