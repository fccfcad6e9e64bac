//! Parsing and evaluating cron schedules, in UTC and in time zones.

use chrono::{DateTime, Utc};
use uptime_heartbeats::{Period, Schedule, ScheduleError};

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s)
        .expect("test instant")
        .with_timezone(&Utc)
}

fn parse(expression: &str, timezone: Option<&str>) -> Schedule {
    Schedule::parse(expression, timezone).expect("valid schedule")
}

#[test]
fn next_after_is_strictly_after() {
    let s = parse("*/15 * * * *", None);
    assert_eq!(
        s.next_after(at("2030-01-01T10:00:00Z")),
        Some(at("2030-01-01T10:15:00Z"))
    );
    assert_eq!(
        s.next_after(at("2030-01-01T10:14:59.900Z")),
        Some(at("2030-01-01T10:15:00Z"))
    );
    assert_eq!(
        s.next_after(at("2030-01-01T10:15:00.500Z")),
        Some(at("2030-01-01T10:30:00Z"))
    );
}

#[test]
fn latest_at_or_before_includes_the_instant_itself() {
    let s = parse("0 3 * * *", None);
    assert_eq!(
        s.latest_at_or_before(at("2030-01-05T03:00:00Z")),
        Some(at("2030-01-05T03:00:00Z"))
    );
    assert_eq!(
        s.latest_at_or_before(at("2030-01-05T02:59:59Z")),
        Some(at("2030-01-04T03:00:00Z"))
    );
}

#[test]
fn a_schedule_is_read_on_its_zones_wall_clock() {
    // 09:00 on weekdays in Berlin: 08:00 UTC in winter, 07:00 UTC in summer.
    let s = parse("0 9 * * MON-FRI", Some("Europe/Berlin"));
    // Friday 2030-01-04 10:00 Berlin: next is Monday 2030-01-07 09:00 CET.
    assert_eq!(
        s.next_after(at("2030-01-04T09:00:00Z")),
        Some(at("2030-01-07T08:00:00Z"))
    );
    assert_eq!(
        s.next_after(at("2030-07-01T00:00:00Z")),
        Some(at("2030-07-01T07:00:00Z"))
    );
    assert_eq!(s.timezone(), "Europe/Berlin");
    assert_eq!(parse("0 9 * * *", None).timezone(), "UTC");
}

#[test]
fn a_time_skipped_by_dst_runs_once_right_after_the_gap() {
    // Berlin skips 02:00-03:00 on 2030-03-31 (CET -> CEST at 01:00 UTC).
    let s = parse("30 2 * * *", Some("Europe/Berlin"));
    let on_the_day = s.next_after(at("2030-03-30T12:00:00Z"));
    assert_eq!(on_the_day, Some(at("2030-03-31T01:00:00Z")));
    assert_eq!(
        s.next_after(at("2030-03-31T01:00:00Z")),
        Some(at("2030-04-01T00:30:00Z"))
    );
}

#[test]
fn a_time_repeated_by_dst_runs_once() {
    // Berlin repeats 02:00-03:00 on 2030-10-27 (CEST -> CET at 01:00 UTC).
    let s = parse("30 2 * * *", Some("Europe/Berlin"));
    let first = at("2030-10-27T00:30:00Z"); // 02:30 CEST
    assert_eq!(s.next_after(at("2030-10-26T12:00:00Z")), Some(first));
    assert_eq!(s.next_after(first), Some(at("2030-10-28T01:30:00Z")));
}

#[test]
fn day_of_month_and_day_of_week_match_either_as_in_crontab() {
    // The 13th, or any Friday.
    let s = parse("0 0 13 * 5", None);
    // 2030-01-04 is a Friday, 2030-01-13 a Sunday.
    assert_eq!(
        s.next_after(at("2030-01-01T00:00:00Z")),
        Some(at("2030-01-04T00:00:00Z"))
    );
    assert_eq!(
        s.next_after(at("2030-01-12T00:00:00Z")),
        Some(at("2030-01-13T00:00:00Z"))
    );
}

