use super::*;

fn starts(spans: &[Span]) -> Vec<DateTime<Utc>> {
    spans.iter().map(|s| s.start).collect()
}

/// Sunday 03:00 in Europe/Berlin across both 2026 DST changes (29 March,
/// 25 October). The expected instants were computed independently with
/// python-dateutil 2.9.0's `rrulestr` and the `zoneinfo` database
/// (`rrulestr("FREQ=WEEKLY;BYDAY=SU;BYHOUR=3", dtstart=datetime(2026, 3, 1,
/// 3, tzinfo=ZoneInfo("Europe/Berlin")))`, `.after(...)` in UTC).
#[test]
fn weekly_berlin_windows_follow_the_dst_changes() {
    let rule = Recurrence::parse(
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=3",
        "Europe/Berlin",
        utc(2026, 3, 1, 2, 0),
        3600,
    )
    .unwrap();
    assert_eq!(
        starts(&rule.upcoming(utc(2026, 3, 10, 0, 0), 4)),
        [
            utc(2026, 3, 15, 2, 0),
            utc(2026, 3, 22, 2, 0),
            utc(2026, 3, 29, 1, 0),
            utc(2026, 4, 5, 1, 0),
        ]
    );
    let autumn = Recurrence::parse(
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=3",
        "Europe/Berlin",
        utc(2026, 10, 4, 1, 0),
        3600,
    )
    .unwrap();
    assert_eq!(
        starts(&autumn.upcoming(utc(2026, 10, 12, 0, 0), 3)),
        [
            utc(2026, 10, 18, 1, 0),
            utc(2026, 10, 25, 2, 0),
            utc(2026, 11, 1, 2, 0),
        ]
    );
    // Open at the right instants on the day of the change, and not an hour off.
    assert!(rule.open_at(utc(2026, 3, 29, 0, 59)).is_none());
    let open = rule.open_at(utc(2026, 3, 29, 1, 0)).unwrap();
    assert_eq!(open.end, utc(2026, 3, 29, 2, 0));
    assert!(rule.open_at(utc(2026, 3, 29, 2, 0)).is_none());
}

#[test]
fn a_local_time_in_the_spring_gap_starts_with_the_offset_before_it() {
    // 02:00 does not exist in Berlin on 29 March 2026: 02:00 +01:00.
    let rule = Recurrence::parse(
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
        "Europe/Berlin",
        utc(2026, 3, 1, 1, 0),
        1800,
    )
    .unwrap();
    assert_eq!(
        starts(&rule.upcoming(utc(2026, 3, 23, 0, 0), 2)),
        [utc(2026, 3, 29, 1, 0), utc(2026, 4, 5, 0, 0)]
    );
}

#[test]
fn the_open_occurrence_comes_first() {
    let daily = Recurrence::parse("FREQ=DAILY", "UTC", utc(2026, 1, 1, 22, 0), 4 * 3600).unwrap();
    let spans = daily.upcoming(utc(2026, 1, 5, 1, 0), 2);
    assert_eq!(
        spans[0],
        Span {
            start: utc(2026, 1, 4, 22, 0),
            end: utc(2026, 1, 5, 2, 0)
        }
    );
    assert_eq!(spans[1].start, utc(2026, 1, 5, 22, 0));
    assert!(daily.open_at(utc(2026, 1, 5, 1, 59)).is_some());
    assert!(daily.open_at(utc(2026, 1, 5, 2, 0)).is_none());
}

#[test]
fn rules_and_durations_are_bounded() {
    let at = utc(2026, 1, 1, 0, 0);
    let parse = |rule: &str, tz: &str, secs| Recurrence::parse(rule, tz, at, secs).map(|_| ());
    assert_eq!(
        parse("FREQ=MINUTELY", "UTC", 600),
        Err(WindowError::Unbounded)
    );
    assert_eq!(
        parse("FREQ=SECONDLY;INTERVAL=30", "UTC", 600),
        Err(WindowError::Unbounded)
    );
    assert_eq!(parse("FREQ=MINUTELY;COUNT=10", "UTC", 600), Ok(()));
    assert_eq!(parse("FREQ=HOURLY", "UTC", 600), Ok(()));
    assert_eq!(
        parse("FREQ=DAILY", "Mars/Olympus", 600),
        Err(WindowError::TimeZone)
    );
    assert_eq!(parse("FREQ=DAILY", "UTC", 59), Err(WindowError::Duration));
    assert_eq!(
        parse("FREQ=DAILY", "UTC", MAX_DURATION_SECS + 1),
        Err(WindowError::Duration)
    );
    assert_eq!(
        parse(
            &format!("FREQ=DAILY;{}", "BYHOUR=1;".repeat(100)),
            "UTC",
            600
        ),
        Err(WindowError::RuleTooLong)
    );
    assert_eq!(
        parse("FREQ=DAILY\nRRULE:FREQ=HOURLY", "UTC", 600),
        Err(WindowError::RuleLines)
    );
    assert!(matches!(
        parse("FREQ=SOMETIMES", "UTC", 600),
        Err(WindowError::Rule(_))
    ));
    assert_eq!(
        parse("RRULE:FREQ=WEEKLY;BYDAY=SU;BYHOUR=2", "UTC", 600),
        Ok(())
    );
}

