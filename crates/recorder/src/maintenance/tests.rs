//! The sweep's pure parts and the hooks the batch planner calls, on rows
//! built in memory with the clock as a parameter.
use super::*;
use crate::plan::effects;
use chrono::TimeZone;
use uptime_contracts::{CheckOutcome, CheckResult as Observed, MonitorKind};
use uptime_db::models::MaintenanceMarker;

fn t(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

fn monitor(id: i64) -> MonitorForDecisions {
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
        rules: Default::default(),
        flap_changes: None,
        flapping_since: None,
        maintenance: Default::default(),
    }
}

fn silenced(mut m: MonitorForDecisions, since: i64) -> MonitorForDecisions {
    m.maintenance = MaintenanceMarker {
        effect: Some("silence".into()),
        since: Some(t(since)),
        until: Some(t(since + 3600)),
    };
    m
}

fn result(monitor_id: i64, at: i64, outcome: CheckOutcome) -> Observed {
    Observed {
        check_id: Uuid::new_v4(),
        monitor_id,
        definition_version: 1,
        trigger: Trigger::Scheduled,
        due_at: Some(t(at)),
        checked_at: t(at),
        outcome,
        latency_ms: Some(10),
        http_status: Some(503),
        error: Some("503".into()),
        ssl_expires_at: None,
        reporter: "test".into(),
        region: uptime_contracts::DEFAULT_REGION.into(),
        round_id: None,
    }
}

fn payloads(fx: &crate::plan::Effects) -> Vec<serde_json::Value> {
    fx.events.iter().map(|e| e.payload.clone()).collect()
}

#[test]
fn a_silenced_monitor_records_its_transitions_held_and_leaves_them_out_of_uptime() {
    let mut m = silenced(monitor(1), 0);
    m.status = MonitorStatus::Up;
    m.status_since = Some(t(-50));
    let down = result(1, 10, CheckOutcome::Fail);
    let up = result(1, 20, CheckOutcome::Pass);
    let fx = effects(std::slice::from_ref(&m), &[&down, &up], t(30));
    assert_eq!(fx.transitions, vec![MonitorStatus::Down, MonitorStatus::Up]);
    for event in payloads(&fx) {
        assert_eq!(event["held"], "maintenance", "{event}");
        assert_eq!(event["in_maintenance"], true, "{event}");
    }
    assert!(
        fx.increments.is_empty(),
        "no check inside the window counts"
    );
    // The incident is still written, with both alerts held.
    assert_eq!(fx.incidents_opened.len(), 1);
    let held: Vec<_> = fx.incidents_opened[0]
        .alerts
        .iter()
        .map(|a| a.held.clone())
        .collect();
    assert_eq!(held, vec![Some("maintenance".to_string()); 2]);
}

#[test]
fn what_happened_before_the_window_opened_alerts_and_counts() {
    let mut m = silenced(monitor(1), 100);
    m.status = MonitorStatus::Up;
    m.status_since = Some(t(-50));
    let down = result(1, 10, CheckOutcome::Fail);
    let fx = effects(std::slice::from_ref(&m), &[&down], t(120));
    let events = payloads(&fx);
    assert!(events[0].get("held").is_none(), "{}", events[0]);
    assert!(events[0].get("in_maintenance").is_none());
    assert_eq!(fx.increments.len(), 1);
}

#[test]
fn a_monitor_without_a_marker_is_untouched() {
    let m = monitor(1);
    assert!(!in_maintenance(&m, t(0)));
    let fx = effects(
        std::slice::from_ref(&m),
        &[&result(1, 0, CheckOutcome::Fail)],
        t(1),
    );
    assert!(payloads(&fx)[0].get("held").is_none());
}

fn window(id: i64, starts: i64, ends: i64) -> MaintenanceWindow {
    MaintenanceWindow {
        id,
        org_id: 7,
        name: "deploy".into(),
        monitor_ids: vec![1],
        label_selector: None,
        effect: "silence".into(),
        starts_at: t(starts),
        ends_at: Some(t(ends)),
        rrule: None,
        timezone: None,
        duration_secs: None,
        last_ends_at: Some(t(ends)),
        created_at: t(-1000),
        updated_at: t(-1000),
    }
}

