//! How incident alerts read: the incident and its acknowledge link, and
//! reminders, flapping notices and released holds worded apart.

use super::*;
use chrono::TimeZone;
use uptime_contracts::{
    AlertKind, CheckRef, HoldReason, MonitorKind, MonitorRef, StateChange, StateChangedV3, Trigger,
};
use uuid::Uuid;

fn down(alert: AlertKind, down_for_secs: Option<u64>) -> StateChange {
    let at = Utc.with_ymd_and_hms(2026, 11, 27, 12, 0, 0).unwrap();
    let v3 = StateChangedV3 {
        event_id: Uuid::new_v4(),
        monitor: MonitorRef {
            id: 7,
            user_id: 1,
            name: "Shop".into(),
            kind: MonitorKind::Http,
            target: Some("https://shop.example".into()),
        },
        previous_status: MonitorStatus::Up,
        status: MonitorStatus::Down,
        occurred_at: at,
        previous_since: None,
        consecutive_failures: 3,
        check: CheckRef {
            check_id: Uuid::new_v4(),
            trigger: Trigger::Scheduled,
            checked_at: at,
            status: MonitorStatus::Down,
            latency_ms: None,
            http_status: Some(503),
            error: Some("expected status 200, got 503".into()),
        },
        round: None,
    };
    StateChange {
        alert,
        incident_id: Some(Uuid::from_u128(9)),
        down_for_secs,
        held_children: 3,
        ..StateChange::from(v3)
    }
}

#[test]
fn a_down_alert_names_its_incident_and_the_children_it_held() {
    let mut alert = AlertEvent::from_state_change(&down(AlertKind::Transition, None)).unwrap();
    assert_eq!(alert.incident_to_acknowledge(), Some(Uuid::from_u128(9)));
    alert.incident.as_mut().unwrap().acknowledge_url =
        Some("https://uptime.example/api/v1/incidents/ack/t.s".into());
    let mail = email(&alert);
    assert_eq!(mail.subject, "[DOWN] Shop is down");
    assert!(
        mail.body
            .contains(&format!("Incident: {}", Uuid::from_u128(9))),
        "{}",
        mail.body
    );
    assert!(
        mail.body.contains("Dependent monitors held: 3"),
        "{}",
        mail.body
    );
    assert!(
        mail.body
            .contains("Acknowledge: https://uptime.example/api/v1/incidents/ack/t.s"),
        "{}",
        mail.body
    );
    let body = alert.to_json();
    assert_eq!(body["incident"]["alert"], "transition");
    assert_eq!(body["incident"]["held_children"], 3);
}

#[test]
fn reminders_flapping_and_released_alerts_read_differently() {
    let reminder = AlertEvent::from_state_change(&down(AlertKind::Reminder, Some(1800))).unwrap();
    assert_eq!(
        headline(&reminder),
        "[STILL DOWN] Shop has been down for 30m 0s"
    );
    assert!(email(&reminder).body.contains("Down for: 30m 0s"));
    let flapping = AlertEvent::from_state_change(&down(AlertKind::Flapping, None)).unwrap();
    assert_eq!(headline(&flapping), "[FLAPPING] Shop keeps changing state");
    let released = AlertEvent::from_state_change(&down(AlertKind::Released, Some(600))).unwrap();
    assert_eq!(
        headline(&released),
        "[DOWN] Shop is still down (alert held until now)"
    );
    assert!(slack(&released)["text"]
        .as_str()
        .unwrap()
        .contains("its alert was held"));
}

#[test]
fn a_held_event_raises_no_alert() {
    let held = StateChange {
        held: Some(HoldReason::Maintenance),
        ..down(AlertKind::Transition, None)
    };
    assert_eq!(AlertEvent::from_state_change(&held), None);
}