#[test]
fn a_finished_rule_has_no_more_occurrences() {
    let rule = Recurrence::parse("FREQ=DAILY;COUNT=2", "UTC", utc(2026, 1, 1, 0, 0), 600).unwrap();
    assert_eq!(rule.upcoming(utc(2026, 1, 1, 0, 5), 5).len(), 2);
    assert!(rule.upcoming(utc(2026, 1, 3, 0, 0), 5).is_empty());
}

#[test]
fn one_off_and_ad_hoc_windows() {
    let now = utc(2026, 5, 1, 12, 0);
    let deploy = Schedule::from_now(now, 15).unwrap();
    assert!(deploy.open_at(now).is_some());
    assert!(deploy.open_at(utc(2026, 5, 1, 12, 15)).is_none());
    assert_eq!(
        Schedule::from_now(now, 0).unwrap_err(),
        WindowError::Duration
    );
    assert_eq!(
        Schedule::once(now, now).unwrap_err(),
        WindowError::EndsBeforeStart
    );
    assert!(deploy.upcoming(utc(2026, 5, 1, 13, 0), 3).is_empty());
}

#[test]
fn maintenance_seconds_count_overlaps_once() {
    let day = (utc(2026, 1, 1, 0, 0), utc(2026, 1, 2, 0, 0));
    let spans = [
        Span {
            start: utc(2025, 12, 31, 23, 0),
            end: utc(2026, 1, 1, 1, 0),
        },
        Span {
            start: utc(2026, 1, 1, 0, 30),
            end: utc(2026, 1, 1, 2, 0),
        },
        Span {
            start: utc(2026, 1, 1, 12, 0),
            end: utc(2026, 1, 1, 12, 10),
        },
    ];
    assert_eq!(seconds_within(&spans, day.0, day.1), 2 * 3600 + 600);
    assert_eq!(seconds_within(&[], day.0, day.1), 0);
}

#[test]
fn stored_parts_make_the_schedule_and_say_when_it_can_no_longer_open() {
    let once = Schedule::from_parts(
        utc(2026, 5, 1, 10, 0),
        Some(utc(2026, 5, 1, 11, 0)),
        None,
        None,
        None,
    )
    .unwrap();
    assert_eq!(
        once.last_end(utc(2026, 4, 1, 0, 0)),
        Some(utc(2026, 5, 1, 11, 0))
    );
    assert!(Schedule::from_parts(utc(2026, 5, 1, 10, 0), None, None, None, None).is_err());

    let bounded = Schedule::from_parts(
        utc(2026, 5, 4, 2, 0),
        None,
        Some("FREQ=DAILY;COUNT=3"),
        Some("UTC"),
        Some(600),
    )
    .unwrap();
    assert_eq!(
        bounded.last_end(utc(2026, 5, 1, 0, 0)),
        Some(utc(2026, 5, 6, 2, 10))
    );
    let endless = Schedule::from_parts(
        utc(2026, 5, 4, 2, 0),
        None,
        Some("FREQ=DAILY"),
        Some("Europe/Berlin"),
        Some(600),
    )
    .unwrap();
    assert_eq!(endless.last_end(utc(2026, 5, 1, 0, 0)), None);
    assert!(
        Schedule::from_parts(utc(2026, 5, 4, 2, 0), None, Some("FREQ=DAILY"), None, None).is_err()
    );
}

