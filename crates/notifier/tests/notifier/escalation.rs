//! The escalation sweep against a real database, on an injected clock: the
//! intake notifies a policy monitor's first step and starts the escalation;
//! with nobody acknowledging, step two is written exactly when its delay
//! has passed, once however often the sweep runs; an acknowledgement before
//! the next delay stops it; the recovery reaches everyone notified.

use crate::common::*;
use chrono::{DateTime, Duration, Utc};
use notifier::escalation::{planner, Sweep};
use std::sync::Arc;
use uptime_db::deliveries::intake::{create_for_events, IntakeEvent};
use uptime_db::escalation_policies::{self, PolicyDefinition, Step};
use uptime_db::incidents::{Acknowledger, IncidentAlert, NewIncident};
use uptime_db::models::NewAlertContact;
use uuid::Uuid;

async fn webhook_contact(world: &World, org_id: i64, name: &str) -> i64 {
    uptime_db::contacts::create(
        &mut *world.conn().await,
        &NewAlertContact {
            org_id,
            kind: "webhook".into(),
            name: name.into(),
            value: format!("https://hooks.example.com/{name}"),
            verified: true,
            verification_token_sha256: None,
            signing_secret: Some(SECRET.into()),
            secret_sealed: None,
            options: serde_json::json!({}),
            event_kinds: None,
            min_severity: 0,
        },
    )
    .await
    .expect("insert contact")
    .id
}

fn event(
    event_id: Uuid,
    monitor_id: i64,
    event_type: &str,
    at: DateTime<Utc>,
    incident_id: Uuid,
    escalates: bool,
) -> IntakeEvent {
    IntakeEvent {
        event_id,
        monitor_id,
        event_type: event_type.into(),
        payload: serde_json::json!({"event": event_type, "occurred_at": at}).to_string(),
        severity: 2,
        incident_id: Some(incident_id),
        escalates,
    }
}

fn whole_seconds(t: DateTime<Utc>) -> DateTime<Utc> {
    DateTime::from_timestamp(t.timestamp(), 0).unwrap()
}

async fn contacts_of(world: &World, event_id: Uuid) -> Vec<i64> {
    let mut ids: Vec<i64> = world
        .deliveries_of(event_id)
        .await
        .into_iter()
        .map(|(d, _)| d.contact_id)
        .collect();
    ids.sort_unstable();
    ids
}

#[tokio::test]
async fn an_unacknowledged_incident_reaches_step_two_after_its_delay_and_stops_when_acknowledged() {
    let world = World::start().await;
    let org = world.user("ops").await;
    let monitor = world.monitor(org, "Shop", true).await;
    let first = webhook_contact(&world, org, "first").await;
    let second = webhook_contact(&world, org, "second").await;
    let third = webhook_contact(&world, org, "third").await;
    let mut conn = world.conn().await;
    let policy = escalation_policies::create(
        &mut conn,
        org,
        &PolicyDefinition {
            name: "on call".into(),
            repeat_count: 0,
            steps: vec![
                Step {
                    delay_secs: 60,
                    contact_ids: vec![first],
                },
                Step {
                    delay_secs: 120,
                    contact_ids: vec![second],
                },
                Step {
                    delay_secs: 600,
                    contact_ids: vec![third],
                },
            ],
        },
    )
    .await
    .unwrap();
    escalation_policies::set_for_monitor(&mut conn, monitor.id, Some(policy.id))
        .await
        .unwrap();

    // The recorder opens the incident at t0; the intake takes its event.
    // Whole seconds: PostgreSQL keeps microseconds (and rounds).
    let t0 = whole_seconds(Utc::now() - Duration::hours(1));
    let incident = Uuid::new_v4();
    let opened = Uuid::new_v4();
    uptime_db::incidents::open(
        &mut conn,
        &[NewIncident {
            id: incident,
            org_id: org,
            monitor_id: monitor.id,
            started_at: t0,
            resolved_at: None,
            cause: None,
            alerts: vec![IncidentAlert {
                event_id: opened,
                kind: "transition".into(),
                status: "down".into(),
                at: t0,
                held: None,
            }],
        }],
    )
    .await
    .unwrap();
    let down = event(opened, monitor.id, "monitor.down", t0, incident, true);
    let outcome = create_for_events(&mut conn, std::slice::from_ref(&down))
        .await
        .unwrap();
    assert_eq!(outcome.escalations_started, 1);
    assert_eq!(
        contacts_of(&world, opened).await,
        [first],
        "step one at once"
    );
    // Redelivered: nothing new, not restarted.
    let again = create_for_events(&mut conn, &[down]).await.unwrap();
    assert_eq!((again.created, again.escalations_started), (0, 0));
    drop(conn);

    let sweep = Sweep {
        pool: world.env.db.pool.clone(),
        interval: std::time::Duration::from_secs(1),
        batch: 10,
        deliveries_added: Arc::default(),
    };
    let step_two = planner::step_event_id(incident, 1, 0);
    let step_three = planner::step_event_id(incident, 2, 0);
    // Nobody acknowledges: not before step one's delay, at it.
    let before = sweep.once(t0 + Duration::seconds(59)).await.unwrap();
    assert_eq!(before.due, 0);
    assert!(contacts_of(&world, step_two).await.is_empty());
    let due = t0 + Duration::seconds(60);
    let reached = sweep.once(due).await.unwrap();
    assert_eq!((reached.steps, reached.deliveries), (1, 1));
    assert_eq!(contacts_of(&world, step_two).await, [second]);
    // Swept again at the same instant: nothing is due, nothing doubles.
    assert_eq!(sweep.once(due).await.unwrap().due, 0);
    assert_eq!(contacts_of(&world, step_two).await, [second]);

    // Acknowledged before step two's delay (120 s) is over: when it is,
    // the escalation stops instead of reaching step three.
    let mut conn = world.conn().await;
    uptime_db::incidents::acknowledge(
        &mut conn,
        Some(uptime_db::reach::Reach::org(org)),
        incident,
        &Acknowledger::Key {
            user_id: org,
            key_prefix: "upt_test".into(),
        },
        due + Duration::seconds(30),
    )
    .await
    .unwrap();
    let stopped = sweep.once(due + Duration::seconds(120)).await.unwrap();
    assert_eq!((stopped.due, stopped.steps), (1, 0));
    assert!(contacts_of(&world, step_three).await.is_empty());
    let state = uptime_db::escalations::state_of(&mut conn, incident)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(state.stopped.as_deref(), Some("acknowledged"));
    assert_eq!(state.next_at, None);
    assert_eq!(state.notified_contact_ids, [first, second]);
    assert_eq!(sweep.once(due + Duration::hours(1)).await.unwrap().due, 0);

    // The recovery reaches both people paged, not the third.
    let recovered = Uuid::new_v4();
    create_for_events(
        &mut conn,
        &[event(
            recovered,
            monitor.id,
            "monitor.up",
            due + Duration::seconds(200),
            incident,
            false,
        )],
    )
    .await
    .unwrap();
    assert_eq!(contacts_of(&world, recovered).await, [first, second]);
}

