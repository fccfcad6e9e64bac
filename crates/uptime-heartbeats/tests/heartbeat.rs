//! Expected pings and deadlines: intervals, cron schedules and started runs.

use chrono::{DateTime, TimeDelta, Utc};
use uptime_heartbeats::{Heartbeat, Period, Schedule};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test instant")
        .with_timezone(&Utc)
}

fn mins(n: i64) -> TimeDelta {
    TimeDelta::minutes(n)
}

/// Every day at 03:00 UTC, ten minutes' grace, created on 2030-01-01.
fn nightly() -> Heartbeat {
    Heartbeat {
        period: Period::Cron(Schedule::parse("0 3 * * *", None).expect("valid")),
        grace_secs: 600,
        since: at("2030-01-01T12:00:00Z"),
        last_ping_at: None,
        started_at: None,
    }
}

/// Every five minutes, one minute's grace.
fn every_five() -> Heartbeat {
    Heartbeat {
        period: Period::Interval { secs: 300 },
        grace_secs: 60,
        since: at("2030-01-01T12:00:00Z"),
        last_ping_at: None,
        started_at: None,
    }
}

#[test]
fn an_interval_heartbeat_counts_from_the_last_ping_or_since() {
    let h = every_five();
    assert_eq!(h.deadline(), Some(at("2030-01-01T12:06:00Z")));
    let pinged = Heartbeat {
        last_ping_at: Some(at("2030-01-01T12:03:00Z")),
        ..every_five()
    };
    assert_eq!(pinged.deadline(), Some(at("2030-01-01T12:09:00Z")));
    // A ping before an edit does not count: the edit opens a fresh period.
    let edited = Heartbeat {
        since: at("2030-01-01T12:04:00Z"),
        ..pinged
    };
    assert_eq!(edited.deadline(), Some(at("2030-01-01T12:10:00Z")));
    assert_eq!(
        edited.deadline_after(at("2030-01-01T12:10:00Z")),
        Some(at("2030-01-01T12:15:00Z"))
    );
}

#[test]
fn an_interval_heartbeat_shows_the_next_expected_ping() {
    let h = every_five();
    let now = at("2030-01-01T12:01:00Z");
    assert_eq!(h.next_expected_at(now), Some(at("2030-01-01T12:05:00Z")));
    // Within grace the expected time stays the current period's.
    assert_eq!(
        h.next_expected_at(at("2030-01-01T12:05:30Z")),
        Some(at("2030-01-01T12:05:00Z"))
    );
    // Once the deadline has passed, the next period's.
    assert_eq!(
        h.next_expected_at(at("2030-01-01T12:06:00Z")),
        Some(at("2030-01-01T12:10:00Z"))
    );
    assert_eq!(
        h.next_expected_at(at("2030-01-01T12:23:00Z")),
        Some(at("2030-01-01T12:25:00Z"))
    );
}

#[test]
fn a_cron_heartbeat_expects_a_ping_after_each_scheduled_time() {
    let h = nightly();
    // Created at noon: the first run is the next day's 03:00.
    assert_eq!(
        h.next_expected_at(at("2030-01-01T13:00:00Z")),
        Some(at("2030-01-02T03:00:00Z"))
    );
    assert_eq!(h.deadline(), Some(at("2030-01-02T03:10:00Z")));
    // On time: a ping at 03:04 moves the deadline to the next night.
    let on_time = Heartbeat {
        last_ping_at: Some(at("2030-01-02T03:04:00Z")),
        ..nightly()
    };
    assert_eq!(on_time.deadline(), Some(at("2030-01-03T03:10:00Z")));
    assert_eq!(
        on_time.next_expected_at(at("2030-01-02T03:05:00Z")),
        Some(at("2030-01-03T03:00:00Z"))
    );
}

#[test]
fn a_late_cron_ping_misses_its_deadline_and_each_missed_run_counts() {
    let h = nightly();
    let first = at("2030-01-02T03:10:00Z");
    assert_eq!(h.deadline(), Some(first));
    assert_eq!(h.deadline_after(first), Some(at("2030-01-03T03:10:00Z")));
    // Within grace the expected time is still the missed run's; past it, the
    // next run's.
    assert_eq!(
        h.next_expected_at(at("2030-01-02T03:09:59Z")),
        Some(at("2030-01-02T03:00:00Z"))
    );
    assert_eq!(h.next_expected_at(first), Some(at("2030-01-03T03:00:00Z")));
    // A late ping (03:20) is the next period's base: the next run is expected.
    let late = Heartbeat {
        last_ping_at: Some(at("2030-01-02T03:20:00Z")),
        ..nightly()
    };
    assert_eq!(late.deadline(), Some(at("2030-01-03T03:10:00Z")));
}

