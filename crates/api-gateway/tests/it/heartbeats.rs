use crate::check_support::{insert_heartbeat_monitor, insert_monitor, stream_messages};
use crate::common::{spawn_app, TestApp};
use chrono::{DateTime, Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, CheckResultV2, Message};
use uptime_db::schema::monitors;

async fn last_heartbeat_at(app: &TestApp, monitor_id: i64) -> Option<DateTime<Utc>> {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    monitors::table
        .find(monitor_id)
        .select(monitors::last_heartbeat_at)
        .first(&mut conn)
        .await
        .unwrap()
}

/// The check results the gateway published, oldest first.
async fn published_results(app: &TestApp) -> Vec<(Option<String>, CheckResultV2)> {
    stream_messages(&app.state.js, streams::RESULTS_STREAM)
        .await
        .into_iter()
        .map(|(subject, msg_id, payload)| {
            assert_eq!(subject, CheckResultV2::SUBJECT);
            (msg_id, serde_json::from_value(payload).unwrap())
        })
        .collect()
}

#[tokio::test]
async fn a_ping_needs_no_key_stores_the_time_and_publishes_a_passing_result() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'a', true).await;
    assert!(last_heartbeat_at(&app, monitor.id).await.is_none());

    let before = Utc::now() - Duration::seconds(1);
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"status": "ok"}));

    let pinged = last_heartbeat_at(&app, monitor.id)
        .await
        .expect("ping stored");
    assert!(pinged >= before && pinged <= Utc::now(), "{pinged}");

    let results = published_results(&app).await;
    assert_eq!(results.len(), 1);
    let (msg_id, result) = &results[0];
    assert_eq!(
        msg_id.as_deref(),
        Some(result.check_id.to_string().as_str())
    );
    assert_eq!(result.monitor_id, monitor.id);
    assert_eq!(result.trigger.as_str(), "heartbeat");
    assert_eq!(result.outcome, uptime_contracts::CheckOutcome::Pass);
    assert_eq!(result.reporter, "api-gateway");
    assert_eq!(result.definition_version, monitor.definition_version);
    assert!(result.error.is_none() && result.due_at.is_none());
    assert_eq!(
        result.checked_at.timestamp_micros(),
        pinged.timestamp_micros(),
        "the result is the ping the row recorded"
    );
}

#[tokio::test]
async fn post_and_head_ping_too_and_head_has_no_body() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (_, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'b', true).await;
    let url = app.url(&format!("/api/v1/heartbeat/{token}"));

    let res = app.client.post(&url).body("ignored").send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));

    let res = app.client.head(&url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert!(res.bytes().await.unwrap().is_empty());

    // An Authorization header is irrelevant here, even a bad one.
    let res = app
        .client
        .get(&url)
        .bearer_auth("not-a-key")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let results = published_results(&app).await;
    assert_eq!(results.len(), 3);
    let ids: std::collections::HashSet<_> = results.iter().map(|(_, r)| r.check_id).collect();
    assert_eq!(ids.len(), 3, "every ping is its own check");
}

#[tokio::test]
async fn fail_reports_a_failed_check_with_the_clients_message() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'c', true).await;
    let url = app.url(&format!("/api/v1/heartbeat/{token}/fail"));

    let res = app.client.get(&url).send().await.unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.json::<Value>().await.unwrap(), json!({"status": "ok"}));
    let res = app
        .client
        .post(&url)
        .body("  disk full\n")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    let res = app
        .client
        .post(&url)
        .body("x".repeat(5000))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);

    let results = published_results(&app).await;
    let errors: Vec<String> = results
        .iter()
        .map(|(_, r)| {
            assert_eq!(r.outcome, uptime_contracts::CheckOutcome::Fail);
            assert_eq!(r.monitor_id, monitor.id);
            assert_eq!(r.trigger.as_str(), "heartbeat");
            r.error.clone().unwrap()
        })
        .collect();
    assert_eq!(errors[0], "failure reported by the client");
    assert_eq!(errors[1], "failure reported by the client: disk full");
    assert_eq!(
        errors[2],
        format!("failure reported by the client: {}", "x".repeat(1000)),
        "long reports are cut to 1000 characters"
    );

    // Over the API's 64 KiB body limit.
    let res = app
        .client
        .post(&url)
        .body("x".repeat(70 * 1024))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::PAYLOAD_TOO_LARGE);
}

#[tokio::test]
async fn unknown_malformed_and_non_heartbeat_tokens_are_404() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    insert_heartbeat_monitor(&app.state.pool, user_id, 'd', true).await;
    // A token on a non-heartbeat row (which the API never creates) is still no heartbeat.
    let stray = format!("hb_{}", "e".repeat(32));
    insert_monitor(&app.state.pool, user_id, |m| {
        m.heartbeat_token = Some(stray.clone())
    })
    .await;

    for token in [
        format!("hb_{}", "f".repeat(32)),
        stray,
        "hb_short".to_string(),
        format!("hb_{}", "D".repeat(32)),
        "nothing".to_string(),
    ] {
        for suffix in ["", "/fail"] {
            let path = format!("/api/v1/heartbeat/{token}{suffix}");
            let (status, body) = app.call(Method::GET, &path, None, None).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
            assert_eq!(body, json!({"error": "not found"}));
        }
    }
    assert!(published_results(&app).await.is_empty());
}

#[tokio::test]
async fn paused_monitors_accept_pings() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (monitor, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '9', false).await;
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(last_heartbeat_at(&app, monitor.id).await.is_some());
    assert_eq!(published_results(&app).await.len(), 1);
}

#[tokio::test]
async fn other_methods_get_a_json_405() {
    let app = spawn_app().await;
    let (user_id, _) = app.new_user("ops").await;
    let (_, token) = insert_heartbeat_monitor(&app.state.pool, user_id, '1', true).await;
    let (status, body) = app
        .call(
            Method::DELETE,
            &format!("/api/v1/heartbeat/{token}"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    assert!(body["error"].is_string());
}
