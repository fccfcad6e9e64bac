//! The alert verdict's rules, case by case.
use super::*;

fn contact(id: i64, events: Option<Vec<&'static str>>, min_severity: u8) -> ContactFact {
    ContactFact {
        id,
        receiver: format!("c{id}"),
        events,
        min_severity,
    }
}

fn event(
    n: u128,
    monitor_id: i64,
    event_type: &'static str,
    previous: &str,
    at_s: i64,
) -> EventFact {
    EventFact {
        event_id: Uuid::from_u128(n),
        monitor_id,
        event_type: Some(event_type),
        previous_status: Some(previous.into()),
        held: None,
        incident_id: None,
        days_left: None,
        occurred_ms: at_s * 1000,
        written_ms: at_s * 1000 + 50,
    }
}

fn receipt(receiver: &str, n: u128) -> Receipt {
    Receipt {
        receiver: receiver.into(),
        event_id: Some(Uuid::from_u128(n)),
    }
}

fn inputs(
    events: Vec<EventFact>,
    contacts: Vec<ContactFact>,
    links: &[(i64, &[i64])],
) -> AlertInputs {
    AlertInputs {
        events,
        contacts,
        monitor_contacts: links.iter().map(|(m, c)| (*m, c.to_vec())).collect(),
        until_ms: 1_000_000_000,
        ..AlertInputs::default()
    }
}

#[test]
fn each_change_once_to_each_contact_that_wants_it() {
    let i = inputs(
        vec![
            event(1, 10, "monitor.up", "pending", 1),
            event(2, 10, "monitor.down", "up", 20),
            event(3, 10, "monitor.up", "down", 40),
            event(4, 10, "monitor.degraded", "up", 60),
        ],
        vec![
            contact(1, None, 0),
            contact(2, None, 2),
            contact(3, Some(vec!["monitor.down"]), 0),
        ],
        &[(10, &[1, 2, 3])],
    );
    let owed = owed(&i);
    // c1 all four; c2 (critical) the down and the recovery from it; c3 the down.
    assert_eq!(owed.len(), 4 + 2 + 1);
    let receipts: Vec<Receipt> = owed
        .keys()
        .map(|(e, r)| Receipt {
            receiver: r.clone(),
            event_id: *e,
        })
        .collect();
    let v = judge(&owed, &receipts);
    assert!(v.clean(), "{v:?}");
    assert_eq!((v.expected, v.sent), (7, 7));
}

#[test]
fn a_second_copy_a_missing_one_and_an_unwanted_one_are_each_caught() {
    let i = inputs(
        vec![
            event(1, 10, "monitor.down", "up", 20),
            event(2, 10, "monitor.up", "pending", 1),
        ],
        vec![contact(1, None, 0), contact(2, None, 2)],
        &[(10, &[1, 2])],
    );
    let owed = owed(&i);
    let v = judge(
        &owed,
        &[receipt("c1", 1), receipt("c1", 1), receipt("c2", 2)],
    );
    assert_eq!((v.doubled, v.missing, v.unexpected), (1, 2, 1), "{v:?}");
    assert!(!v.clean());
}

#[test]
fn held_changes_and_pending_alert_nobody() {
    let mut held = event(1, 10, "monitor.down", "up", 20);
    held.held = Some("maintenance".into());
    let mut pending = event(2, 10, "monitor.up", "up", 30);
    pending.event_type = None;
    let i = inputs(
        vec![held, pending],
        vec![contact(1, None, 0)],
        &[(10, &[1])],
    );
    assert!(owed(&i).is_empty());
    assert_eq!(judge(&owed(&i), &[receipt("c1", 1)]).unexpected, 1);
}

#[test]
fn certificate_warnings_are_critical_only_in_their_last_days() {
    let mut soon = event(1, 10, "ssl.expiring", "up", 5);
    soon.days_left = Some(2);
    let mut later = event(2, 10, "ssl.expiring", "up", 5);
    later.days_left = Some(10);
    let i = inputs(vec![soon, later], vec![contact(1, None, 2)], &[(10, &[1])]);
    let keys: Vec<_> = owed(&i).into_keys().collect();
    assert_eq!(keys, vec![(Some(Uuid::from_u128(1)), "c1".to_string())]);
}

#[test]
fn events_after_the_end_may_or_may_not_have_arrived() {
    let mut i = inputs(
        vec![event(1, 10, "monitor.down", "up", 20)],
        vec![contact(1, None, 0)],
        &[(10, &[1])],
    );
    i.until_ms = 10_000;
    let owed = owed(&i);
    assert!(judge(&owed, &[]).clean());
    assert!(judge(&owed, &[receipt("c1", 1)]).clean());
    assert!(!judge(&owed, &[receipt("c1", 1), receipt("c1", 1)]).clean());
}

fn escalation(acknowledged_s: Option<i64>) -> AlertInputs {
    let incident = Uuid::from_u128(99);
    let mut down = event(1, 10, "monitor.down", "up", 100);
    down.incident_id = Some(incident);
    let mut up = event(2, 10, "monitor.up", "down", 260);
    up.incident_id = Some(incident);
    let mut i = inputs(
        vec![down, up],
        vec![contact(1, None, 0), contact(2, None, 0)],
        &[],
    );
    i.policies.insert(
        10,
        PolicyFact {
            steps: vec![(vec![1], 60), (vec![2], 60)],
            repeat_count: 1,
        },
    );
    i.incidents.insert(
        incident,
        IncidentFact {
            acknowledged_ms: acknowledged_s.map(|s| s * 1000),
            resolved_ms: Some(260_000),
        },
    );
    i
}

#[test]
fn a_second_step_is_told_after_the_first_waited_and_hears_the_recovery() {
    // Acknowledged at 190: step two (at 160) told, the repeat (at 220) not.
    let owed = owed(&escalation(Some(190)));
    let once = |n: u128, c: &str| {
        owed.get(&(Some(Uuid::from_u128(n)), c.to_string()))
            .copied()
    };
    assert_eq!(once(1, "c1"), Some(Owed::ONCE));
    assert_eq!(once(1, "c2"), Some(Owed::ONCE));
    assert_eq!(once(2, "c1"), Some(Owed::ONCE));
    assert_eq!(
        once(2, "c2"),
        Some(Owed::ONCE),
        "everyone told hears the end"
    );
}

#[test]
fn unacknowledged_the_policy_starts_again_and_the_first_step_is_told_twice() {
    // Never acknowledged, resolved at 260: steps at 160 (c2), 220 (c1 again).
    let owed = owed(&escalation(None));
    assert_eq!(
        owed.get(&(Some(Uuid::from_u128(1)), "c1".to_string())),
        Some(&Owed { min: 2, max: 2 })
    );
}

#[test]
fn a_step_due_as_the_incident_is_acknowledged_may_go_either_way() {
    let owed = owed(&escalation(Some(162)));
    assert_eq!(
        owed.get(&(Some(Uuid::from_u128(1)), "c2".to_string())),
        Some(&Owed::AT_MOST_ONCE)
    );
}

#[test]
fn test_alerts_are_owed_as_sent() {
    let mut i = inputs(vec![], vec![contact(1, None, 0)], &[]);
    i.test_alerts.insert(1, 1);
    let owed = owed(&i);
    let test = Receipt {
        receiver: "c1".into(),
        event_id: None,
    };
    assert!(judge(&owed, std::slice::from_ref(&test)).clean());
    assert_eq!(judge(&owed, &[]).missing, 1);
    assert_eq!(judge(&owed, &[test.clone(), test]).doubled, 1);
}