#[test]
fn latest_missed_jumps_over_an_outage() {
    let h = nightly();
    assert_eq!(h.latest_missed(at("2030-01-02T03:09:59Z")), None);
    assert_eq!(
        h.latest_missed(at("2030-01-02T03:10:00Z")),
        Some(at("2030-01-02T03:10:00Z"))
    );
    assert_eq!(
        h.latest_missed(at("2030-01-09T03:09:00Z")),
        Some(at("2030-01-08T03:10:00Z"))
    );
    let i = every_five();
    assert_eq!(
        i.latest_missed(at("2030-01-01T12:20:59Z")),
        Some(at("2030-01-01T12:16:00Z"))
    );
}

#[test]
fn latest_missed_of_a_failed_run_keeps_the_runs_deadline() {
    // Started at 02:50 (before its 03:00 run), grace ten minutes: the run
    // fails at 03:00, before the scheduled time's own deadline.
    let h = Heartbeat {
        started_at: Some(at("2030-01-02T02:50:00Z")),
        ..nightly()
    };
    let run_deadline = at("2030-01-02T03:00:00Z");
    assert_eq!(h.deadline(), Some(run_deadline));
    assert_eq!(
        h.latest_missed(at("2030-01-02T03:05:00Z")),
        Some(run_deadline)
    );
    assert_eq!(
        h.latest_missed(at("2030-01-02T03:10:00Z")),
        Some(at("2030-01-02T03:10:00Z"))
    );
}

#[test]
fn a_started_run_fails_after_its_grace_without_a_ping() {
    // Every hour, grace ten minutes; the last run pinged at 01:00:30.
    let hourly = Heartbeat {
        period: Period::Cron(Schedule::parse("0 * * * *", None).expect("valid")),
        grace_secs: 600,
        since: at("2030-01-01T00:00:00Z"),
        last_ping_at: Some(at("2030-01-02T01:00:30Z")),
        started_at: None,
    };
    assert_eq!(hourly.deadline(), Some(at("2030-01-02T02:10:00Z")));
    // A run started at 01:30 (say, by hand) must finish by 01:40.
    let started = Heartbeat {
        started_at: Some(at("2030-01-02T01:30:00Z")),
        ..hourly.clone()
    };
    assert_eq!(started.unfinished_run(), Some(at("2030-01-02T01:30:00Z")));
    assert_eq!(started.deadline(), Some(at("2030-01-02T01:40:00Z")));
    // The expected time shown is the schedule's, not the run's.
    assert_eq!(
        started.next_expected_at(at("2030-01-02T01:31:00Z")),
        Some(at("2030-01-02T02:00:00Z"))
    );
    // A start older than the last ping is a finished run.
    let finished = Heartbeat {
        started_at: Some(at("2030-01-02T01:00:00Z")),
        ..hourly.clone()
    };
    assert_eq!(finished.unfinished_run(), None);
    assert_eq!(finished.deadline(), hourly.deadline());
    // A start before an edit or a resume is forgotten.
    let resumed = Heartbeat {
        since: at("2030-01-02T01:35:00Z"),
        ..started.clone()
    };
    assert_eq!(resumed.unfinished_run(), None);
    assert_eq!(resumed.deadline(), Some(at("2030-01-02T02:10:00Z")));
}

#[test]
fn a_started_interval_run_fails_after_its_grace() {
    let h = Heartbeat {
        started_at: Some(at("2030-01-01T12:01:00Z")),
        ..every_five()
    };
    assert_eq!(h.deadline(), Some(at("2030-01-01T12:02:00Z")));
    assert_eq!(
        h.deadline_after(at("2030-01-01T12:02:00Z")),
        Some(at("2030-01-01T12:07:00Z"))
    );
}

#[test]
fn a_cron_heartbeat_in_a_time_zone_follows_dst() {
    // 02:30 every night in Berlin, five minutes' grace; the night of
    // 2030-03-31 skips 02:00-03:00, so that run is due at 03:00 CEST.
    let h = Heartbeat {
        period: Period::Cron(Schedule::parse("30 2 * * *", Some("Europe/Berlin")).expect("valid")),
        grace_secs: 300,
        since: at("2030-03-29T12:00:00Z"),
        last_ping_at: Some(at("2030-03-30T01:31:00Z")), // 02:31 CET
        started_at: None,
    };
    let skipped = at("2030-03-31T01:00:00Z");
    assert_eq!(h.next_expected_at(skipped - mins(60)), Some(skipped));
    assert_eq!(h.deadline(), Some(skipped + mins(5)));
    assert_eq!(
        h.deadline_after(skipped + mins(5)),
        Some(at("2030-04-01T00:35:00Z"))
    );
}
