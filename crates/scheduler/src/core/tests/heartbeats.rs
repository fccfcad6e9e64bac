//! Heartbeats on a cron schedule and started runs, through the planner with
//! the injected clock: late, on time, started but unfinished, in a time zone
//! and across a DST change.

use super::world::*;
use chrono::DateTime;
use uptime_contracts::{CheckOutcome, CheckResult, Trigger};

const MINUTE: i64 = 60_000;

/// Epoch ms of an RFC 3339 instant.
fn utc(s: &str) -> i64 {
    DateTime::parse_from_rfc3339(s).unwrap().timestamp_millis()
}

fn cron(id: i64, schedule: &str, timezone: Option<&str>, grace_secs: i32, created: i64) -> Row {
    let mut row = heartbeat(id, 60, grace_secs, created);
    row.timing.heartbeat_schedule = Some(schedule.into());
    row.timing.heartbeat_timezone = timezone.map(Into::into);
    row
}

/// The failed results of monitor 1, as (deadline, error).
fn failures(world: &World) -> Vec<(i64, String)> {
    world
        .missed(1)
        .into_iter()
        .map(|(sent_at, r): (i64, CheckResult)| {
            let deadline = r.checked_at.timestamp_millis();
            assert!(sent_at >= deadline, "reported before its deadline");
            assert_eq!(r.due_at, Some(r.checked_at));
            assert_eq!(
                (r.trigger, r.outcome),
                (Trigger::Heartbeat, CheckOutcome::Fail)
            );
            (deadline, r.error.unwrap_or_default())
        })
        .collect()
}

#[test]
fn now_is_a_known_instant() {
    assert_eq!(NOW, utc("2027-01-15T08:00:00Z"));
}

#[test]
fn a_cron_heartbeat_pinged_after_each_run_is_never_reported() {
    // Every five minutes, one minute's grace; the first run is at NOW.
    let mut world = World::with([cron(1, "*/5 * * * *", None, 60, NOW - 1_000)]);
    let mut planner = loaded(&mut world, NOW - 1_000);
    let mut now = NOW - 1_000;
    // Each run pings a little after its time (the third at the end of grace).
    for ping in [
        NOW + 30_000,
        NOW + 5 * MINUTE + 10_000,
        NOW + 11 * MINUTE - 1,
    ] {
        now = world.run(&mut planner, now, ping);
        world.row(1).timing.last_heartbeat_at = Some(at(ping));
    }
    world.run(&mut planner, now, NOW + 16 * MINUTE - 1);
    assert!(failures(&world).is_empty(), "{:?}", failures(&world));
    // The 15-minute run has not pinged: it fails at the end of its grace.
    world.run(&mut planner, NOW + 16 * MINUTE - 1, NOW + 16 * MINUTE);
    assert_eq!(failures(&world).len(), 1);
    assert_eq!(failures(&world)[0].0, NOW + 16 * MINUTE);
}

#[test]
fn a_late_cron_ping_fails_its_run_and_counts_for_no_later_run() {
    let mut world = World::with([cron(1, "*/5 * * * *", None, 60, NOW - 1_000)]);
    let mut planner = loaded(&mut world, NOW - 1_000);
    // Silent: the runs at NOW and NOW + 5 min each fail at their grace's end.
    world.run(&mut planner, NOW - 1_000, NOW + 6 * MINUTE);
    assert_eq!(
        failures(&world),
        vec![
            (
                NOW + MINUTE,
                "no ping after the run scheduled for 2027-01-15T08:00:00Z \
                 (\"*/5 * * * *\" in UTC) within 60s grace"
                    .to_string()
            ),
            (
                NOW + 6 * MINUTE,
                "no ping after the run scheduled for 2027-01-15T08:05:00Z \
                 (\"*/5 * * * *\" in UTC) within 60s grace"
                    .to_string()
            ),
        ]
    );
    // The 08:05 run pings late, at 08:06:30: the 08:10 run is still expected.
    let late = NOW + 6 * MINUTE + 30_000;
    world.run(&mut planner, NOW + 6 * MINUTE, late);
    world.row(1).timing.last_heartbeat_at = Some(at(late));
    world.run(&mut planner, late, NOW + 11 * MINUTE);
    let reported = failures(&world);
    assert_eq!(reported.len(), 3);
    assert_eq!(reported[2].0, NOW + 11 * MINUTE);
}

#[test]
fn a_started_run_that_does_not_finish_fails_after_its_grace() {
    // Hourly, ten minutes' grace, created 07:30; a run started by hand at
    // 07:45 must finish by 07:55, before the 08:00 run's deadline (08:10).
    let created = NOW - 30 * MINUTE;
    let mut world = World::with([cron(1, "0 * * * *", None, 600, created)]);
    let mut planner = loaded(&mut world, created + 1_000);
    let started = NOW - 15 * MINUTE;
    world.run(&mut planner, created + 1_000, started);
    world.row(1).timing.heartbeat_started_at = Some(at(started));
    // The api-gateway announces a start as a change of the monitor.
    planner.monitor_changed(1);
    planner.changes_arrived();
    world.run(&mut planner, started, NOW + 10 * MINUTE);
    assert_eq!(
        failures(&world),
        vec![
            (
                started + 10 * MINUTE,
                "the run started at 2027-01-15T07:45:00Z did not finish within 600s grace \
                 (no success or failure ping)"
                    .to_string()
            ),
            (
                NOW + 10 * MINUTE,
                "no ping after the run scheduled for 2027-01-15T08:00:00Z (\"0 * * * *\" in UTC) \
                 within 600s grace; the run started at 2027-01-15T07:45:00Z has not finished"
                    .to_string()
            ),
        ]
    );
}

