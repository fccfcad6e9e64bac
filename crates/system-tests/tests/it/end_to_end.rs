//! The whole pipeline, end to end: API → scheduler → checker → recorder →
//! notifier, against real PostgreSQL, real NATS JetStream and real HTTP
//! targets on loopback.

use crate::common::{
    check_now, marker_alert, monitor, results, wait_status, webhook_contact, Receiver,
};
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use uptime_testkit::target::TargetServer;

/// Today's entry of the monitor's daily uptime.
async fn today(stack: &Stack, key: &str, id: i64) -> Value {
    let (_, body) = stack
        .call(
            Method::GET,
            &format!("/api/v1/monitors/{id}/uptime/daily?days=1"),
            key,
            None,
        )
        .await
        .unwrap();
    body["daily"][0].clone()
}

#[tokio::test]
async fn a_monitor_goes_down_and_up_and_each_change_alerts_once() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let target = TargetServer::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();

    let contact = webhook_contact(&stack, &key, &receiver.url).await;
    let (s, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(json!({"name": "target", "type": "http", "target": target.url("/"), "interval_secs": 60,
                         "confirmation_count": 2, "alert_contact_ids": [contact["id"]]})),
        )
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let id = m["id"].as_i64().unwrap();
    assert_eq!(m["status"], "pending");

    // A new monitor is checked at once.
    let up = wait_status(&stack, &key, id, "up").await;
    assert!(up["last_checked_at"].is_string());

    // One failure is not enough with confirmation_count 2.
    target.set_status(503);
    let first = check_now(&stack, &key, id).await;
    stack
        .eventually(Duration::from_secs(10), || async {
            results(&stack, &key, id)
                .await
                .iter()
                .any(|r| r["check_id"] == first.as_str())
                .then_some(())
        })
        .await
        .expect("first failure recorded");
    let after_one = monitor(&stack, &key, id).await;
    assert_eq!(after_one["status"], "up");
    assert_eq!(after_one["consecutive_failures"], 1);

    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "down").await;

    target.set_status(200);
    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "up").await;

    let got = stack
        .eventually(Duration::from_secs(15), || async {
            let events = receiver.events_of(id);
            (events.iter().filter(|e| *e == "monitor.up").count() >= 2
                && events.contains(&"monitor.down".to_string()))
            .then_some(events)
        })
        .await
        .unwrap_or_else(|| panic!("alerts: {:?}", receiver.events()));
    // Count exactly once a later alert to the same contact has arrived: a
    // duplicate raised before it would have arrived before it.
    marker_alert(&stack, &key, &contact, &receiver).await;
    let events = receiver.events_of(id);
    assert_eq!(
        events.iter().filter(|e| *e == "monitor.down").count(),
        1,
        "{events:?}"
    );
    // pending→up and down→up.
    assert_eq!(
        events.iter().filter(|e| *e == "monitor.up").count(),
        2,
        "{events:?} (first seen {got:?})"
    );

    let down = receiver
        .bodies
        .lock()
        .unwrap()
        .iter()
        .find(|b| b["event"] == "monitor.down")
        .cloned()
        .unwrap();
    assert_eq!(down["monitor"]["id"], id);
    assert_eq!(down["previous_status"], "up");
    assert_eq!(down["status"], "down");
    assert_eq!(down["check"]["http_status"], 503);
}

