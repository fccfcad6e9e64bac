//! Seeding monitors and results directly, and reading what the gateway
//! published, for the checks and heartbeats tests.
#![allow(dead_code)]

use async_nats::jetstream;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_contracts::MonitorKind;
use uptime_db::models::{Monitor, MonitorDefinition};
use uptime_db::schema::{check_results, daily_uptime};
use uptime_testkit::fixtures::{insert_monitor as insert_fixture, monitor_definition};

/// A monitor of `user_id` inserted as a row; `tweak` adjusts the definition.
pub async fn insert_monitor(
    pool: &uptime_db::Pool,
    user_id: i64,
    tweak: impl FnOnce(&mut MonitorDefinition),
) -> Monitor {
    let mut definition = MonitorDefinition {
        timeout_secs: 7,
        expected_status: 204,
        ..monitor_definition(MonitorKind::Http)
    };
    tweak(&mut definition);
    let mut conn = uptime_db::pool::conn(pool).await.unwrap();
    insert_fixture(&mut conn, user_id, definition).await
}

/// A heartbeat monitor with token `hb_` + 32 × `hex_digit`.
pub async fn insert_heartbeat_monitor(
    pool: &uptime_db::Pool,
    user_id: i64,
    hex_digit: char,
    active: bool,
) -> (Monitor, String) {
    let token = format!("hb_{}", hex_digit.to_string().repeat(32));
    let monitor = insert_monitor(pool, user_id, |m| {
        m.kind = MonitorKind::Heartbeat;
        m.target = None;
        m.heartbeat_token = Some(token.clone());
        m.active = active;
    })
    .await;
    (monitor, token)
}

/// Stores a result row as the recorder would; returns its id.
pub async fn insert_result(
    pool: &uptime_db::Pool,
    monitor_id: i64,
    checked_at: DateTime<Utc>,
    status: &str,
    trigger: &str,
) -> i64 {
    let mut conn = uptime_db::pool::conn(pool).await.unwrap();
    diesel::insert_into(check_results::table)
        .values((
            check_results::check_id.eq(uuid::Uuid::new_v4()),
            check_results::monitor_id.eq(monitor_id),
            check_results::trigger.eq(trigger),
            check_results::status.eq(status),
            check_results::checked_at.eq(checked_at),
            // A result without a due time, like a ping: slotted when checked.
            check_results::slot_at.eq(checked_at),
            check_results::latency_ms.eq(Some(120)),
            check_results::http_status.eq(Some(if status == "down" { 500 } else { 200 })),
            check_results::error
                .eq((status == "down").then(|| "expected status 200, got 500".to_string())),
            check_results::reporter.eq("checker-test"),
        ))
        .returning(check_results::id)
        .get_result(&mut conn)
        .await
        .unwrap()
}

/// A rollup row: `up_checks` counts `up` and `degraded` checks.
pub async fn insert_daily(
    pool: &uptime_db::Pool,
    monitor_id: i64,
    day: chrono::NaiveDate,
    total_checks: i32,
    up_checks: i32,
) {
    let mut conn = uptime_db::pool::conn(pool).await.unwrap();
    diesel::insert_into(daily_uptime::table)
        .values((
            daily_uptime::monitor_id.eq(monitor_id),
            daily_uptime::day.eq(day),
            daily_uptime::total_checks.eq(total_checks),
            daily_uptime::up_checks.eq(up_checks),
        ))
        .execute(&mut conn)
        .await
        .unwrap();
}

/// Every message still in `stream`, oldest first, as (subject, Nats-Msg-Id, JSON).
pub async fn stream_messages(
    js: &jetstream::Context,
    stream: &str,
) -> Vec<(String, Option<String>, serde_json::Value)> {
    let mut stream = js.get_stream(stream).await.unwrap();
    let state = stream.info().await.unwrap().state.clone();
    let mut out = Vec::new();
    if state.messages == 0 {
        return out;
    }
    for seq in state.first_sequence..=state.last_sequence {
        let Ok(msg) = stream.get_raw_message(seq).await else {
            continue;
        };
        let msg_id = msg
            .headers
            .get(async_nats::header::NATS_MESSAGE_ID)
            .map(|v| v.as_str().to_string());
        out.push((
            msg.subject.to_string(),
            msg_id,
            serde_json::from_slice(&msg.payload).unwrap(),
        ));
    }
    out
}
