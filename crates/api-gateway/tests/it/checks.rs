use crate::check_support::{
    insert_daily, insert_heartbeat_monitor, insert_monitor, insert_result, stream_messages,
};
use crate::common::spawn_app;
use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, DueCheck};

#[tokio::test]
async fn a_manual_check_is_queued_as_a_check_due_with_trigger_manual() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |m| {
        m.kind = uptime_contracts::MonitorKind::Keyword;
        m.keyword = Some("healthy".into());
        m.keyword_type = Some("not_contains".into());
    })
    .await;

    let before = Utc::now();
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{}/check", monitor.id),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["status"], "queued");
    let check_id = body["check_id"].as_str().expect("check_id").to_string();

    let queued = stream_messages(&app.state.js, streams::CHECKS_STREAM).await;
    assert_eq!(queued.len(), 1, "{queued:?}");
    let (subject, msg_id, payload) = &queued[0];
    // A monitor naming no regions: a round of one, in the default region.
    assert_eq!(subject, "uptime.checks.due.v5.default");
    assert_eq!(msg_id.as_deref(), Some(check_id.as_str()));
    let due: DueCheck = serde_json::from_value(payload.clone()).unwrap();
    assert_eq!(due.check_id.to_string(), check_id);
    assert_eq!(due.round_id.to_string(), check_id);
    assert_eq!(due.region, "default");
    assert_eq!(due.monitor_id, monitor.id);
    assert_eq!(due.trigger.as_str(), "manual");
    assert_eq!(due.definition_version, monitor.definition_version);
    assert_eq!(due.interval_secs, monitor.interval_secs as u32);
    assert!(due.due_at >= before - Duration::seconds(1) && due.due_at <= Utc::now());
    assert_eq!(due.spec.kind.as_str(), "keyword");
    assert_eq!(due.spec.target, "https://example.com/health");
    assert_eq!(
        (due.spec.timeout_secs.get(), due.spec.expected_status.get()),
        (7, 204)
    );
    assert_eq!(due.spec.keyword.as_deref(), Some("healthy"));
    assert_eq!(
        due.spec.keyword_type.map(|k| k.as_str()),
        Some("not_contains")
    );
}

#[tokio::test]
async fn a_manual_check_of_a_two_region_monitor_queues_a_round_of_two() {
    let app = crate::common::spawn_app_with(|s| {
        s.regions.known = vec!["default".into(), "eu".into(), "us".into()];
    })
    .await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    {
        use diesel::prelude::*;
        use diesel_async::RunQueryDsl;
        use uptime_db::schema::monitors;
        let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
        diesel::update(monitors::table.find(monitor.id))
            .set(monitors::regions.eq(Some(vec!["eu".to_string(), "us".to_string()])))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{}/check", monitor.id),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let round_id = body["check_id"].as_str().expect("check_id").to_string();

    let mut queued = stream_messages(&app.state.js, streams::CHECKS_STREAM).await;
    queued.sort_by(|a, b| a.0.cmp(&b.0));
    let subjects: Vec<&str> = queued.iter().map(|(s, _, _)| s.as_str()).collect();
    assert_eq!(
        subjects,
        ["uptime.checks.due.v5.eu", "uptime.checks.due.v5.us"]
    );
    let dues: Vec<DueCheck> = queued
        .iter()
        .map(|(_, _, payload)| serde_json::from_value(payload.clone()).unwrap())
        .collect();
    for ((_, msg_id, _), due) in queued.iter().zip(&dues) {
        assert_eq!(due.round_id.to_string(), round_id, "one round");
        assert_eq!(msg_id.as_deref(), Some(due.check_id.to_string().as_str()));
        assert_eq!(due.trigger.as_str(), "manual");
        assert_eq!(
            due.check_id,
            uptime_contracts::check_id_in_round(due.round_id, &due.region, 2)
        );
    }
    assert_ne!(dues[0].check_id, dues[1].check_id);

    // A second request while the round is in flight queues nothing more and
    // names the same round.
    let (status, again) = app
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{}/check", monitor.id),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["check_id"].as_str(), Some(round_id.as_str()));
    assert_eq!(
        stream_messages(&app.state.js, streams::CHECKS_STREAM)
            .await
            .len(),
        2
    );
}

#[tokio::test]
async fn paused_monitors_can_be_checked_on_demand() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |m| m.active = false).await;
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{}/check", monitor.id),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(
        stream_messages(&app.state.js, streams::CHECKS_STREAM)
            .await
            .len(),
        1
    );
}

