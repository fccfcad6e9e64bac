use super::*;

/// A recurring window created without `starts_at` starts now: in the autumn
/// fold hour (the first 02:20 of 31 October 2027 in Berlin) too.
#[test]
fn a_window_starting_now_in_the_autumn_fold_is_accepted() {
    let now: DateTime<Utc> = "2027-10-31T00:20:00Z".parse().unwrap();
    let when = When {
        rrule: Some("FREQ=WEEKLY;BYDAY=SU".to_string()),
        timezone: Some("Europe/Berlin".to_string()),
        duration_secs: Some(1800),
        ..When::default()
    };
    let mut problems = Problems::new();
    let scheduled = schedule(&mut problems, &when, now);
    problems.into_result().expect("no problems");
    let scheduled = scheduled.expect("a schedule");
    assert_eq!(scheduled.starts_at, now);
    let window = Schedule::from_parts(
        scheduled.starts_at,
        None,
        scheduled.rrule.as_deref(),
        scheduled.timezone.as_deref(),
        scheduled.duration_secs.map(i64::from),
    )
    .unwrap();
    // Open from now, and again a week later at 02:20 winter time.
    let next: Vec<DateTime<Utc>> = window.upcoming(now, 2).iter().map(|s| s.start).collect();
    assert_eq!(next, [now, "2027-11-07T01:20:00Z".parse().unwrap()]);
}