#[tokio::test]
async fn with_nobody_acknowledging_the_policy_repeats_then_ends() {
    let world = World::start().await;
    let org = world.user("ops").await;
    let monitor = world.monitor(org, "Shop", true).await;
    let first = webhook_contact(&world, org, "first").await;
    let second = webhook_contact(&world, org, "second").await;
    let mut conn = world.conn().await;
    let policy = escalation_policies::create(
        &mut conn,
        org,
        &PolicyDefinition {
            name: "twice".into(),
            repeat_count: 1,
            steps: vec![
                Step {
                    delay_secs: 60,
                    contact_ids: vec![first],
                },
                Step {
                    delay_secs: 60,
                    contact_ids: vec![second],
                },
            ],
        },
    )
    .await
    .unwrap();
    escalation_policies::set_for_monitor(&mut conn, monitor.id, Some(policy.id))
        .await
        .unwrap();
    // Whole seconds: PostgreSQL keeps microseconds (and rounds).
    let t0 = whole_seconds(Utc::now() - Duration::hours(1));
    let incident = Uuid::new_v4();
    let opened = Uuid::new_v4();
    uptime_db::incidents::open(
        &mut conn,
        &[NewIncident {
            id: incident,
            org_id: org,
            monitor_id: monitor.id,
            started_at: t0,
            resolved_at: None,
            cause: None,
            alerts: vec![],
        }],
    )
    .await
    .unwrap();
    create_for_events(
        &mut conn,
        &[event(
            opened,
            monitor.id,
            "monitor.down",
            t0,
            incident,
            true,
        )],
    )
    .await
    .unwrap();
    drop(conn);
    let sweep = Sweep {
        pool: world.env.db.pool.clone(),
        interval: std::time::Duration::from_secs(1),
        batch: 10,
        deliveries_added: Arc::default(),
    };
    let mut now = t0;
    let mut notified = Vec::new();
    for _ in 0..5 {
        now += Duration::seconds(60);
        if sweep.once(now).await.unwrap().steps == 1 {
            notified.push(now - t0);
        }
    }
    // Step two at 60 s, step one again (second run) at 120 s, step two at
    // 180 s; at 240 s the policy is exhausted.
    assert_eq!(
        notified,
        [
            Duration::seconds(60),
            Duration::seconds(120),
            Duration::seconds(180)
        ]
    );
    assert_eq!(
        contacts_of(&world, planner::step_event_id(incident, 0, 1)).await,
        [first]
    );
    assert_eq!(
        contacts_of(&world, planner::step_event_id(incident, 1, 1)).await,
        [second]
    );
    let state = uptime_db::escalations::state_of(&mut *world.conn().await, incident)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(state.stopped.as_deref(), Some("exhausted"));
}