#[tokio::test]
async fn heartbeat_monitors_are_not_checked_on_demand() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let (monitor, _) = insert_heartbeat_monitor(&app.state.pool, user_id, 'a', true).await;
    let (status, body) = app
        .call(
            Method::POST,
            &format!("/api/v1/monitors/{}/check", monitor.id),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        body,
        json!({"error": "heartbeat monitors are checked by pings"})
    );
    assert!(stream_messages(&app.state.js, streams::CHECKS_STREAM)
        .await
        .is_empty());
}

#[tokio::test]
async fn another_users_monitor_is_not_found_everywhere() {
    let app = spawn_app().await;
    let (alice_id, _) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let monitor = insert_monitor(&app.state.pool, alice_id, |_| {}).await;
    insert_result(&app.state.pool, monitor.id, Utc::now(), "up", "scheduled").await;

    for (method, path) in [
        (
            Method::POST,
            format!("/api/v1/monitors/{}/check", monitor.id),
        ),
        (
            Method::GET,
            format!("/api/v1/monitors/{}/results", monitor.id),
        ),
        (
            Method::GET,
            format!("/api/v1/monitors/{}/uptime/daily", monitor.id),
        ),
        (Method::GET, "/api/v1/monitors/999999/results".to_string()),
        (
            Method::GET,
            "/api/v1/monitors/999999/uptime/daily".to_string(),
        ),
        (Method::POST, "/api/v1/monitors/999999/check".to_string()),
    ] {
        let (status, body) = app.call(method.clone(), &path, Some(&bob), None).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{method} {path}");
        assert_eq!(body, json!({"error": "not found"}));
    }
    assert!(stream_messages(&app.state.js, streams::CHECKS_STREAM)
        .await
        .is_empty());

    let (status, _) = app
        .call(
            Method::GET,
            &format!("/api/v1/monitors/{}/results", monitor.id),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn results_page_newest_first_with_a_cursor() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let other = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let t0 = Utc::now() - Duration::hours(1);
    let statuses = ["up", "degraded", "down", "up", "up", "down", "up"];
    let mut ids = Vec::new();
    for (i, status) in statuses.iter().enumerate() {
        let trigger = if i == 3 { "manual" } else { "scheduled" };
        ids.push(
            insert_result(
                &app.state.pool,
                monitor.id,
                t0 + Duration::minutes(i as i64),
                status,
                trigger,
            )
            .await,
        );
        // Another monitor's results interleave in the table but never show up.
        insert_result(&app.state.pool, other.id, t0, "up", "scheduled").await;
    }
    ids.reverse();

    let path = format!("/api/v1/monitors/{}/results", monitor.id);
    let (status, first) = app.get(&format!("{path}?limit=3"), &key).await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["monitor_id"], monitor.id);
    assert_eq!(result_ids(&first), ids[0..3]);
    let newest = &first["results"][0];
    assert_eq!(newest["status"], "up");
    assert_eq!(newest["trigger"], "scheduled");
    assert_eq!(newest["latency_ms"], 120);
    assert_eq!(newest["http_status"], 200);
    assert!(newest["error"].is_null());
    assert!(newest["check_id"].is_string());
    assert!(newest["checked_at"].as_str().unwrap().ends_with('Z'));
    assert!(newest.as_object().unwrap().contains_key("ssl_expires_at"));
    let down = &first["results"][1];
    assert_eq!(down["status"], "down");
    assert_eq!(down["error"], "expected status 200, got 500");

    let cursor = first["next_cursor"]
        .as_str()
        .expect("more pages")
        .to_string();
    let (_, second) = app
        .get(&format!("{path}?limit=3&before={cursor}"), &key)
        .await;
    assert_eq!(result_ids(&second), ids[3..6]);
    assert_eq!(second["results"][0]["trigger"], "manual");
    let cursor = second["next_cursor"]
        .as_str()
        .expect("one more page")
        .to_string();
    let (_, last) = app
        .get(&format!("{path}?limit=3&before={cursor}"), &key)
        .await;
    assert_eq!(result_ids(&last), ids[6..]);
    assert!(last["next_cursor"].is_null());

    // The default page holds all seven; an exact fit has no next page.
    let (_, all) = app.get(&path, &key).await;
    assert_eq!(result_ids(&all), ids);
    assert!(all["next_cursor"].is_null());
    let (_, exact) = app.get(&format!("{path}?limit=7"), &key).await;
    assert!(exact["next_cursor"].is_null());
}

#[tokio::test]
async fn results_of_a_monitor_without_checks_are_empty() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let (status, body) = app
        .get(&format!("/api/v1/monitors/{}/results", monitor.id), &key)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body,
        json!({"monitor_id": monitor.id, "results": [], "next_cursor": null})
    );
}

