use crate::common::{result, ssl_expiring_subject, state_changed_subject, Harness};
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_contracts::{CheckOutcome, CheckResult, MonitorKind, MonitorStatus, Trigger};
use uptime_db::models::DailyUptime;
use uptime_db::schema::daily_uptime;

#[tokio::test]
async fn stores_a_result_and_moves_a_pending_monitor_up() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let mut r = result(id, Utc::now(), CheckOutcome::Pass);
    r.trigger = Trigger::Manual;
    r.ssl_expires_at = Some(Utc::now() + Duration::days(200));
    h.record(std::slice::from_ref(&r)).await;

    let rows = h.results_of(id).await;
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.check_id, r.check_id);
    assert_eq!(
        (
            row.status.as_str(),
            row.trigger.as_str(),
            row.reporter.as_str()
        ),
        ("up", "manual", "checker-test")
    );
    assert_eq!((row.latency_ms, row.http_status), (Some(42), Some(200)));
    assert_eq!(
        row.checked_at.timestamp_micros(),
        r.checked_at.timestamp_micros()
    );

    let m = h.monitor_row(id).await;
    assert_eq!(m.status, MonitorStatus::Up);
    assert_eq!(m.consecutive_failures, 0);
    assert_eq!(
        m.last_checked_at.map(|t| t.timestamp_micros()),
        Some(r.checked_at.timestamp_micros())
    );
    assert_eq!(m.status_since, m.last_checked_at);
    assert!(m.ssl_expires_at.is_some());

    let events = h.events(state_changed_subject()).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["previous_status"], "pending");
    assert_eq!(events[0]["status"], "up");
    assert_eq!(events[0]["monitor"]["id"], id);
    assert_eq!(events[0]["monitor"]["user_id"], h.user_id);
    assert_eq!(events[0]["check"]["check_id"], r.check_id.to_string());
    assert_eq!(events[0]["check"]["trigger"], "manual");
    assert!(
        h.events(ssl_expiring_subject()).await.is_empty(),
        "200 days left is outside the 30-day window"
    );
}

#[tokio::test]
async fn a_result_delivered_twice_is_stored_once() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.confirmation_count = 2).await;
    let r = result(id, Utc::now(), CheckOutcome::Fail);
    // Different message ids get past JetStream's deduplication: the recorder
    // itself must notice the check_id was already stored.
    h.publish_with_id(&r, "first").await;
    h.wait_drained().await;
    h.publish_with_id(&r, "second").await;
    h.wait_drained().await;

    assert_eq!(h.results_of(id).await.len(), 1);
    let m = h.monitor_row(id).await;
    assert_eq!(m.consecutive_failures, 1, "the failure counted once");
    assert_eq!(
        m.status,
        MonitorStatus::Pending,
        "one failure of two is not down yet"
    );
    let day: DailyUptime = daily_uptime::table
        .filter(daily_uptime::monitor_id.eq(id))
        .select(DailyUptime::as_select())
        .first(&mut h.conn().await)
        .await
        .unwrap();
    assert_eq!((day.total_checks, day.up_checks), (1, 0));
    assert!(h.events(state_changed_subject()).await.is_empty());
}