#[tokio::test]
async fn a_check_in_flight_while_its_monitor_is_edited_does_not_move_the_new_state() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let old_target = TargetServer::start().await;
    let new_target = TargetServer::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (_, contact) = stack
        .call(
            Method::POST,
            "/api/v1/alert-contacts",
            &key,
            Some(json!({"name": "hook", "type": "webhook", "value": receiver.url})),
        )
        .await
        .unwrap();
    let (_, m) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(
                json!({"name": "t", "type": "http", "target": old_target.url("/"),
                         "interval_secs": 3600, "alert_contact_ids": [contact["id"]]}),
            ),
        )
        .await
        .unwrap();
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;

    // The old target starts failing, slowly: the check below is still
    // waiting for it when the monitor moves to the new target.
    old_target.set_status(500);
    // Seconds of margin: the edit below must land while the check waits.
    old_target.set_delay(Duration::from_secs(5));
    let hits = old_target.hits();
    let in_flight = check_now(&stack, &key, id).await;
    stack
        .eventually(Duration::from_secs(10), || async {
            (old_target.hits() > hits).then_some(())
        })
        .await
        .expect("the check reached the old target");
    let (status, moved) = stack
        .call(
            Method::PATCH,
            &format!("/api/v1/monitors/{id}"),
            &key,
            Some(json!({"target": new_target.url("/")})),
        )
        .await
        .unwrap();
    assert_eq!(status, StatusCode::OK, "{moved}");
    assert_eq!(moved["definition_version"], 2, "{moved}");
    assert_eq!(moved["status"], "pending");

    // The old target's failure is stored, as history of version 1...
    let stale = stack
        .eventually(Duration::from_secs(30), || async {
            results(&stack, &key, id)
                .await
                .into_iter()
                .find(|r| r["check_id"] == in_flight.as_str())
        })
        .await
        .expect("the in-flight check's result is stored");
    assert_eq!(stale["status"], "down", "{stale}");
    assert_eq!(stale["definition_version"], 1, "{stale}");
    // ...and, recorded in the same transaction as any state change, it
    // moved nothing: the new target has not been checked yet.
    let now = monitor(&stack, &key, id).await;
    assert_eq!(now["status"], "pending", "{now}");
    assert_eq!(now["consecutive_failures"], 0, "{now}");

    check_now(&stack, &key, id).await;
    wait_status(&stack, &key, id, "up").await;
    // Alerts go out per contact in order: by the second `monitor.up` a
    // `monitor.down` raised before it would have arrived.
    let events = stack
        .eventually(Duration::from_secs(15), || async {
            let events = receiver.events();
            (events.iter().filter(|e| *e == "monitor.up").count() >= 2).then_some(events)
        })
        .await
        .unwrap_or_else(|| panic!("alerts: {:?}", receiver.events()));
    assert!(
        !events.contains(&"monitor.down".to_string()),
        "the old target's failure alerted: {events:?}"
    );
}

#[tokio::test]
async fn an_on_demand_check_is_stored_with_trigger_manual() {
    let stack = Stack::start(StackOptions {
        notifier: false,
        ..Default::default()
    })
    .await
    .unwrap();
    let target = TargetServer::start().await;
    let key = stack.new_user("ops").await.unwrap();
    let (_, m) = stack
        .call(Method::POST, "/api/v1/monitors", &key, Some(json!({"name": "t", "type": "http", "target": target.url("/"), "interval_secs": 3600})))
        .await
        .unwrap();
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;

    let check_id = check_now(&stack, &key, id).await;
    let result = stack
        .eventually(Duration::from_secs(5), || async {
            results(&stack, &key, id)
                .await
                .into_iter()
                .find(|r| r["check_id"] == check_id.as_str())
        })
        .await
        .expect("the manual check's result");
    assert_eq!(result["trigger"], "manual");
    assert_eq!(result["status"], "up");
    // How soon it is stored is a speed, measured by `just bench` (on-demand
    // stage), not asserted here: a loaded CI machine must not fail a test.

    // The daily rollup counts both checks (the first, scheduled, and the manual one).
    let daily = today(&stack, &key, id).await;
    assert_eq!(daily["total_checks"], 2, "{daily}");
    assert_eq!(daily["percentage"], 100.0);
}

