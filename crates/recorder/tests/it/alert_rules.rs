//! Reminders, dependencies and flapping through a real recorder, database
//! and NATS: what goes out (the state-changed events that are not held)
//! and what the incidents say. The alert sweeper runs every 100 ms here.

use crate::common::{eventually, result, state_changed_subject, Harness};
use chrono::{Duration, Utc};
use uptime_contracts::CheckOutcome;
use uptime_db::alerting::{set_rules, AlertRules};
use uptime_db::incidents::{self, Acknowledger, IncidentFilter};

async fn started() -> Harness {
    let mut h = Harness::new().await;
    h.start_recorder_with(|s| s.recorder.alert_sweep_interval_ms = 100)
        .await;
    h
}

async fn with_rules(h: &Harness, id: i64, rules: AlertRules) {
    set_rules(&mut *h.conn().await, id, rules).await.unwrap();
}

async fn open_incident(h: &Harness, monitor_id: i64) -> Option<incidents::Incident> {
    let org = h.monitor_row(monitor_id).await.org_id;
    incidents::list_page(
        &mut *h.conn().await,
        uptime_db::reach::Reach::org(org),
        &IncidentFilter {
            monitor_id: Some(monitor_id),
            ..IncidentFilter::default()
        },
        None,
        10,
    )
    .await
    .unwrap()
    .into_iter()
    .next()
}

/// The events of `monitor_id` so far, as `(alert, status, held)`.
async fn said(h: &Harness, monitor_id: i64) -> Vec<(String, String, Option<String>)> {
    h.events(state_changed_subject())
        .await
        .into_iter()
        .filter(|e| e["monitor"]["id"] == monitor_id)
        .map(|e| {
            (
                e["alert"].as_str().unwrap_or("transition").to_string(),
                e["status"].as_str().unwrap().to_string(),
                e["held"].as_str().map(String::from),
            )
        })
        .collect()
}

fn alerted(events: &[(String, String, Option<String>)]) -> Vec<(&str, &str)> {
    events
        .iter()
        .filter(|(_, _, held)| held.is_none())
        .map(|(alert, status, _)| (alert.as_str(), status.as_str()))
        .collect()
}

async fn reminders_of(h: &Harness, monitor_id: i64) -> usize {
    said(h, monitor_id)
        .await
        .iter()
        .filter(|(alert, _, _)| alert == "reminder")
        .count()
}

#[tokio::test]
async fn reminders_repeat_and_stop_on_acknowledge_and_on_recovery() {
    let h = started().await;
    let reminding = AlertRules {
        reminder_interval_secs: Some(1),
        ..AlertRules::default()
    };
    let acked = h.monitor(|m| m.confirmation_count = 1).await;
    let recovered = h.monitor(|m| m.confirmation_count = 1).await;
    // Never stops: proves the sweeper went on after the others stopped.
    let canary = h.monitor(|m| m.confirmation_count = 1).await;
    for id in [acked, recovered, canary] {
        with_rules(&h, id, reminding.clone()).await;
    }
    let now = Utc::now();
    h.record(&[
        result(acked, now, CheckOutcome::Fail),
        result(recovered, now, CheckOutcome::Fail),
        result(canary, now, CheckOutcome::Fail),
    ])
    .await;

    for id in [acked, recovered] {
        eventually("two reminders each", || {
            let h = &h;
            async move { reminders_of(h, id).await >= 2 }
        })
        .await;
    }
    let reminder = h
        .events(state_changed_subject())
        .await
        .into_iter()
        .find(|e| e["alert"] == "reminder" && e["monitor"]["id"] == acked)
        .unwrap();
    assert_eq!(reminder["status"], "down");
    assert!(reminder["down_for_secs"].as_u64().is_some());
    assert!(reminder.get("held").is_none(), "a reminder alerts");

    // Acknowledged: the next due sweep stops its schedule.
    let incident = open_incident(&h, acked).await.unwrap();
    incidents::acknowledge(
        &mut *h.conn().await,
        None,
        incident.id,
        &Acknowledger::Link { contact_id: 1 },
        Utc::now(),
    )
    .await
    .unwrap();
    eventually("the acknowledged incident's reminders stopped", || {
        let h = &h;
        async move {
            open_incident(h, acked)
                .await
                .is_some_and(|i| i.next_reminder_at.is_none())
        }
    })
    .await;
    let acked_count = reminders_of(&h, acked).await;
    let stored = open_incident(&h, acked).await.unwrap();
    assert_eq!(stored.reminders_sent as usize, acked_count);

    // Recovered: resolved, so never due again.
    h.record(&[result(
        recovered,
        now + Duration::milliseconds(1),
        CheckOutcome::Pass,
    )])
    .await;
    let recovered_count = reminders_of(&h, recovered).await;
    let canary_then = reminders_of(&h, canary).await;
    eventually("two more sweeps sent the canary's reminders", || {
        let h = &h;
        async move { reminders_of(h, canary).await >= canary_then + 2 }
    })
    .await;
    assert_eq!(reminders_of(&h, acked).await, acked_count);
    assert_eq!(reminders_of(&h, recovered).await, recovered_count);
}