#[tokio::test]
async fn down_only_after_confirmation_count_failures_then_up_again() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.confirmation_count = 3).await;
    let t0 = Utc::now() - Duration::minutes(10);
    h.record(&[result(id, t0, CheckOutcome::Pass)]).await;
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);

    for i in 1..=2 {
        h.record(&[result(id, t0 + Duration::minutes(i), CheckOutcome::Fail)])
            .await;
        let m = h.monitor_row(id).await;
        assert_eq!(
            (m.status.as_str(), m.consecutive_failures),
            ("up", i as i32)
        );
    }
    let third = result(id, t0 + Duration::minutes(3), CheckOutcome::Fail);
    h.record(std::slice::from_ref(&third)).await;
    let m = h.monitor_row(id).await;
    assert_eq!((m.status.as_str(), m.consecutive_failures), ("down", 3));

    let events = h.events(state_changed_subject()).await;
    let downs: Vec<_> = events.iter().filter(|e| e["status"] == "down").collect();
    assert_eq!(downs.len(), 1, "{events:?}");
    assert_eq!(downs[0]["previous_status"], "up");
    assert_eq!(downs[0]["consecutive_failures"], 3);
    assert_eq!(downs[0]["check"]["check_id"], third.check_id.to_string());
    assert_eq!(downs[0]["check"]["status"], "down");
    assert!(downs[0]["previous_since"].is_string());

    let recovery = result(id, t0 + Duration::minutes(4), CheckOutcome::Pass);
    h.record(std::slice::from_ref(&recovery)).await;
    let m = h.monitor_row(id).await;
    assert_eq!((m.status.as_str(), m.consecutive_failures), ("up", 0));
    let events = h.events(state_changed_subject()).await;
    let statuses: Vec<_> = events
        .iter()
        .map(|e| {
            (
                e["previous_status"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        vec![("pending", "up"), ("up", "down"), ("down", "up")]
    );
}

#[tokio::test]
async fn a_slow_pass_is_degraded() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.latency_warn_ms = Some(100)).await;
    let t0 = Utc::now();
    let mut slow = result(id, t0, CheckOutcome::Pass);
    slow.latency_ms = Some(250);
    h.record(&[slow]).await;
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Degraded);
    assert_eq!(h.results_of(id).await[0].status, "degraded");

    let mut fast = result(id, t0 + Duration::seconds(1), CheckOutcome::Pass);
    fast.latency_ms = Some(100);
    h.record(&[fast]).await;
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
    let events = h.events(state_changed_subject()).await;
    let to: Vec<_> = events.iter().map(|e| e["status"].clone()).collect();
    assert_eq!(to, vec!["degraded", "up"]);
}

#[tokio::test]
async fn daily_rollup_counts_checks_per_utc_day_with_degraded_as_up() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.latency_warn_ms = Some(10)).await;
    let noon = |days_ago: i64| {
        (Utc::now() - Duration::days(days_ago))
            .date_naive()
            .and_hms_opt(12, 0, 0)
            .unwrap()
            .and_utc()
    };
    let (day1, day2) = (noon(2), noon(1));
    let mut degraded = result(id, day1 + Duration::seconds(2), CheckOutcome::Pass);
    degraded.latency_ms = Some(500);
    h.record(&[
        result(id, day1, CheckOutcome::Pass),
        result(id, day1 + Duration::seconds(1), CheckOutcome::Fail),
        degraded,
        result(id, day2, CheckOutcome::Fail),
    ])
    .await;
    // A later batch adds to the same day's row.
    h.record(&[result(id, day2 + Duration::seconds(1), CheckOutcome::Pass)])
        .await;

    let rows: Vec<DailyUptime> = daily_uptime::table
        .filter(daily_uptime::monitor_id.eq(id))
        .order(daily_uptime::day.asc())
        .select(DailyUptime::as_select())
        .load(&mut h.conn().await)
        .await
        .unwrap();
    let got: Vec<_> = rows
        .iter()
        .map(|r| (r.day, r.total_checks, r.up_checks))
        .collect();
    assert_eq!(
        got,
        vec![(day1.date_naive(), 3, 2), (day2.date_naive(), 2, 1)]
    );
}

#[tokio::test]
async fn a_certificate_is_warned_about_once() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.ssl_warn_days = 14).await;
    let t0 = Utc::now();
    let expiry = (t0 + Duration::days(5)).trunc_subsecs_micros();
    let mut checks = Vec::new();
    for i in 0..3 {
        let mut r = result(id, t0 + Duration::seconds(i), CheckOutcome::Pass);
        r.ssl_expires_at = Some(expiry);
        checks.push(r);
    }
    // Two batches: the warning must not repeat across them either.
    h.record(&checks[..2]).await;
    h.record(&checks[2..]).await;
    let warnings = h.events(ssl_expiring_subject()).await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert_eq!(warnings[0]["warn_days"], 14);
    assert_eq!(warnings[0]["days_left"], 4);
    assert_eq!(warnings[0]["monitor"]["id"], id);
    assert_eq!(
        warnings[0]["check"]["check_id"],
        checks[0].check_id.to_string()
    );
    let m = h.monitor_row(id).await;
    assert_eq!(m.ssl_warned_for, Some(expiry));

    // A renewed certificate that is again close to expiry gets its own warning.
    let renewed = (t0 + Duration::days(10)).trunc_subsecs_micros();
    let mut r = result(id, t0 + Duration::seconds(10), CheckOutcome::Pass);
    r.ssl_expires_at = Some(renewed);
    h.record(&[r]).await;
    assert_eq!(h.events(ssl_expiring_subject()).await.len(), 2);
    assert_eq!(h.monitor_row(id).await.ssl_warned_for, Some(renewed));
}