#[tokio::test]
async fn a_heartbeat_monitor_is_up_on_pings_and_down_when_they_stop() {
    let stack = Stack::start(StackOptions {
        notifier: false,
        checkers: 0,
        ..Default::default()
    })
    .await
    .unwrap();
    let key = stack.new_user("ops").await.unwrap();
    let (s, m) = stack
        .call(Method::POST, "/api/v1/monitors", &key, Some(json!({"name": "cron", "type": "heartbeat", "interval_secs": 10, "timeout_secs": 1})))
        .await
        .unwrap();
    assert_eq!(s, StatusCode::CREATED, "{m}");
    let id = m["id"].as_i64().unwrap();
    let token = m["heartbeat_token"].as_str().unwrap().to_string();

    // A chatty job: five pings in the same period.
    for _ in 0..5 {
        let ping = stack
            .http
            .get(format!("{}/api/v1/heartbeat/{token}", stack.api))
            .send()
            .await
            .unwrap();
        assert_eq!(ping.status(), StatusCode::OK);
    }
    let up = wait_status(&stack, &key, id, "up").await;
    assert!(up["last_heartbeat_at"].is_string());

    // No ping within 10 s + 1 s of grace: one missed period, down (confirmation_count 1).
    let down = stack
        .eventually(Duration::from_secs(25), || async {
            let m = monitor(&stack, &key, id).await;
            (m["status"] == "down").then_some(m)
        })
        .await
        .expect("missed heartbeat detected");
    assert_eq!(down["consecutive_failures"], 1);
    let rs = results(&stack, &key, id).await;
    assert!(
        rs.iter()
            .any(|r| r["trigger"] == "heartbeat" && r["status"] == "down"),
        "{rs:?}"
    );
    // Uptime counts periods, not pings: one period with pings, one missed.
    let daily = today(&stack, &key, id).await;
    assert_eq!(daily["total_checks"], 2, "{daily}");
    assert_eq!(daily["percentage"], 50.0, "{daily}");
}

#[tokio::test]
async fn killing_a_checker_mid_flight_loses_no_check_and_stores_each_once() {
    let mut stack = Stack::start(StackOptions {
        notifier: false,
        scheduler: false,
        checker_ack_wait_secs: 5,
        ..Default::default()
    })
    .await
    .unwrap();
    let target = TargetServer::start().await;
    target.set_delay(Duration::from_millis(1500));
    let key = stack.new_user("ops").await.unwrap();
    let mut ids = Vec::new();
    for i in 0..5 {
        let (_, m) = stack
            .call(Method::POST, "/api/v1/monitors", &key, Some(json!({"name": format!("m{i}"), "type": "http", "target": target.url("/"), "interval_secs": 3600})))
            .await
            .unwrap();
        ids.push(m["id"].as_i64().unwrap());
    }
    let mut check_ids = Vec::new();
    for id in &ids {
        check_ids.push(check_now(&stack, &key, *id).await);
    }
    // Let the checker start them, then kill it with all five in flight.
    stack
        .eventually(Duration::from_secs(5), || async {
            (target.hits() >= 5).then_some(())
        })
        .await
        .expect("checks started");
    stack.kill_checker(0);
    target.set_delay(Duration::ZERO);
    stack.add_checker().await.unwrap();

    // Redelivery after the ack deadline: every check gets exactly one result.
    for (id, check_id) in ids.iter().zip(&check_ids) {
        let found = stack
            .eventually(Duration::from_secs(60), || async {
                let rs = results(&stack, &key, *id).await;
                let n = rs
                    .iter()
                    .filter(|r| r["check_id"] == check_id.as_str())
                    .count();
                (n > 0).then_some(n)
            })
            .await;
        assert_eq!(found, Some(1), "monitor {id} check {check_id}");
    }
}