#[test]
fn five_fields_are_required() {
    for (expression, got) in [("* * * *", 4), ("0 * * * * *", 6), ("@daily", 1), ("", 0)] {
        let err = Schedule::parse(expression, None).expect_err(expression);
        assert_eq!(
            err.to_string(),
            format!(
                "invalid cron schedule {expression:?}: must have five fields: \
                 minute hour day-of-month month day-of-week (got {got})"
            )
        );
    }
}

#[test]
fn bad_fields_are_refused_with_the_parsers_reason() {
    for expression in [
        "61 * * * *",
        "* 24 * * *",
        "* * * 13 *",
        "x * * * *",
        "*/0 * * * *",
    ] {
        match Schedule::parse(expression, None) {
            Err(ScheduleError::Cron {
                expression: e,
                reason,
            }) => {
                assert_eq!(e, expression);
                assert!(!reason.is_empty());
            }
            other => panic!("{expression}: {other:?}"),
        }
    }
}

#[test]
fn a_schedule_that_never_fires_is_refused() {
    let err = Schedule::parse("0 0 31 2 *", None).expect_err("february 31st");
    assert!(
        err.to_string().contains("never matches a real date"),
        "{err}"
    );
    // The 29th of February does come round.
    assert!(Schedule::parse("0 0 29 2 *", None).is_ok());
}

#[test]
fn an_unknown_time_zone_is_refused() {
    let err = Schedule::parse("0 9 * * *", Some("Mars/Base")).expect_err("no such zone");
    assert_eq!(err, ScheduleError::Timezone("Mars/Base".into()));
    assert_eq!(
        err.to_string(),
        "unknown time zone \"Mars/Base\"; use an IANA name such as Europe/Berlin"
    );
}

#[test]
fn a_row_has_a_schedule_or_an_interval() {
    assert_eq!(
        Period::of(300, None, Some("Europe/Berlin")),
        Ok(Period::Interval { secs: 300 })
    );
    assert_eq!(Period::of(0, None, None), Ok(Period::Interval { secs: 1 }));
    assert_eq!(
        Period::of(300, Some("0  3 * * *"), Some("Asia/Tokyo")),
        Ok(Period::Cron(parse("0 3 * * *", Some("Asia/Tokyo"))))
    );
    assert!(Period::of(300, Some("0 3 * *"), None).is_err());
}

#[test]
fn an_interval_period_counts_a_tenth_short_of_the_interval() {
    let period = Period::Interval { secs: 60 };
    assert_eq!(
        period.counted_until(at("2030-01-01T10:00:00Z")),
        at("2030-01-01T10:00:54Z")
    );
}

#[test]
fn a_cron_period_ends_a_tenth_of_its_gap_before_the_next_run() {
    let period = Period::Cron(parse("0 * * * *", None));
    // A ping after the 10:00 run: the next run (11:00) opens a new period,
    // and a ping up to six minutes early already counts for it.
    assert_eq!(
        period.counted_until(at("2030-01-01T10:02:00Z")),
        at("2030-01-01T10:54:00Z")
    );
    // A ping a minute before 11:00 counts for the 11:00 run: a retry at
    // 11:01 is the same run.
    assert_eq!(
        period.counted_until(at("2030-01-01T10:59:00Z")),
        at("2030-01-01T11:54:00Z")
    );
    // Weekdays at 09:00: Friday's run's period lasts over the weekend.
    let weekdays = Period::Cron(parse("0 9 * * MON-FRI", None));
    let monday_nine = at("2030-01-07T09:00:00Z");
    let slack = monday_nine - at("2030-01-04T09:00:00Z");
    assert_eq!(
        weekdays.counted_until(at("2030-01-04T09:03:00Z")),
        monday_nine - slack / 10
    );
}
