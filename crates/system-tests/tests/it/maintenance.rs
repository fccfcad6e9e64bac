//! Maintenance windows, end to end: the API, the recorder's sweep (driven
//! here by the test with its own clock: the stack's sweeper is set to wait
//! longer than the test), the scheduler's skipped slots, the recorder's held
//! alerts and the notifier's deliveries to a real webhook receiver.

use crate::common::{check_now, marker_alert, results, wait_status, webhook_contact, Receiver};
use chrono::{DateTime, Duration as Span, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::target::TargetServer;

/// A stack whose maintenance sweep runs only when the test calls it.
async fn stack() -> Stack {
    Stack::start(StackOptions {
        maintenance_sweep_interval_ms: 3_600_000,
        ..StackOptions::default()
    })
    .await
    .unwrap()
}

/// One sweep round at `now`.
async fn sweep(stack: &Stack, now: DateTime<Utc>) -> recorder::maintenance::SweepOutcome {
    let out = recorder::maintenance::sweep_once(&stack.env.db.pool, now)
        .await
        .unwrap();
    assert!(out.swept, "nobody else sweeps");
    out
}

async fn create_window(stack: &Stack, key: &str, body: Value) -> Value {
    let (s, w) = stack
        .call(Method::POST, "/api/v1/maintenance-windows", key, Some(body))
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{w}");
    w
}

async fn create_monitor(stack: &Stack, key: &str, body: Value) -> i64 {
    let (s, m) = stack
        .call(Method::POST, "/api/v1/monitors", key, Some(body))
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    m["id"].as_i64().unwrap()
}

fn at(text: &str) -> DateTime<Utc> {
    text.parse().unwrap()
}

#[tokio::test]
async fn a_silence_window_holds_alerts_and_sends_exactly_one_at_its_end_for_a_monitor_still_down() {
    let stack = stack().await;
    let key = stack.new_user("ops").await.unwrap();
    let receiver = Receiver::start().await;
    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let (still_down, flaky) = (TargetServer::start().await, TargetServer::start().await);
    let monitor = |name: &str, target: &TargetServer| {
        json!({"name": name, "type": "http", "target": target.url("/"), "interval_secs": 3600,
               "alert_contact_ids": [contact["id"]]})
    };
    let down_id = create_monitor(&stack, &key, monitor("still down", &still_down)).await;
    let flaky_id = create_monitor(&stack, &key, monitor("back inside", &flaky)).await;
    wait_status(&stack, &key, down_id, "up").await;
    wait_status(&stack, &key, flaky_id, "up").await;

    let starts = Utc::now() - Span::seconds(1);
    let ends = starts + Span::hours(1);
    let window = create_window(
        &stack,
        &key,
        json!({"name": "deploy", "monitor_ids": [down_id, flaky_id], "effect": "silence",
               "starts_at": starts, "ends_at": ends}),
    )
    .await;
    assert_eq!(window["open_now"], true, "{window}");
    let opened = sweep(&stack, Utc::now()).await;
    assert_eq!((opened.spans_open, opened.markers_changed), (1, 2));

    // Inside the window: one goes down and stays down, one goes down and comes back.
    still_down.set_status(503);
    flaky.set_status(503);
    check_now(&stack, &key, down_id).await;
    check_now(&stack, &key, flaky_id).await;
    wait_status(&stack, &key, down_id, "down").await;
    wait_status(&stack, &key, flaky_id, "down").await;
    flaky.set_status(200);
    check_now(&stack, &key, flaky_id).await;
    wait_status(&stack, &key, flaky_id, "up").await;
    let stored = results(&stack, &key, down_id).await;
    assert_eq!(stored[0]["status"], "down");
    assert_eq!(stored[0]["in_maintenance"], true, "{}", stored[0]);

    // Nothing reached the receiver about either but their first `up`.
    marker_alert(&stack, &key, &contact, &receiver).await;
    assert_eq!(receiver.events_of(down_id), ["monitor.up"]);
    assert_eq!(receiver.events_of(flaky_id), ["monitor.up"]);

    // The window ends (the sweep's clock past its end): one alert, then.
    let closed = sweep(&stack, ends + Span::seconds(1)).await;
    assert_eq!(closed.spans_closed, 1);
    assert_eq!(closed.released.len(), 1, "only the monitor still down");
    let released = stack
        .eventually(Duration::from_secs(20), || async {
            receiver
                .bodies
                .lock()
                .unwrap()
                .iter()
                .find(|b| b["monitor"]["id"] == down_id && b["event"] == "monitor.down")
                .cloned()
        })
        .await
        .unwrap_or_else(|| panic!("no released alert: {:?}", receiver.events()));
    assert_eq!(released["incident"]["alert"], "released", "{released}");
    // Another round finds nothing more to release (the event id is the
    // incident's: a retried round would write the same one).
    assert!(sweep(&stack, ends + Span::seconds(2))
        .await
        .released
        .is_empty());
    marker_alert(&stack, &key, &contact, &receiver).await;
    assert_eq!(receiver.events_of(down_id), ["monitor.up", "monitor.down"]);
    assert_eq!(
        receiver.events_of(flaky_id),
        ["monitor.up"],
        "nothing at all"
    );

    // Uptime leaves the window out: only the first (passing) check counts,
    // and the window's time is reported beside it.
    for id in [down_id, flaky_id] {
        let (_, body) = stack
            .call(
                Method::GET,
                &format!("/api/v1/monitors/{id}/uptime/daily?days=1"),
                &key,
                None,
            )
            .await
            .unwrap();
        let today = &body["daily"][0];
        assert_eq!(today["total_checks"], 1, "{body}");
        assert_eq!(today["percentage"], 100.0, "{body}");
        assert!(today["maintenance_secs"].as_i64().unwrap() >= 1, "{body}");
    }
}

#[tokio::test]
async fn a_pause_window_runs_no_checks_and_its_label_selector_takes_a_monitor_created_or_relabelled_after_it(
) {
    let stack = stack().await;
    let key = stack.new_user("ops").await.unwrap();
    create_window(
        &stack,
        &key,
        json!({"name": "db upgrade", "label_selector": {"team": "payments"}, "effect": "pause",
               "duration_minutes": 60}),
    )
    .await;
    sweep(&stack, Utc::now()).await;

    let (paused, control) = (TargetServer::start().await, TargetServer::start().await);
    let paused_id = create_monitor(
        &stack,
        &key,
        json!({"name": "api", "type": "http", "target": paused.url("/"), "interval_secs": 10,
               "labels": {"team": "payments"}}),
    )
    .await;
    let control_id = create_monitor(
        &stack,
        &key,
        json!({"name": "control", "type": "http", "target": control.url("/"), "interval_secs": 10}),
    )
    .await;
    // A monitor relabelled into the window's selector joins it as well.
    let relabelled_id = create_monitor(
        &stack,
        &key,
        json!({"name": "worker", "type": "http", "target": control.url("/worker"),
               "interval_secs": 3600}),
    )
    .await;
    let (s, relabelled) = stack
        .call(
            Method::PATCH,
            &format!("/api/v1/monitors/{relabelled_id}"),
            &key,
            Some(json!({"labels": {"team": "payments"}})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::OK, "{relabelled}");
    // Created (or relabelled) after the window opened, they were marked in
    // their own transactions: the next round finds nothing to change.
    let joined = sweep(&stack, Utc::now()).await;
    assert_eq!(joined.markers_changed, 0, "marked when written: {joined:?}");
    // Two scheduled checks of the control monitor: the paused one's first
    // slots have passed too (both are due at once when created).
    wait_status(&stack, &key, control_id, "up").await;
    stack
        .eventually(Duration::from_secs(40), || async {
            (results(&stack, &key, control_id).await.len() >= 2).then_some(())
        })
        .await
        .expect("the control monitor is checked on");
    assert_eq!(
        paused.hits(),
        0,
        "no check while paused, not even the first"
    );
    assert!(results(&stack, &key, paused_id).await.is_empty());
}

/// The next occurrences of a weekly 03:00 in Europe/Berlin across the DST
/// change of 28 March 2027, by python-dateutil when python3 has it (an
/// independent RRULE implementation), else as it printed them (dateutil
/// 2.9.0, `rrulestr(RULE, dtstart=datetime(2027, 3, 14, 3,
/// tzinfo=ZoneInfo("Europe/Berlin")))`, first five, in UTC).
fn dateutil_occurrences() -> Vec<String> {
    let pinned = [
        "2027-03-14T02:00:00Z",
        "2027-03-21T02:00:00Z",
        "2027-03-28T01:00:00Z",
        "2027-04-04T01:00:00Z",
        "2027-04-11T01:00:00Z",
    ]
    .map(String::from)
    .to_vec();
    let script = "from dateutil.rrule import rrulestr\n\
        from datetime import datetime, timezone\n\
        from zoneinfo import ZoneInfo\n\
        import itertools\n\
        r = rrulestr('FREQ=WEEKLY;BYDAY=SU;BYHOUR=3', dtstart=datetime(2027, 3, 14, 3, tzinfo=ZoneInfo('Europe/Berlin')))\n\
        for d in itertools.islice(r, 5): print(d.astimezone(timezone.utc).strftime('%Y-%m-%dT%H:%M:%SZ'))\n";
    match std::process::Command::new("python3")
        .args(["-c", script])
        .output()
    {
        Ok(out) if out.status.success() => {
            let computed: Vec<String> = String::from_utf8_lossy(&out.stdout)
                .lines()
                .map(String::from)
                .collect();
            assert_eq!(computed, pinned, "dateutil agrees with the pinned instants");
            computed
        }
        _ => pinned,
    }
}

#[tokio::test]
async fn a_weekly_berlin_window_opens_at_the_right_instant_across_the_dst_change() {
    let stack = stack().await;
    let key = stack.new_user("ops").await.unwrap();
    let target = TargetServer::start().await;
    let id = create_monitor(
        &stack,
        &key,
        json!({"name": "db", "type": "http", "target": target.url("/"), "interval_secs": 3600}),
    )
    .await;
    let window = create_window(
        &stack,
        &key,
        json!({"name": "sunday", "monitor_ids": [id], "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=3",
               "timezone": "Europe/Berlin", "duration_secs": 3600,
               "starts_at": "2027-03-14T02:00:00Z"}),
    )
    .await;
    let next: Vec<String> = window["next_occurrences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            at(o["starts_at"].as_str().unwrap())
                .format("%Y-%m-%dT%H:%M:%SZ")
                .to_string()
        })
        .collect();
    assert_eq!(next, dateutil_occurrences(), "{window}");

    let marker = |stack: &Stack| {
        let pool = stack.env.db.pool.clone();
        async move {
            use diesel::prelude::*;
            use diesel_async::RunQueryDsl;
            use uptime_db::schema::monitors;
            let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
            monitors::table
                .find(id)
                .select(monitors::maintenance_effect)
                .first::<Option<String>>(&mut conn)
                .await
                .unwrap()
        }
    };
    // 03:00 in Berlin on the day summer time starts is 01:00 UTC, not 02:00.
    sweep(&stack, at("2027-03-28T00:59:59Z")).await;
    assert_eq!(marker(&stack).await, None, "a second early");
    sweep(&stack, at("2027-03-28T01:00:00Z")).await;
    assert_eq!(marker(&stack).await.as_deref(), Some("silence"));
    sweep(&stack, at("2027-03-28T01:59:59Z")).await;
    assert_eq!(marker(&stack).await.as_deref(), Some("silence"));
    sweep(&stack, at("2027-03-28T02:00:00Z")).await;
    assert_eq!(marker(&stack).await, None, "an hour long");
}

#[tokio::test]
async fn bad_windows_are_a_400_naming_the_field() {
    let stack = stack().await;
    let key = stack.new_user("ops").await.unwrap();
    for (body, field) in [
        (json!({"name": "x", "duration_minutes": 5}), "monitor_ids"),
        (
            json!({"name": "x", "monitor_ids": [999999], "duration_minutes": 5}),
            "monitor_ids",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "duration_minutes": 0}),
            "duration_minutes",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "rrule": "FREQ=SOMETIMES", "duration_secs": 600}),
            "rrule",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "rrule": "FREQ=DAILY", "duration_secs": 600, "timezone": "Mars/Olympus"}),
            "timezone",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "rrule": "FREQ=MINUTELY", "duration_secs": 60}),
            "rrule",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "rrule": "FREQ=DAILY"}),
            "duration_secs",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "starts_at": "2026-01-01T00:00:00Z", "ends_at": "2025-01-01T00:00:00Z"}),
            "ends_at",
        ),
        (
            json!({"name": "x", "label_selector": {"a": "b"}, "effect": "nap", "duration_minutes": 5}),
            "effect",
        ),
        (
            json!({"name": "", "label_selector": {"a": "b"}, "duration_minutes": 5}),
            "name",
        ),
    ] {
        let (s, e) = stack
            .call(
                Method::POST,
                "/api/v1/maintenance-windows",
                &key,
                Some(body.clone()),
            )
            .await
            .unwrap();
        assert_eq!(s, StatusCode::BAD_REQUEST, "{body} -> {e}");
        assert!(e.to_string().contains(field), "{body} -> {e}");
    }
}
