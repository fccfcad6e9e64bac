//! The planner's rules, on rows and results built in memory.
use super::*;
use chrono::TimeZone;
use uptime_contracts::Message;

pub(super) fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

pub(super) fn monitor(id: i64) -> MonitorForDecisions {
    MonitorForDecisions {
        id,
        org_id: 7,
        name: "site".into(),
        kind: MonitorKind::Http,
        target: Some("https://example.com".into()),
        interval_secs: 60,
        timeout_secs: 10,
        confirmation_count: 1,
        ssl_warn_days: 30,
        latency_warn_ms: Some(500),
        active: true,
        status: MonitorStatus::Pending,
        status_since: None,
        consecutive_failures: 0,
        last_checked_at: None,
        last_heartbeat_at: None,
        ssl_expires_at: None,
        ssl_warned_for: None,
        heartbeat_counted_until: None,
        definition_version: 1,
        heartbeat_schedule: None,
        heartbeat_timezone: None,
        regions: None,
        quorum: None,
        labels: serde_json::json!({}),
        maintenance: Default::default(),
        rules: Default::default(),
        flap_changes: None,
        flapping_since: None,
    }
}

#[test]
fn only_results_of_the_current_definition_are_current() {
    let mut m = monitor(1);
    m.definition_version = 3;
    assert!(!is_current(2, &m), "made for the definition before");
    assert!(is_current(3, &m));
}

pub(super) fn result(monitor_id: i64, at: i64, outcome: CheckOutcome, latency: u32) -> CheckResult {
    CheckResult {
        check_id: Uuid::new_v4(),
        monitor_id,
        definition_version: 1,
        trigger: Trigger::Scheduled,
        due_at: Some(t(at)),
        checked_at: t(at),
        outcome,
        latency_ms: Some(latency),
        http_status: Some(200),
        error: None,
        ssl_expires_at: None,
        reporter: "test".into(),
        region: uptime_contracts::DEFAULT_REGION.into(),
        round_id: None,
    }
}

#[test]
fn results_apply_in_checked_at_order_whatever_the_batch_order() {
    let m = monitor(1);
    let up = result(1, 0, CheckOutcome::Pass, 10);
    let down = result(1, 5, CheckOutcome::Fail, 10);
    // Delivered newest first: the older pass must not win.
    let fx = effects(std::slice::from_ref(&m), &[&down, &up], t(10));
    assert_eq!(fx.transitions, vec![MonitorStatus::Up, MonitorStatus::Down]);
    assert_eq!(fx.updates[0].status, "down");
    assert_eq!(fx.updates[0].last_checked_at, Some(t(5)));
    let ids: Vec<Uuid> = fx
        .events
        .iter()
        .filter(|e| e.subject == StateChange::SUBJECT)
        .map(|e| e.payload["event_id"].as_str().unwrap().parse().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![state_event_id(up.check_id), state_event_id(down.check_id)]
    );
}

#[test]
fn rollup_counts_degraded_as_up_per_utc_day() {
    let m = monitor(1);
    let day = 86_400;
    let a = result(1, 0, CheckOutcome::Pass, 900); // degraded
    let b = result(1, 1, CheckOutcome::Fail, 0);
    let c = result(1, day, CheckOutcome::Pass, 1);
    let fx = effects(std::slice::from_ref(&m), &[&a, &b, &c], t(2 * day));
    let got: Vec<(NaiveDate, i32, i32)> = fx
        .increments
        .iter()
        .map(|i| (i.day, i.total_checks, i.up_checks))
        .collect();
    assert_eq!(
        got,
        vec![(t(0).date_naive(), 2, 1), (t(day).date_naive(), 1, 1)]
    );
}

#[test]
fn paused_monitors_record_but_raise_nothing() {
    let mut m = monitor(1);
    m.active = false;
    let mut r = result(1, 0, CheckOutcome::Fail, 0);
    r.ssl_expires_at = Some(t(86_400));
    let fx = effects(std::slice::from_ref(&m), &[&r], t(0));
    assert!(fx.events.is_empty());
    assert_eq!(fx.updates[0].status, "pending");
    assert_eq!(fx.increments[0].total_checks, 1);
}

#[test]
fn ssl_warning_is_raised_once_per_certificate() {
    let m = monitor(1);
    let expiry = t(5 * 86_400);
    let mut first = result(1, 0, CheckOutcome::Pass, 10);
    first.ssl_expires_at = Some(expiry);
    let mut second = result(1, 1, CheckOutcome::Pass, 10);
    second.ssl_expires_at = Some(expiry);
    let fx = effects(std::slice::from_ref(&m), &[&first, &second], t(2));
    let ssl: Vec<&NewOutboxEvent> = fx
        .events
        .iter()
        .filter(|e| e.subject == SslWarning::SUBJECT)
        .collect();
    assert_eq!(ssl.len(), 1);
    assert_eq!(ssl[0].id, ssl_event_id(first.check_id));
    assert_eq!(ssl[0].payload["days_left"], 4);
    assert_eq!(fx.updates[0].ssl_warned_for, Some(expiry));
    assert_eq!(fx.updates[0].ssl_expires_at, Some(expiry));
}

