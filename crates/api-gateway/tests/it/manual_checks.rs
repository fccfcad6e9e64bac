//! At most one on-demand check in flight per monitor.

use crate::check_support::{insert_monitor, stream_messages};
use crate::common::spawn_app_with;
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};
use uptime_contracts::streams;
use uptime_db::schema::check_results;

#[tokio::test]
async fn a_second_check_while_one_is_in_flight_returns_the_same_check() {
    let app = spawn_app_with(|_| {}).await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let other = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/check", monitor.id);

    let (status, first) = app.post(&path, &key, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    let (status, second) = app.post(&path, &key, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{second}");
    assert_eq!(second, first, "the check in flight, not a new one");
    assert_eq!(
        stream_messages(&app.state.js, streams::CHECKS_STREAM)
            .await
            .len(),
        1,
        "one check queued"
    );
    // Another monitor has its own slot.
    let (_, third) = app
        .post(
            &format!("/api/v1/monitors/{}/check", other.id),
            &key,
            json!({}),
        )
        .await;
    assert_ne!(third["check_id"], first["check_id"]);

    // Once its result is recorded, a new check may be queued.
    let check_id: uuid::Uuid = first["check_id"].as_str().unwrap().parse().unwrap();
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::insert_into(check_results::table)
        .values((
            check_results::check_id.eq(check_id),
            check_results::monitor_id.eq(monitor.id),
            check_results::trigger.eq("manual"),
            check_results::status.eq("up"),
            check_results::checked_at.eq(chrono::Utc::now()),
            check_results::slot_at.eq(chrono::Utc::now()),
            check_results::reporter.eq("checker-test"),
        ))
        .execute(&mut conn)
        .await
        .unwrap();
    let (status, next) = app.post(&path, &key, json!({})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_ne!(next["check_id"], first["check_id"]);
}

#[tokio::test]
async fn a_lost_check_stops_blocking_after_the_in_flight_window() {
    let app = spawn_app_with(|s| s.manual_checks.in_flight_secs = 1).await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/check", monitor.id);
    let (_, first) = app.post(&path, &key, json!({})).await;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let (status, next) = app.post(&path, &key, json!({})).await;
        assert_eq!(status, StatusCode::ACCEPTED);
        if next["check_id"] != first["check_id"] {
            break;
        }
        assert!(Instant::now() < deadline, "the lost check blocks forever");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