#[tokio::test]
async fn paused_monitors_store_results_without_changing_status() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.active = false).await;
    h.record(&[result(id, Utc::now(), CheckOutcome::Fail)])
        .await;
    assert_eq!(h.results_of(id).await.len(), 1);
    let m = h.monitor_row(id).await;
    assert_eq!((m.status.as_str(), m.consecutive_failures), ("pending", 0));
    assert!(h.events(state_changed_subject()).await.is_empty());
}

#[tokio::test]
async fn results_of_deleted_monitors_are_dropped_without_poisoning_the_batch() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let gone = h.monitor(|_| {}).await;
    diesel::delete(uptime_db::schema::monitors::table.find(gone))
        .execute(&mut h.conn().await)
        .await
        .unwrap();
    let t0 = Utc::now();
    h.record(&[
        result(gone, t0, CheckOutcome::Pass),
        result(id, t0, CheckOutcome::Pass),
    ])
    .await;
    assert_eq!(h.results_of(id).await.len(), 1);
    assert!(h.results_of(gone).await.is_empty());
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
}

#[tokio::test]
async fn heartbeat_pings_set_last_heartbeat_at() {
    let h = Harness::started().await;
    let id = h
        .monitor(|m| {
            m.kind = MonitorKind::Heartbeat;
            m.target = None;
            m.heartbeat_token = Some(format!("hb_{}", "a".repeat(32)));
        })
        .await;
    let at = Utc::now().trunc_subsecs_micros();
    let mut ping = result(id, at, CheckOutcome::Pass);
    ping.trigger = Trigger::Heartbeat;
    ping.reporter = "api-gateway".into();
    ping.latency_ms = None;
    ping.http_status = None;
    h.record(&[ping]).await;
    let m = h.monitor_row(id).await;
    assert_eq!(m.last_heartbeat_at, Some(at));
    assert_eq!(m.status, MonitorStatus::Up);
    assert_eq!(h.results_of(id).await[0].trigger, "heartbeat");
}

#[tokio::test]
async fn ops_server_reports_ready() {
    let h = Harness::started().await;
    let url = format!("http://{}/readyz", h.ops_addr());
    let res = reqwest::get(&url).await.unwrap();
    assert_eq!(res.status(), 200);
    let body: serde_json::Value = res.json().await.unwrap();
    assert_eq!(body["checks"]["postgres"], "ok");
    assert_eq!(body["checks"]["nats"], "ok");
    assert_eq!(body["checks"]["progress"], "ok", "its loops are watched");
}

trait TruncMicros {
    fn trunc_subsecs_micros(self) -> Self;
}

impl TruncMicros for chrono::DateTime<Utc> {
    /// PostgreSQL keeps microseconds; compare at that precision.
    fn trunc_subsecs_micros(self) -> Self {
        chrono::DateTime::from_timestamp_micros(self.timestamp_micros()).unwrap()
    }
}

#[tokio::test]
async fn undecodable_messages_are_terminated_and_do_not_block_the_rest() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    h.js.publish(
        uptime_contracts::subjects::CHECK_RESULT_V3,
        "{not json".into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    h.record(&[result(id, Utc::now(), CheckOutcome::Pass)])
        .await;
    assert_eq!(h.results_of(id).await.len(), 1);
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
    // Not dropped silently: dead-lettered (before the batch after it was
    // recorded), with why and where from.
    let dead = uptime_consumer::dead::read_all(&h.js).await.unwrap();
    assert_eq!(dead.len(), 1, "{dead:?}");
    assert_eq!(dead[0].reason(), Some("undecodable"));
    assert_eq!(
        dead[0].original_subject(),
        Some(uptime_contracts::subjects::CHECK_RESULT_V3)
    );
    assert_eq!(dead[0].payload(), b"{not json");
}

