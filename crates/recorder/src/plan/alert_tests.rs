//! The planner's alert rules: dependencies, flapping and reminders, on rows
//! and results built in memory (the clock is the results' times).
use super::tests::{monitor, result, t};
use super::*;
use uptime_contracts::AlertKind;

fn state_events(fx: &Effects) -> Vec<StateChange> {
    fx.events
        .iter()
        .filter(|e| e.subject == <StateChange as uptime_contracts::Message>::SUBJECT)
        .map(|e| serde_json::from_value(e.payload.clone()).unwrap())
        .collect()
}

#[test]
fn a_monitor_without_alert_rules_needs_no_facts_but_for_down_changes() {
    let m = monitor(1);
    let up = result(1, 0, CheckOutcome::Pass, 10);
    let fx = effects(std::slice::from_ref(&m), &[&up], t(1));
    assert!(fx.facts_needed.is_empty(), "pending -> up reads nothing");
    let down = result(1, 5, CheckOutcome::Fail, 10);
    let fx = effects(std::slice::from_ref(&m), &[&up, &down], t(10));
    assert_eq!(fx.facts_needed.children, Vec::<i64>::new());
    assert_eq!(fx.facts_needed.down_changes, vec![1]);
    assert!(fx.incidents_alerting.is_empty(), "nothing to write");
    assert!(fx.flap_updates.is_empty());
}

#[test]
fn a_child_behind_a_down_parent_is_held_and_blocked_by_it() {
    let mut child = monitor(2);
    child.rules.depends_on = vec![1, 9];
    let down = result(2, 0, CheckOutcome::Fail, 0);
    let first = effects(std::slice::from_ref(&child), &[&down], t(1));
    assert_eq!(first.facts_needed.children, vec![2]);
    let facts = AlertFacts {
        blocking_parents: HashMap::from([(2, vec![1])]),
        ..AlertFacts::default()
    };
    let fx = effects_with_facts(
        std::slice::from_ref(&child),
        &[&down],
        &HashMap::new(),
        &facts,
        t(1),
    );
    let events = state_events(&fx);
    assert_eq!(events[0].held, Some(HoldReason::BlockedByParent));
    assert_eq!(events[0].blocked_by, vec![1]);
    let opened = &fx.incidents_alerting[0];
    assert_eq!(opened.alert_held.as_deref(), Some("blocked_by_parent"));
    assert_eq!(opened.blocked_by, vec![1]);
    assert_eq!(
        opened.next_reminder_at, None,
        "no reminders for a held alert"
    );
}

#[test]
fn a_parent_says_how_many_dependents_it_holds() {
    let parent = monitor(1);
    let down = result(1, 0, CheckOutcome::Fail, 0);
    let facts = AlertFacts {
        held_children: HashMap::from([(1, 3)]),
        ..AlertFacts::default()
    };
    let fx = effects_with_facts(
        std::slice::from_ref(&parent),
        &[&down],
        &HashMap::new(),
        &facts,
        t(1),
    );
    let events = state_events(&fx);
    assert_eq!((events[0].held, events[0].held_children), (None, 3));
    assert_eq!(fx.incidents_alerting[0].held_children, 3);
}

#[test]
fn the_recovery_of_a_held_incident_is_held_too() {
    let mut m = monitor(1);
    m.status = MonitorStatus::Down;
    m.status_since = Some(t(-60));
    let up = result(1, 0, CheckOutcome::Pass, 10);
    let facts = AlertFacts {
        held_incidents: HashMap::from([(1, HoldReason::BlockedByParent)]),
        ..AlertFacts::default()
    };
    let fx = effects_with_facts(
        std::slice::from_ref(&m),
        &[&up],
        &HashMap::new(),
        &facts,
        t(1),
    );
    assert_eq!(state_events(&fx)[0].held, Some(HoldReason::BlockedByParent));
    // Down and up within one batch: the opened incident's hold decides.
    let mut fresh = monitor(2);
    fresh.rules.depends_on = vec![1];
    let facts = AlertFacts {
        blocking_parents: HashMap::from([(2, vec![1])]),
        ..AlertFacts::default()
    };
    let (a, b, c) = (
        result(2, 0, CheckOutcome::Pass, 10),
        result(2, 5, CheckOutcome::Fail, 0),
        result(2, 10, CheckOutcome::Pass, 10),
    );
    let fx = effects_with_facts(
        std::slice::from_ref(&fresh),
        &[&a, &b, &c],
        &HashMap::new(),
        &facts,
        t(11),
    );
    let held: Vec<Option<HoldReason>> = state_events(&fx).iter().map(|e| e.held).collect();
    assert_eq!(held, vec![Some(HoldReason::BlockedByParent); 3]);
}

#[test]
fn a_flapping_monitor_alerts_once_and_keeps_its_state() {
    let mut m = monitor(1);
    m.rules.flap_threshold = Some(3);
    m.rules.flap_window_secs = Some(600);
    let outcomes = [
        CheckOutcome::Pass,
        CheckOutcome::Fail,
        CheckOutcome::Pass,
        CheckOutcome::Fail,
        CheckOutcome::Pass,
        CheckOutcome::Fail,
    ];
    let results: Vec<CheckResult> = outcomes
        .iter()
        .enumerate()
        .map(|(i, o)| result(1, i as i64 * 10, *o, 10))
        .collect();
    let refs: Vec<&CheckResult> = results.iter().collect();
    let fx = effects(std::slice::from_ref(&m), &refs, t(100));
    let said: Vec<(AlertKind, Option<HoldReason>)> = state_events(&fx)
        .iter()
        .map(|e| (e.alert, e.held))
        .collect();
    use AlertKind::*;
    assert_eq!(
        said,
        vec![
            (Transition, None),
            (Transition, None),
            (Transition, None),
            (Flapping, None),
            (Transition, Some(HoldReason::Flapping)),
            (Transition, Some(HoldReason::Flapping)),
        ]
    );
    let saved = &fx.flap_updates[0];
    assert_eq!(saved.since, Some(t(30)));
    assert_eq!(saved.changes.as_ref().map(Vec::len), Some(4));
    // The last incident's down alert is held by flapping.
    let last = fx.incidents_alerting.last().unwrap();
    assert_eq!(last.alert_held.as_deref(), Some("flapping"));
}

#[test]
fn an_alerted_incident_of_a_monitor_with_reminders_schedules_the_first() {
    let mut m = monitor(1);
    m.rules.reminder_interval_secs = Some(300);
    let down = result(1, 0, CheckOutcome::Fail, 0);
    let fx = effects(std::slice::from_ref(&m), &[&down], t(1));
    assert_eq!(fx.incidents_alerting[0].next_reminder_at, Some(t(300)));
    assert_eq!(fx.incidents_alerting[0].alert_held, None);
}