/// The window: its first start is the first 02:15 of the autumn
/// fold in Berlin (31 October 2027, 00:15 UTC), an instant like any other.
/// Expected instants: python 3 `zoneinfo` with `fold=0` (the earlier of a
/// repeated local time; the offset before a gap), as RFC 5545 resolves them.
#[test]
fn a_first_start_in_the_autumn_fold_is_its_instant() {
    for first in [utc(2027, 10, 31, 0, 15), utc(2027, 10, 31, 1, 15)] {
        let rule = Recurrence::parse(
            "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
            "Europe/Berlin",
            first,
            1800,
        )
        .unwrap_or_else(|e| panic!("{first}: {e}"));
        // The first occurrence is the start given (either 02:15), the next
        // a week later at 02:15 winter time.
        assert_eq!(
            starts(&rule.upcoming(utc(2027, 10, 30, 0, 0), 2)),
            [first, utc(2027, 11, 7, 1, 15)]
        );
    }
}

#[test]
fn a_later_local_time_in_the_autumn_fold_is_its_earlier_instant() {
    let rule = Recurrence::parse(
        "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2",
        "Europe/Berlin",
        utc(2027, 10, 3, 0, 15),
        1800,
    )
    .unwrap();
    assert_eq!(
        starts(&rule.upcoming(utc(2027, 10, 25, 0, 0), 2)),
        [utc(2027, 10, 31, 0, 15), utc(2027, 11, 7, 1, 15)]
    );
    assert!(rule.open_at(utc(2027, 10, 31, 0, 20)).is_some());
    assert!(rule.open_at(utc(2027, 10, 31, 1, 20)).is_none());
}

/// Havana changes its clocks at midnight: 00:30 is repeated on 7 November
/// 2027 and skipped on 14 March 2027. Neither day loses its window.
#[test]
fn a_zone_that_changes_at_midnight_keeps_every_occurrence() {
    let rule = Recurrence::parse(
        "FREQ=DAILY;BYHOUR=0",
        "America/Havana",
        utc(2027, 1, 1, 5, 30),
        600,
    )
    .unwrap();
    assert_eq!(
        starts(&rule.upcoming(utc(2027, 3, 13, 0, 0), 3)),
        [
            utc(2027, 3, 13, 5, 30),
            utc(2027, 3, 14, 5, 30),
            utc(2027, 3, 15, 4, 30),
        ]
    );
    assert_eq!(
        starts(&rule.upcoming(utc(2027, 11, 6, 0, 0), 3)),
        [
            utc(2027, 11, 6, 4, 30),
            utc(2027, 11, 7, 4, 30),
            utc(2027, 11, 8, 5, 30),
        ]
    );
}

#[test]
fn until_is_an_instant() {
    // Daily 02:15 Berlin until the first 02:15 of the fold: that one is the last.
    let rule = Recurrence::parse(
        "FREQ=DAILY;UNTIL=20271031T001500Z",
        "Europe/Berlin",
        utc(2027, 10, 29, 0, 15),
        600,
    )
    .unwrap();
    assert_eq!(
        starts(&rule.upcoming(utc(2027, 10, 1, 0, 0), 5)),
        [
            utc(2027, 10, 29, 0, 15),
            utc(2027, 10, 30, 0, 15),
            utc(2027, 10, 31, 0, 15),
        ]
    );
    assert!(matches!(
        Recurrence::parse(
            "FREQ=DAILY;UNTIL=20271031T001500",
            "Europe/Berlin",
            utc(2027, 10, 29, 0, 15),
            600,
        ),
        Err(WindowError::Rule(_))
    ));
}

/// In the spring gap an hourly rule's 02:30 moves forward onto 03:30's
/// instant: one occurrence, not two, and the rule still goes on.
#[test]
fn an_hourly_rule_across_the_spring_gap_counts_each_instant_once_and_goes_on() {
    let rule = Schedule::from_parts(
        utc(2027, 3, 27, 23, 30),
        None,
        Some("FREQ=HOURLY"),
        Some("Europe/Berlin"),
        Some(600),
    )
    .unwrap();
    let starts: Vec<DateTime<Utc>> = rule
        .upcoming(utc(2027, 3, 27, 23, 0), 4)
        .iter()
        .map(|s| s.start)
        .collect();
    // 00:30 and 01:30 winter time, 02:30 (does not exist: 03:30 summer
    // time, as 03:30 itself), 04:30 summer time.
    assert_eq!(
        starts,
        [
            utc(2027, 3, 27, 23, 30),
            utc(2027, 3, 28, 0, 30),
            utc(2027, 3, 28, 1, 30),
            utc(2027, 3, 28, 2, 30),
        ]
    );
    assert_eq!(
        rule.last_end(utc(2027, 3, 27, 23, 0)),
        None,
        "an endless rule"
    );
}
