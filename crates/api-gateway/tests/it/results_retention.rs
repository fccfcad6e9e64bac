//! Results expire with their day partitions and deleted monitors leave theirs
//! behind unseen: what the API shows meanwhile.

use crate::check_support::{insert_daily, insert_monitor, insert_result};
use crate::common::spawn_app;
use chrono::{Duration, Utc};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_db::results::partitions;

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

async fn results_of(app: &crate::common::TestApp, monitor_id: i64) -> i64 {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query("SELECT count(*) AS n FROM check_results WHERE monitor_id = $1")
        .bind::<diesel::sql_types::BigInt, _>(monitor_id)
        .get_result::<Count>(&mut conn)
        .await
        .unwrap()
        .n
}

/// Drops every day partition of `check_results` (and empties the default
/// partition), as retention does once they are all past `results_days`.
async fn drop_every_day_partition(app: &crate::common::TestApp) -> usize {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let layout = partitions::layout(&mut conn).await.unwrap();
    for day in &layout.days {
        assert!(partitions::drop_partition(&mut conn, *day).await.unwrap());
    }
    partitions::expire_from_default(&mut conn, Utc::now() + Duration::days(3650))
        .await
        .unwrap();
    layout.days.len()
}

#[tokio::test]
async fn daily_uptime_is_served_from_rollups_after_the_raw_results_are_dropped() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let now = Utc::now();
    let today = now.date_naive();
    for (checked_at, status) in [
        (now - Duration::days(1), "up"),
        (now - Duration::days(1) + Duration::minutes(1), "down"),
        (now - Duration::minutes(1), "up"),
    ] {
        insert_result(&app.state.pool, monitor.id, checked_at, status, "scheduled").await;
    }
    // The recorder's rollup of the same checks.
    insert_daily(&app.state.pool, monitor.id, today, 1, 1).await;
    let yesterday = (now - Duration::days(1)).date_naive();
    insert_daily(&app.state.pool, monitor.id, yesterday, 2, 1).await;

    let results = format!("/api/v1/monitors/{}/results", monitor.id);
    let daily = format!("/api/v1/monitors/{}/uptime/daily?days=7", monitor.id);
    let (status, page) = app.get(&results, &key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["results"].as_array().unwrap().len(), 3);
    let (status, before) = app.get(&daily, &key).await;
    assert_eq!(status, StatusCode::OK, "{before}");
    let total: i64 = before["daily"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["total_checks"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 3, "{before}");

    assert!(drop_every_day_partition(&app).await > 0);
    assert_eq!(
        results_of(&app, monitor.id).await,
        0,
        "the raw results are gone"
    );

    let (status, page) = app.get(&results, &key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(
        page,
        json!({"monitor_id": monitor.id, "results": [], "next_cursor": null})
    );
    let (status, after) = app.get(&daily, &key).await;
    assert_eq!(status, StatusCode::OK, "{after}");
    assert_eq!(after, before, "daily uptime comes from the rollups alone");
}

#[tokio::test]
async fn deleting_a_monitor_never_touches_its_results_and_the_api_stops_showing_them() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let now = Utc::now();
    for minute in 0..20 {
        insert_result(
            &app.state.pool,
            monitor.id,
            now - Duration::minutes(minute),
            "up",
            "scheduled",
        )
        .await;
    }
    insert_daily(&app.state.pool, monitor.id, now.date_naive(), 20, 20).await;
    let path = format!("/api/v1/monitors/{}", monitor.id);

    // Someone holds check_results locked: a delete that cascaded into its
    // results (millions of rows, for a busy monitor) would wait behind it.
    // The delete must not even need that table.
    let mut holder = AsyncPgConnection::establish(&app.env.db.url).await.unwrap();
    diesel::sql_query("BEGIN")
        .execute(&mut holder)
        .await
        .unwrap();
    diesel::sql_query("LOCK TABLE check_results IN ACCESS EXCLUSIVE MODE")
        .execute(&mut holder)
        .await
        .unwrap();
    // A deadline, not a timing: a delete waiting on the lock never answers.
    let (status, body) =
        tokio::time::timeout(std::time::Duration::from_secs(30), app.delete(&path, &key))
            .await
            .expect("the delete answers while check_results is locked");
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    diesel::sql_query("ROLLBACK")
        .execute(&mut holder)
        .await
        .unwrap();

    // Gone from the API at once.
    for gone in [
        path.clone(),
        format!("{path}/results"),
        format!("{path}/uptime/daily"),
    ] {
        let (status, body) = app.get(&gone, &key).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{gone}: {body}");
    }
    // Ids are never reused, so no later monitor can see them either.
    let (status, created) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "next", "type": "http", "target": "https://example.com/health"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_ne!(created["id"], json!(monitor.id));
    let (_, page) = app
        .get(&format!("/api/v1/monitors/{}/results", created["id"]), &key)
        .await;
    assert_eq!(page["results"], Value::Array(vec![]));

    // The rows themselves stay until their day's partition is dropped.
    assert_eq!(results_of(&app, monitor.id).await, 20);
    drop_every_day_partition(&app).await;
    assert_eq!(results_of(&app, monitor.id).await, 0);
}

#[tokio::test]
async fn results_pages_walk_back_across_days_and_partitions() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let now = Utc::now();
    // Newest first: a result slotted a little ahead (a checker's clock), then
    // back through today, the first page's window, and weeks past it (days
    // without a partition of their own land in the default partition).
    let mut ids = Vec::new();
    for ago in [
        Duration::minutes(-2),
        Duration::zero(),
        Duration::hours(30),
        Duration::days(3),
        Duration::days(20),
        Duration::days(20),
        Duration::days(45),
        Duration::days(80),
    ] {
        ids.push(insert_result(&app.state.pool, monitor.id, now - ago, "up", "scheduled").await);
    }
    // Equal slots (the two 20 days ago) come newest id first.
    ids.swap(4, 5);

    let path = format!("/api/v1/monitors/{}/results", monitor.id);
    let mut seen = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..ids.len() {
        let url = match &cursor {
            Some(c) => format!("{path}?limit=3&before={c}"),
            None => format!("{path}?limit=3"),
        };
        let (status, page) = app.get(&url, &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        seen.extend(
            page["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["id"].as_i64().unwrap()),
        );
        match page["next_cursor"].as_str() {
            Some(next) => cursor = Some(next.to_string()),
            None => break,
        }
    }
    assert_eq!(seen, ids);
    let (_, all) = app.get(&format!("{path}?limit=100"), &key).await;
    let all: Vec<i64> = all["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect();
    assert_eq!(all, ids);
}

#[tokio::test]
async fn a_cursor_from_before_partitioning_is_a_clear_400() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/results", monitor.id);
    // What `next_cursor` used to be: base64url of `id:<id>`.
    for old in ["aWQ6NDI", "aWQ6MTIzNDU2Nzg5MDEyMw"] {
        let (status, body) = app.get(&format!("{path}?before={old}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["details"][0]["field"], "before", "{body}");
        let message = body["details"][0]["message"].as_str().unwrap();
        assert!(message.contains("request the first page again"), "{body}");
    }
    // Limit and cursor problems are reported together.
    let (status, body) = app
        .get(&format!("{path}?limit=0&before=nonsense"), &key)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["details"].as_array().unwrap().len(), 2, "{body}");
}
