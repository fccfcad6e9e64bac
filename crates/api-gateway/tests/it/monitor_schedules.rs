//! Issue 12 in the monitor API: heartbeats on a cron schedule in a time
//! zone instead of an interval, and `next_expected_at`.

use crate::common::{spawn_app, TestApp};
use crate::monitor_kinds::{assert_invalid, create, patch, with, MONITORS};
use chrono::{DateTime, Duration, Timelike, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use serde_json::{json, Value};

fn heartbeat() -> Value {
    json!({"name": "job", "type": "heartbeat"})
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str()
        .unwrap_or_else(|| panic!("a time: {v}"))
        .parse()
        .unwrap()
}

/// When a fresh period of the monitor opened: its last edit (or creation).
fn since(m: &Value) -> DateTime<Utc> {
    time(&m["created_at"]).max(time(&m["updated_at"]))
}

async fn stored_schedule(app: &TestApp, id: &Value) -> (Option<String>, Option<String>) {
    use uptime_db::schema::monitors;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .filter(monitors::id.eq(id.as_i64().unwrap()))
        .select((monitors::heartbeat_schedule, monitors::heartbeat_timezone))
        .first(&mut conn)
        .await
        .unwrap()
}

#[tokio::test]
async fn schedules_are_stored_normalised_and_next_expected_at_follows_them() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;

    // An interval heartbeat: the next ping one interval after its start.
    let plain = create(&app, &key, with(heartbeat(), json!({"interval_secs": 600}))).await;
    assert!(plain["schedule"].is_null() && plain["timezone"].is_null());
    assert_eq!(
        time(&plain["next_expected_at"]),
        since(&plain) + Duration::seconds(600)
    );

    // Every five minutes, UTC: fields stored one space apart, no zone stored.
    let every5 = create(
        &app,
        &key,
        with(heartbeat(), json!({"schedule": " */5  * * * *"})),
    )
    .await;
    assert_eq!(every5["schedule"], "*/5 * * * *");
    assert_eq!(every5["timezone"], "UTC");
    assert_eq!(
        stored_schedule(&app, &every5["id"]).await,
        (Some("*/5 * * * *".into()), None)
    );
    let next = time(&every5["next_expected_at"]);
    assert!(next > since(&every5) && next <= since(&every5) + Duration::minutes(5));
    assert_eq!((next.minute() % 5, next.second()), (0, 0), "{next}");

    // 03:00 in Berlin.
    let nightly = create(
        &app,
        &key,
        with(
            heartbeat(),
            json!({"schedule": "0 3 * * *", "timezone": "Europe/Berlin", "timeout_secs": 120}),
        ),
    )
    .await;
    assert_eq!(nightly["timezone"], "Europe/Berlin");
    let expected = uptime_heartbeats::Schedule::parse("0 3 * * *", Some("Europe/Berlin"))
        .unwrap()
        .next_after(since(&nightly))
        .unwrap();
    assert_eq!(time(&nightly["next_expected_at"]), expected);
    // 03:00 in Berlin is 01:00 or 02:00 UTC.
    assert!([1, 2].contains(&expected.hour()), "{expected}");

    // Paused heartbeats and other types expect nothing.
    let paused = patch(&app, &key, &nightly["id"], json!({"active": false})).await;
    assert!(paused["next_expected_at"].is_null());
    let http = create(
        &app,
        &key,
        json!({"name": "site", "type": "http", "target": "https://example.com/"}),
    )
    .await;
    for field in ["schedule", "timezone", "next_expected_at"] {
        assert!(http.get(field).is_some_and(Value::is_null), "{field}");
    }

    // A new schedule is a new definition; null goes back to the interval
    // and drops the zone.
    let version = every5["definition_version"].as_i64().unwrap();
    let hourly = patch(&app, &key, &every5["id"], json!({"schedule": "0 * * * *"})).await;
    assert_eq!(hourly["definition_version"], version + 1);
    let back = patch(
        &app,
        &key,
        &nightly["id"],
        json!({"schedule": null, "active": true}),
    )
    .await;
    assert!(back["schedule"].is_null() && back["timezone"].is_null());
    assert_eq!(stored_schedule(&app, &nightly["id"]).await, (None, None));
    assert_eq!(
        time(&back["next_expected_at"]),
        since(&back) + Duration::seconds(back["interval_secs"].as_i64().unwrap())
    );
    // The interval cannot be set while a schedule stays.
    let req = json!({"interval_secs": 60});
    let (status, body) = app
        .patch(&format!("{MONITORS}/{}", hourly["id"]), &key, req.clone())
        .await;
    assert_invalid(status, &body, "interval_secs", &req);
    // Another type drops the schedule.
    let switched = patch(
        &app,
        &key,
        &hourly["id"],
        json!({"type": "tcp", "target": "example.com:22"}),
    )
    .await;
    assert!(switched["schedule"].is_null());
    assert_eq!(stored_schedule(&app, &hourly["id"]).await, (None, None));
}

#[tokio::test]
async fn schedule_rules_refuse_naming_the_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let http = json!({"name": "site", "type": "http", "target": "https://example.com/"});
    let cases = [
        (
            with(http.clone(), json!({"schedule": "* * * * *"})),
            "schedule",
        ),
        (with(http, json!({"timezone": "UTC"})), "timezone"),
        (with(heartbeat(), json!({"timezone": "UTC"})), "timezone"),
        (
            with(heartbeat(), json!({"schedule": "* * * *"})),
            "schedule",
        ),
        (
            with(heartbeat(), json!({"schedule": "0 0 * * * *"})),
            "schedule",
        ),
        (
            with(heartbeat(), json!({"schedule": "61 * * * *"})),
            "schedule",
        ),
        (
            with(heartbeat(), json!({"schedule": "0 0 31 2 *"})),
            "schedule",
        ),
        (with(heartbeat(), json!({"schedule": "@daily"})), "schedule"),
        (with(heartbeat(), json!({"schedule": "   "})), "schedule"),
        (
            with(
                heartbeat(),
                json!({"schedule": format!("0 0 * * {}", "1,".repeat(125) + "1")}),
            ),
            "schedule",
        ),
        (
            with(
                heartbeat(),
                json!({"schedule": "0 3 * * *", "timezone": "Mars/Olympus"}),
            ),
            "timezone",
        ),
        (
            with(
                heartbeat(),
                json!({"schedule": "0 3 * * *", "timezone": "E".repeat(65)}),
            ),
            "timezone",
        ),
        (
            with(
                heartbeat(),
                json!({"schedule": "0 3 * * *", "interval_secs": 86400}),
            ),
            "interval_secs",
        ),
    ];
    for (req, field) in cases {
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // With a schedule, the grace is not held to the (unused) interval.
    let short = create(
        &app,
        &key,
        with(
            heartbeat(),
            json!({"interval_secs": 10, "timeout_secs": 10}),
        ),
    )
    .await;
    let req = json!({"timeout_secs": 120});
    let (status, body) = app
        .patch(&format!("{MONITORS}/{}", short["id"]), &key, req.clone())
        .await;
    assert_invalid(status, &body, "timeout_secs", &req);
    let m = patch(
        &app,
        &key,
        &short["id"],
        json!({"schedule": "0 3 * * MON-FRI", "timeout_secs": 120}),
    )
    .await;
    assert_eq!(m["timeout_secs"], 120);
}