#[test]
fn each_event_is_one_row_of_one_version() {
    let http = monitor(1);
    let mut tcp = monitor(2);
    tcp.kind = MonitorKind::Tcp;
    let a = result(1, 0, CheckOutcome::Fail, 0);
    let mut b = result(2, 0, CheckOutcome::Fail, 0);
    b.ssl_expires_at = Some(t(86_400));
    let fx = effects(&[http, tcp], &[&a, &b], t(2));
    let rows_of = |monitor_id: i64| -> Vec<(&str, Uuid)> {
        fx.events
            .iter()
            .filter(|e| e.monitor_id == Some(monitor_id))
            .map(|e| (e.subject.as_str(), e.id))
            .collect()
    };
    // A state change is one state-changed.v3, under the id it had while
    // older versions went out beside it.
    let change = |r: &CheckResult| {
        Uuid::new_v5(&state_event_id(r.check_id), StateChange::SUBJECT.as_bytes())
    };
    assert_eq!(rows_of(1), [(StateChange::SUBJECT, change(&a))]);
    // A certificate warning is one ssl-expiring.v2 under its event id.
    assert_eq!(
        rows_of(2),
        [
            (StateChange::SUBJECT, change(&b)),
            (SslWarning::SUBJECT, ssl_event_id(b.check_id))
        ]
    );
    let row = fx.events.iter().find(|e| e.monitor_id == Some(1)).unwrap();
    assert_eq!(row.payload["monitor"]["kind"], "http");
    assert!(
        row.payload.get("round").is_none(),
        "a single-region change has no round"
    );
    let tcp_row = fx.events.iter().find(|e| e.monitor_id == Some(2)).unwrap();
    assert_eq!(tcp_row.payload["monitor"]["kind"], "tcp");
}

#[test]
fn heartbeat_uptime_counts_periods_not_pings() {
    let mut m = monitor(1);
    m.kind = MonitorKind::Heartbeat;
    m.interval_secs = 60;
    let ping = |secs: i64| {
        let mut r = result(1, secs, CheckOutcome::Pass, 0);
        r.trigger = Trigger::Heartbeat;
        r
    };
    // A chatty job: 100 pings in the first period, none in the second
    // (the scheduler reports it missed), 100 again in the third.
    let mut results: Vec<CheckResult> = (0..100).map(|i| ping(i / 2)).collect();
    let mut missed = result(1, 110, CheckOutcome::Fail, 0);
    missed.trigger = Trigger::Heartbeat;
    results.push(missed);
    results.extend((0..100).map(|i| ping(130 + i / 2)));
    let refs: Vec<&CheckResult> = results.iter().collect();
    let fx = effects(std::slice::from_ref(&m), &refs, t(200));
    assert_eq!(fx.increments.len(), 1);
    assert_eq!(
        (fx.increments[0].total_checks, fx.increments[0].up_checks),
        (3, 2),
        "one check per period: up, missed, up"
    );
    assert_eq!(fx.updates[0].heartbeat_counted_until, Some(t(130 + 54)));

    // The next batch goes on from the stored period: a ping inside it
    // counts for nothing more, the first one after it opens the next.
    m.heartbeat_counted_until = fx.updates[0].heartbeat_counted_until;
    let (early, late) = (ping(180), ping(190));
    let fx = effects(std::slice::from_ref(&m), &[&early, &late], t(200));
    assert_eq!(fx.increments[0].total_checks, 1);
    assert_eq!(fx.updates[0].heartbeat_counted_until, Some(t(190 + 54)));
}

#[test]
fn cron_heartbeat_uptime_counts_scheduled_runs_not_pings() {
    // Every five minutes; t(0) is 2027-01-15T08:00:00Z, a run.
    let mut m = monitor(1);
    m.kind = MonitorKind::Heartbeat;
    m.interval_secs = 3600;
    m.heartbeat_schedule = Some("*/5 * * * *".into());
    m.heartbeat_timezone = Some("Europe/Berlin".into());
    let ping = |secs: i64| {
        let mut r = result(1, secs, CheckOutcome::Pass, 0);
        r.trigger = Trigger::Heartbeat;
        r
    };
    // The 08:00 run pings thrice, the 08:05 run 10 s early and once
    // more on time, the 08:10 run once: three runs, three checks (the
    // hour-long interval would have counted one).
    let results = [ping(5), ping(20), ping(60), ping(290), ping(301), ping(605)];
    let refs: Vec<&CheckResult> = results.iter().collect();
    let fx = effects(std::slice::from_ref(&m), &refs, t(700));
    assert_eq!(fx.increments[0].total_checks, 3);
    // 08:10:05 counted: until 08:15, less 30 s of slack.
    assert_eq!(fx.updates[0].heartbeat_counted_until, Some(t(900 - 30)));
}

#[test]
fn heartbeat_pings_move_last_heartbeat_forward_only() {
    let mut m = monitor(1);
    m.kind = MonitorKind::Heartbeat;
    m.last_heartbeat_at = Some(t(50));
    let mut ping = result(1, 40, CheckOutcome::Pass, 0);
    ping.trigger = Trigger::Heartbeat;
    let fx = effects(std::slice::from_ref(&m), &[&ping], t(60));
    assert_eq!(fx.updates[0].last_heartbeat_at, Some(t(50)));
    let mut later = result(1, 70, CheckOutcome::Pass, 0);
    later.trigger = Trigger::Heartbeat;
    let fx = effects(std::slice::from_ref(&m), &[&later], t(80));
    assert_eq!(fx.updates[0].last_heartbeat_at, Some(t(70)));
}

#[test]
fn event_ids_are_deterministic_and_distinct_per_kind() {
    let id = Uuid::new_v4();
    assert_eq!(state_event_id(id), state_event_id(id));
    assert_ne!(state_event_id(id), ssl_event_id(id));
    assert_ne!(state_event_id(id), state_event_id(Uuid::new_v4()));
}