#[tokio::test]
async fn a_parent_and_three_children_down_send_one_alert_and_a_child_still_down_alerts_at_its_recovery(
) {
    let h = started().await;
    // The parent confirms after its children: they are held while it fails.
    let parent = h.monitor(|m| m.confirmation_count = 3).await;
    let children = [
        h.monitor(|m| m.confirmation_count = 1).await,
        h.monitor(|m| m.confirmation_count = 1).await,
        h.monitor(|m| m.confirmation_count = 1).await,
    ];
    for child in children {
        with_rules(
            &h,
            child,
            AlertRules {
                depends_on: vec![parent],
                ..AlertRules::default()
            },
        )
        .await;
    }
    let t0 = Utc::now() - Duration::minutes(5);
    let at = |s: i64| t0 + Duration::seconds(s);
    let mut up: Vec<_> = children
        .iter()
        .map(|c| result(*c, at(0), CheckOutcome::Pass))
        .collect();
    up.push(result(parent, at(0), CheckOutcome::Pass));
    h.record(&up).await;
    // The parent's first failure: failing, not down yet.
    h.record(&[result(parent, at(10), CheckOutcome::Fail)])
        .await;
    let down: Vec<_> = children
        .iter()
        .map(|c| result(*c, at(11), CheckOutcome::Fail))
        .collect();
    h.record(&down).await;
    h.record(&[result(parent, at(20), CheckOutcome::Fail)])
        .await;
    h.record(&[result(parent, at(30), CheckOutcome::Fail)])
        .await;

    let parent_events = h
        .events(state_changed_subject())
        .await
        .into_iter()
        .filter(|e| e["monitor"]["id"] == parent && e["status"] == "down")
        .collect::<Vec<_>>();
    assert_eq!(parent_events.len(), 1);
    assert_eq!(parent_events[0]["held_children"], 3);
    assert!(parent_events[0].get("held").is_none());
    for child in children {
        let events = said(&h, child).await;
        assert_eq!(
            events.last().unwrap(),
            &(
                "transition".to_string(),
                "down".to_string(),
                Some("blocked_by_parent".to_string())
            )
        );
        let incident = open_incident(&h, child).await.unwrap();
        assert_eq!(incident.blocked_by, vec![parent]);
        assert_eq!(incident.alert_held.as_deref(), Some("blocked_by_parent"));
    }

    // One child recovers behind its parent: nothing at all.
    h.record(&[result(children[2], at(35), CheckOutcome::Pass)])
        .await;
    // The parent recovers; the two children still down alert then.
    h.record(&[result(parent, at(40), CheckOutcome::Pass)])
        .await;
    for child in &children[..2] {
        eventually("the child's held alert released", || {
            let h = &h;
            async move {
                said(h, *child)
                    .await
                    .iter()
                    .any(|(alert, _, _)| alert == "released")
            }
        })
        .await;
    }
    for child in &children[..2] {
        let events = said(&h, *child).await;
        assert_eq!(
            alerted(&events),
            [("transition", "up"), ("released", "down")],
            "{events:?}"
        );
        let incident = open_incident(&h, *child).await.unwrap();
        assert_eq!(incident.alert_held, None);
    }
    let quiet = said(&h, children[2]).await;
    assert_eq!(alerted(&quiet), [("transition", "up")], "{quiet:?}");
    // The released child's recovery goes out.
    h.record(&[result(children[0], at(50), CheckOutcome::Pass)])
        .await;
    let events = said(&h, children[0]).await;
    assert_eq!(
        alerted(&events),
        [
            ("transition", "up"),
            ("released", "down"),
            ("transition", "up")
        ]
    );
}

#[tokio::test]
async fn a_flapping_monitor_sends_one_flapping_alert_and_one_release_when_stable_and_down() {
    let h = started().await;
    let id = h.monitor(|m| m.confirmation_count = 1).await;
    with_rules(
        &h,
        id,
        AlertRules {
            flap_threshold: Some(3),
            flap_window_secs: Some(600),
            flap_stable_secs: Some(2),
            ..AlertRules::default()
        },
    )
    .await;
    // Stable 2 s after the last change's time: the flips are all recorded
    // by then (one burst), so the sweeper ends the spell after them.
    let t0 = Utc::now();
    let flips: Vec<_> = (0..8)
        .map(|i| {
            let outcome = if i % 2 == 0 {
                CheckOutcome::Pass
            } else {
                CheckOutcome::Fail
            };
            result(id, t0 + Duration::milliseconds(i * 10), outcome)
        })
        .collect();
    h.record(&flips).await;
    eventually("flapping ended and the down alert released", || {
        let h = &h;
        async move {
            said(h, id)
                .await
                .iter()
                .any(|(alert, _, _)| alert == "released")
        }
    })
    .await;
    let events = said(&h, id).await;
    assert_eq!(events.len(), 9, "eight changes and the release: {events:?}");
    assert_eq!(
        alerted(&events),
        [
            ("transition", "up"),
            ("transition", "down"),
            ("transition", "up"),
            ("flapping", "down"),
            ("released", "down"),
        ],
        "{events:?}"
    );
    let row = h.monitor_row(id).await;
    assert_eq!((row.flapping_since, row.flap_changes), (None, None));
}