#[tokio::test]
async fn bad_limits_and_cursors_are_400() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/results", monitor.id);
    for query in [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=abc",
        "before=nonsense",
        "before=1",
    ] {
        let (status, body) = app.get(&format!("{path}?{query}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body["error"].is_string(), "{body}");
    }
    let (_, body) = app.get(&format!("{path}?before=nonsense"), &key).await;
    assert_eq!(body["details"][0]["field"], "before");
    for query in ["limit=1", "limit=100"] {
        assert_eq!(
            app.get(&format!("{path}?{query}"), &key).await.0,
            StatusCode::OK,
            "{query}"
        );
    }
}

#[tokio::test]
async fn daily_uptime_has_one_entry_per_utc_day_ending_today() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let today = Utc::now().date_naive();
    let day = |ago: u64| today - chrono::Days::new(ago);
    // up_checks counts up and degraded checks alike (the recorder's rollup).
    insert_daily(&app.state.pool, monitor.id, today, 4, 3).await;
    insert_daily(&app.state.pool, monitor.id, day(2), 3, 1).await;
    insert_daily(&app.state.pool, monitor.id, day(29), 10, 0).await;
    insert_daily(&app.state.pool, monitor.id, day(30), 5, 5).await; // outside the default window

    let path = format!("/api/v1/monitors/{}/uptime/daily", monitor.id);
    let (status, body) = app.get(&path, &key).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["monitor_id"], monitor.id);
    assert_eq!(body["days"], 30);
    let daily = body["daily"].as_array().unwrap();
    assert_eq!(daily.len(), 30);
    assert_eq!(daily[0]["date"], day(29).to_string());
    assert_eq!(daily[29]["date"], today.to_string());
    let dates: Vec<&str> = daily.iter().map(|d| d["date"].as_str().unwrap()).collect();
    let mut sorted = dates.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(dates, sorted, "oldest first, no day twice");

    assert_eq!(entry(daily, 29), (75.0, 4));
    assert_eq!(entry(daily, 27).1, 3);
    assert!((entry(daily, 27).0 - 100.0 / 3.0).abs() < 1e-9);
    assert_eq!(entry(daily, 0), (0.0, 10));
    assert_eq!(entry(daily, 28), (100.0, 0), "a day without checks is 100%");
    let total: i64 = daily
        .iter()
        .map(|d| d["total_checks"].as_i64().unwrap())
        .sum();
    assert_eq!(total, 17);

    let (_, one) = app.get(&format!("{path}?days=1"), &key).await;
    assert_eq!(one["days"], 1);
    assert_eq!(one["daily"].as_array().unwrap().len(), 1);
    assert_eq!(one["daily"][0]["date"], today.to_string());
    let (_, year) = app.get(&format!("{path}?days=365"), &key).await;
    let year = year["daily"].as_array().unwrap();
    assert_eq!(year.len(), 365);
    assert_eq!(year[365 - 31]["total_checks"], 5);
}

#[tokio::test]
async fn daily_uptime_days_out_of_range_are_400() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let monitor = insert_monitor(&app.state.pool, user_id, |_| {}).await;
    let path = format!("/api/v1/monitors/{}/uptime/daily", monitor.id);
    for query in ["days=0", "days=366", "days=-5", "days=abc", "days=1.5"] {
        let (status, body) = app.get(&format!("{path}?{query}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body["error"].is_string());
    }
}

fn result_ids(page: &Value) -> Vec<i64> {
    page["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_i64().unwrap())
        .collect()
}

fn entry(daily: &[Value], index: usize) -> (f64, i64) {
    (
        daily[index]["percentage"].as_f64().unwrap(),
        daily[index]["total_checks"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn the_openapi_document_describes_checks_and_heartbeats() {
    let app = spawn_app().await;
    let res = app
        .client
        .get(app.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let doc: Value = res.json().await.unwrap();
    let paths = &doc["paths"];
    assert!(paths["/api/v1/monitors/{id}/check"]["post"]["responses"]["202"].is_object());
    assert!(paths["/api/v1/monitors/{id}/results"]["get"].is_object());
    assert!(paths["/api/v1/monitors/{id}/uptime/daily"]["get"].is_object());
    for method in ["get", "head", "post"] {
        assert!(
            paths["/api/v1/heartbeat/{token}"][method].is_object(),
            "{method}"
        );
        assert!(
            paths["/api/v1/heartbeat/{token}/fail"][method].is_object(),
            "{method}"
        );
    }
    assert!(
        paths["/api/v1/heartbeat/{token}"]["get"]
            .get("security")
            .is_none(),
        "heartbeats need no key"
    );
    let schemas = &doc["components"]["schemas"];
    for schema in [
        "CheckQueued",
        "CheckResultsPage",
        "CheckResultResponse",
        "DailyUptimeResponse",
        "DailyUptimeEntry",
        "HeartbeatAccepted",
    ] {
        assert!(schemas[schema].is_object(), "{schema} missing");
    }
}