fn row(id: i64, window_id: Option<i64>, starts: i64) -> SpanRow {
    SpanRow {
        id,
        window_id,
        org_id: 7,
        effect: "silence".into(),
        monitor_ids: vec![1],
        label_selector: None,
        starts_at: t(starts),
        ends_at: t(starts + 600),
        closed_at: None,
    }
}

#[test]
fn spans_open_while_their_occurrence_is_open_and_close_after() {
    let windows = [window(1, 0, 600), window(2, 1000, 1600)];
    let open = spans_open_at(&windows, t(300));
    assert_eq!(open.len(), 1);
    assert_eq!(
        (open[0].window_id, open[0].starts_at, open[0].ends_at),
        (1, t(0), t(600))
    );
    // Still wanted: nothing closes.
    assert!(spans_to_close(&[row(10, Some(1), 0)], &open).is_empty());
    // At its end, and for a deleted window (no id), the span closes.
    let later = spans_open_at(&windows, t(600));
    assert!(later.is_empty(), "the end is exclusive");
    assert_eq!(
        spans_to_close(&[row(10, Some(1), 0), row(11, None, 0)], &later),
        vec![10, 11]
    );
    // A window edited to another occurrence closes the old one.
    let moved = [window(1, 200, 900)];
    assert_eq!(
        spans_to_close(&[row(10, Some(1), 0)], &spans_open_at(&moved, t(300))),
        vec![10]
    );
}

fn incident(alerts: serde_json::Value) -> Incident {
    Incident {
        id: Uuid::new_v4(),
        org_id: 7,
        monitor_id: 1,
        started_at: t(0),
        resolved_at: None,
        cause: Some("503".into()),
        acknowledged_at: None,
        acknowledged_via: None,
        acknowledged_by_user_id: None,
        acknowledged_by_key_prefix: None,
        acknowledged_by_contact_id: None,
        alerts,
        alert_held: None,
        blocked_by: Vec::new(),
        held_children: 0,
        reminders_sent: 0,
        next_reminder_at: None,
    }
}

fn alert(kind: &str, status: &str, held: Option<&str>) -> serde_json::Value {
    let mut a =
        serde_json::json!({"event_id": Uuid::new_v4(), "kind": kind, "status": status, "at": t(0)});
    if let Some(h) = held {
        a["held"] = h.into();
    }
    a
}

#[test]
fn only_a_down_alert_held_by_maintenance_and_never_sent_is_released() {
    let held = incident(serde_json::json!([alert(
        "transition",
        "down",
        Some("maintenance")
    )]));
    assert!(release_due(&held));
    let sent = incident(serde_json::json!([alert("transition", "down", None)]));
    assert!(!release_due(&sent), "alerted already");
    let released = incident(serde_json::json!([
        alert("transition", "down", Some("maintenance")),
        alert("released", "down", None)
    ]));
    assert!(!release_due(&released), "released once only");
    let other = incident(serde_json::json!([alert(
        "transition",
        "down",
        Some("blocked_by_parent")
    )]));
    assert!(
        !release_due(&other),
        "another hold is not maintenance's to release"
    );
}

#[test]
fn the_released_alert_is_a_down_alert_with_a_stable_id() {
    let mut m = monitor(1);
    m.status = MonitorStatus::Down;
    m.consecutive_failures = 3;
    let i = incident(serde_json::json!([]));
    let event = released_event(&m, &i, None, t(900));
    assert_eq!(event.alert, AlertKind::Released);
    assert_eq!(event.status, MonitorStatus::Down);
    assert_eq!(event.down_for_secs, Some(900));
    assert_eq!(event.incident_id, Some(i.id));
    assert!(event.alerts());
    assert_eq!(
        event.event_id,
        released_event(&m, &i, None, t(905)).event_id
    );
    assert_eq!(event.check.error.as_deref(), Some("503"));
}