#[test]
fn a_started_run_that_finishes_within_its_grace_is_not_reported() {
    let created = NOW - 30 * MINUTE;
    let mut world = World::with([cron(1, "0 * * * *", None, 600, created)]);
    let mut planner = loaded(&mut world, created + 1_000);
    let started = NOW - 15 * MINUTE;
    world.run(&mut planner, created + 1_000, started);
    world.row(1).timing.heartbeat_started_at = Some(at(started));
    planner.monitor_changed(1);
    planner.changes_arrived();
    let finished = started + 9 * MINUTE;
    world.run(&mut planner, started, finished);
    world.row(1).timing.last_heartbeat_at = Some(at(finished));
    // The 08:00 run is still expected; nothing fails before its deadline.
    world.run(&mut planner, finished, NOW + 10 * MINUTE - 1);
    assert!(failures(&world).is_empty(), "{:?}", failures(&world));
}

#[test]
fn a_start_the_scheduler_did_not_hear_of_fails_at_the_deadline_it_holds() {
    // Every five minutes, 4 minutes' grace; started at 07:58:00 (before the
    // 08:00 run) with its change event lost: the run's deadline (08:02) is
    // before the period's (08:04), which is when the scheduler re-reads.
    let mut world = World::with([cron(1, "*/5 * * * *", None, 240, NOW - 3 * MINUTE)]);
    let mut planner = loaded(&mut world, NOW - 3 * MINUTE);
    world.row(1).timing.heartbeat_started_at = Some(at(NOW - 2 * MINUTE));
    world.run(&mut planner, NOW - 3 * MINUTE, NOW + 4 * MINUTE);
    let reported = failures(&world);
    assert_eq!(reported.len(), 1, "{reported:?}");
    assert_eq!(reported[0].0, NOW + 4 * MINUTE);
    assert_eq!(
        reported[0].1,
        "no ping after the run scheduled for 2027-01-15T08:00:00Z (\"*/5 * * * *\" in UTC) \
         within 240s grace; the run started at 2027-01-15T07:58:00Z has not finished"
    );
}

#[test]
fn a_cron_heartbeat_runs_on_its_time_zones_clock() {
    // 09:30 in New York (EST, UTC-5 in January): 14:30 UTC.
    let mut world = World::with([cron(1, "30 9 * * *", Some("America/New_York"), 300, NOW)]);
    let mut planner = loaded(&mut world, NOW);
    let deadline = utc("2027-01-15T14:35:00Z");
    world.run(&mut planner, NOW, deadline - 1);
    assert!(failures(&world).is_empty());
    world.run(&mut planner, deadline - 1, deadline);
    assert_eq!(
        failures(&world),
        vec![(
            deadline,
            "no ping after the run scheduled for 2027-01-15T14:30:00Z \
             (\"30 9 * * *\" in America/New_York) within 300s grace"
                .to_string()
        )]
    );
}

#[test]
fn a_run_in_the_hour_dst_skips_is_expected_right_after_the_gap() {
    // New York skips 02:00-03:00 on 2027-03-14: the 02:30 run is due at
    // 03:00 EDT (07:00 UTC); the day before, 02:30 EST is 07:30 UTC; the day
    // after, 02:30 EDT is 06:30 UTC.
    let created = utc("2027-03-13T12:00:00Z");
    let mut world = World::with([cron(
        1,
        "30 2 * * *",
        Some("America/New_York"),
        300,
        created,
    )]);
    let mut planner = loaded(&mut world, created);
    world.run(&mut planner, created, utc("2027-03-15T06:35:00Z"));
    let deadlines: Vec<i64> = failures(&world).into_iter().map(|(d, _)| d).collect();
    assert_eq!(
        deadlines,
        vec![utc("2027-03-14T07:05:00Z"), utc("2027-03-15T06:35:00Z")]
    );
}

#[test]
fn a_heartbeat_deadline_and_a_check_due_in_one_pass_both_go_out() {
    // The check's slot and the heartbeat's deadline fall on the same
    // instant, so one pass fires both: the check is queued for publishing
    // and the deadline must be re-read after it. (The planner once marked
    // the re-read outstanding while the check was still queued, and its
    // next call asserted that no read was outstanding: a debug build
    // crashed here.)
    let check_slot = crate::slots::slot_after(2, TEN_S, NOW);
    let mut checked = http(2, 10, NOW - 100 * TEN_S);
    checked.timing.last_checked_at = Some(at(NOW));
    // Silent since it was created: its deadline is created + 10 s + 1 s.
    let deadline = check_slot;
    let mut world = World::with([heartbeat(1, 10, 1, deadline - 11_000), checked]);
    let mut planner = loaded(&mut world, NOW);
    world.run(&mut planner, NOW, deadline - 1);
    assert!(world.missed(1).is_empty() && world.checks(2).is_empty());

    world.run(&mut planner, deadline - 1, deadline);
    let checks = world.checks(2);
    assert_eq!(checks.len(), 1, "the check went out");
    assert_eq!((checks[0].0, due_ms(&checks[0].1)), (deadline, check_slot));
    let missed = world.missed(1);
    assert_eq!(missed.len(), 1, "the deadline was re-read and reported");
    assert_eq!(missed[0].0, deadline, "in the same pass, not a round later");
    assert_eq!(missed[0].1.checked_at, at(deadline));
    // And both go on: the next slot and the next silent period.
    world.run(&mut planner, deadline, deadline + TEN_S);
    assert_eq!((world.checks(2).len(), world.missed(1).len()), (2, 2));
}