#[tokio::test]
async fn everything_published_validates_against_proto_schemas_and_metrics_count_checks() {
    let stack = Stack::start(StackOptions::default()).await.unwrap();
    let target = TargetServer::start().await;
    let receiver = Receiver::start().await;
    let key = stack.new_user("ops").await.unwrap();

    // Tap every subject like `nats sub 'uptime.>'` would.
    let client = async_nats::connect(&stack.env.nats.url).await.unwrap();
    let mut tap = client.subscribe("uptime.>").await.unwrap();

    let (_, contact) = stack
        .call(
            Method::POST,
            "/api/v1/alert-contacts",
            &key,
            Some(json!({"name": "hook", "type": "webhook", "value": receiver.url})),
        )
        .await
        .unwrap();
    let (_, m) = stack
        .call(Method::POST, "/api/v1/monitors", &key, Some(json!({"name": "t", "type": "keyword", "target": target.url("/"), "keyword": "ok", "alert_contact_ids": [contact["id"]]})))
        .await
        .unwrap();
    let id = m["id"].as_i64().unwrap();
    wait_status(&stack, &key, id, "up").await;
    let (_, hb) = stack
        .call(
            Method::POST,
            "/api/v1/monitors",
            &key,
            Some(json!({"name": "hb", "type": "heartbeat", "interval_secs": 60})),
        )
        .await
        .unwrap();
    stack
        .http
        .post(format!(
            "{}/api/v1/heartbeat/{}",
            stack.api,
            hb["heartbeat_token"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    stack
        .eventually(Duration::from_secs(10), || async {
            (!receiver.events().is_empty()).then_some(())
        })
        .await
        .expect("alert sent");

    let schemas: std::collections::HashMap<&str, serde_json::Value> =
        uptime_contracts::all_schemas()
            .into_iter()
            .map(|(_, subject, schema)| (subject, schema))
            .collect();
    let mut seen = std::collections::BTreeSet::new();
    while let Ok(Some(msg)) = tokio::time::timeout(Duration::from_millis(500), tap.next()).await {
        let mut subject = msg.subject.to_string();
        // Due checks go to a subject per region under one schema.
        for prefix in [uptime_contracts::subjects::CHECK_DUE_V5_PREFIX] {
            if subject
                .strip_prefix(prefix)
                .is_some_and(|r| r.starts_with('.'))
            {
                subject = prefix.to_string();
            }
        }
        let Some(schema) = schemas.get(subject.as_str()) else {
            // JetStream's own API traffic is not under `uptime.`; anything else is a contract breach.
            panic!("published on a subject with no schema: {subject}");
        };
        let body: Value = serde_json::from_slice(&msg.payload).unwrap();
        let validator = jsonschema::validator_for(schema).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&body)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{subject}: {errors:?} in {body}");
        seen.insert(subject);
    }
    for subject in [
        uptime_contracts::subjects::CHECK_DUE_V5_PREFIX,
        uptime_contracts::subjects::CHECK_RESULT_V3,
        uptime_contracts::subjects::MONITOR_CHANGED_V1,
        uptime_contracts::subjects::STATE_CHANGED_V4,
    ] {
        assert!(
            seen.contains(subject),
            "nothing seen on {subject}: {seen:?}"
        );
    }
    // Publishers send the current version only: previous versions are
    // read, never sent.
    for previous in [
        uptime_contracts::subjects::STATE_CHANGED_V3,
        uptime_contracts::subjects::CHECK_RESULT_V2,
    ] {
        assert!(!seen.contains(previous), "{previous}: {seen:?}");
    }

    // The checker's /metrics reports the checks it ran, by outcome.
    let text = stack.metrics("checker").await.unwrap();
    let passed: f64 = text
        .lines()
        .filter(|l| l.starts_with("checks_total{") && l.contains("pass"))
        .filter_map(|l| l.rsplit(" ").next()?.parse::<f64>().ok())
        .sum();
    assert!(passed >= 1.0, "checks_total in:\n{text}");
    // Consumer lag, the signal operators scale checkers on.
    assert!(
        text.lines()
            .any(|l| l.starts_with("nats_consumer_pending{") && l.contains("consumer=\"checker\"")),
        "checker lag missing in:\n{text}"
    );
    // How full its queue is, beside the bound.
    for gauge in ["nats_stream_bytes{", "nats_stream_max_bytes{"] {
        assert!(
            text.lines()
                .any(|l| l.starts_with(gauge) && l.contains("stream=\"UPTIME_CHECKS\"")),
            "{gauge} missing in:\n{text}"
        );
    }
    let api = stack.metrics("api-gateway").await.unwrap();
    assert!(api.contains("http_request_duration_seconds"), "{api}");
}