#[tokio::test]
async fn a_late_older_result_is_stored_but_moves_nothing() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let t0 = Utc::now();
    h.record(&[result(id, t0, CheckOutcome::Pass)]).await;
    // A slow checker reports a failure from before the pass just recorded.
    h.record(&[result(id, t0 - Duration::seconds(30), CheckOutcome::Fail)])
        .await;
    assert_eq!(h.results_of(id).await.len(), 2);
    let m = h.monitor_row(id).await;
    assert_eq!((m.status.as_str(), m.consecutive_failures), ("up", 0));
    assert_eq!(
        m.last_checked_at.map(|t| t.timestamp_micros()),
        Some(t0.timestamp_micros())
    );
    let events = h.events(state_changed_subject()).await;
    assert_eq!(events.len(), 1, "only pending→up: {events:?}");
}

#[tokio::test]
async fn a_result_made_for_an_older_definition_is_stored_but_moves_nothing() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    // The monitor was edited twice since it was created: version 3.
    diesel::update(uptime_db::schema::monitors::table.find(id))
        .set(uptime_db::schema::monitors::definition_version.eq(3))
        .execute(&mut h.conn().await)
        .await
        .unwrap();
    let checked_at = Utc::now() - Duration::seconds(30);

    // A check that was in flight during the edit fails against the old target.
    let outdated = CheckResult {
        definition_version: 2,
        ..result(id, checked_at, CheckOutcome::Fail)
    };
    h.publish_with_id(&outdated, &outdated.check_id.to_string())
        .await;
    h.wait_drained().await;
    let rows = h.results_of(id).await;
    assert_eq!(rows.len(), 1, "the result is kept, as history");
    assert_eq!(rows[0].definition_version, Some(2));
    assert_eq!(rows[0].status, "down");
    let m = h.monitor_row(id).await;
    assert_eq!(
        (m.status.as_str(), m.consecutive_failures, m.last_checked_at),
        ("pending", 0, None),
        "a result of the old definition must not move the state"
    );
    assert!(h.events(state_changed_subject()).await.is_empty());
    let days: Vec<DailyUptime> = daily_uptime::table
        .select(DailyUptime::as_select())
        .load(&mut h.conn().await)
        .await
        .unwrap();
    assert!(days.is_empty(), "nor count in the uptime: {days:?}");

    // A result of the current definition moves it, as always.
    let current = CheckResult {
        definition_version: 3,
        ..result(id, checked_at + Duration::seconds(10), CheckOutcome::Fail)
    };
    h.publish_with_id(&current, &current.check_id.to_string())
        .await;
    h.wait_drained().await;
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Down);
    let events = h.events(state_changed_subject()).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["check"]["check_id"], current.check_id.to_string());
}

#[derive(diesel::QueryableByName)]
struct LastLatency {
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Integer>)]
    last_latency_ms: Option<i32>,
}

async fn last_latency(h: &Harness, id: i64) -> Option<i32> {
    let mut conn = h.conn().await;
    diesel::sql_query("SELECT last_latency_ms FROM monitors WHERE id = $1")
        .bind::<diesel::sql_types::BigInt, _>(id)
        .get_result::<LastLatency>(&mut conn)
        .await
        .unwrap()
        .last_latency_ms
}

/// `monitors.last_latency_ms` (what GET /api/v1/metrics shows) follows the
/// newest applied check, in the statement that writes the state: an older
/// result arriving late does not move it back, and a result without a
/// latency keeps the one stored.
#[tokio::test]
async fn keeps_the_newest_checks_latency() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    let now = Utc::now();
    let mut newer = result(id, now, CheckOutcome::Pass);
    newer.latency_ms = Some(7);
    h.record(std::slice::from_ref(&newer)).await;
    assert_eq!(last_latency(&h, id).await, Some(7));

    let mut older = result(id, now - Duration::seconds(30), CheckOutcome::Pass);
    older.latency_ms = Some(999);
    h.record(std::slice::from_ref(&older)).await;
    assert_eq!(last_latency(&h, id).await, Some(7));

    let mut without = result(id, now + Duration::seconds(30), CheckOutcome::Fail);
    without.latency_ms = None;
    h.record(std::slice::from_ref(&without)).await;
    assert_eq!(last_latency(&h, id).await, Some(7));
    assert_eq!(
        h.monitor_row(id)
            .await
            .last_checked_at
            .map(|t| t.timestamp_micros()),
        Some(without.checked_at.timestamp_micros())
    );
}
