//! Incidents: a confirmed down period opens one in the batch that records
//! the change to `down`, the change out of it resolves it, and the events
//! name it.

use crate::common::{result, state_changed_subject, Harness};
use chrono::{Duration, SubsecRound, Utc};
use uptime_contracts::CheckOutcome;
use uptime_db::incidents::{self, IncidentFilter};
use uuid::Uuid;

async fn incidents_of(h: &Harness, org_id: i64, monitor_id: i64) -> Vec<incidents::Incident> {
    let mut conn = h.conn().await;
    incidents::list_page(
        &mut conn,
        uptime_db::reach::Reach::org(org_id),
        &IncidentFilter {
            monitor_id: Some(monitor_id),
            ..IncidentFilter::default()
        },
        None,
        100,
    )
    .await
    .unwrap()
}

#[tokio::test]
async fn a_confirmed_down_period_is_one_incident_named_by_its_events() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.confirmation_count = 2).await;
    let org = h.monitor_row(id).await.org_id;
    let t0 = Utc::now() - Duration::minutes(10);
    let mut first_failure = result(id, t0 + Duration::seconds(60), CheckOutcome::Fail);
    first_failure.error = Some("connection refused".into());
    let mut confirming = result(id, t0 + Duration::seconds(120), CheckOutcome::Fail);
    confirming.error = Some("connection refused".into());
    h.record(&[
        result(id, t0, CheckOutcome::Pass),
        first_failure,
        confirming.clone(),
    ])
    .await;
    // An unconfirmed failure opened nothing; the confirmed one did.
    let open = incidents_of(&h, org, id).await;
    assert_eq!(open.len(), 1, "{open:#?}");
    assert_eq!(open[0].started_at, confirming.checked_at.trunc_subsecs(6));
    assert_eq!(open[0].resolved_at, None);
    assert_eq!(open[0].cause.as_deref(), Some("connection refused"));

    // A redelivered result opens nothing more.
    h.publish_with_id(&confirming, &Uuid::new_v4().to_string())
        .await;
    h.record(&[result(id, t0 + Duration::seconds(180), CheckOutcome::Fail)])
        .await;
    assert_eq!(incidents_of(&h, org, id).await.len(), 1);

    let recovery = result(id, t0 + Duration::seconds(240), CheckOutcome::Pass);
    h.record(std::slice::from_ref(&recovery)).await;
    let resolved = incidents_of(&h, org, id).await;
    assert_eq!(resolved.len(), 1);
    assert_eq!(
        resolved[0].resolved_at,
        Some(recovery.checked_at.trunc_subsecs(6))
    );
    let alerts = resolved[0].alert_list();
    let kinds: Vec<(&str, &str)> = alerts
        .iter()
        .map(|a| (a.kind.as_str(), a.status.as_str()))
        .collect();
    assert_eq!(kinds, [("transition", "down"), ("transition", "up")]);

    // The events name the incident: the first up names none.
    let events = h.events(state_changed_subject()).await;
    let named: Vec<(String, Option<String>)> = events
        .iter()
        .map(|e| {
            (
                e["status"].as_str().unwrap().to_string(),
                e["incident_id"].as_str().map(String::from),
            )
        })
        .collect();
    let incident = resolved[0].id.to_string();
    assert_eq!(
        named,
        [
            ("up".to_string(), None),
            ("down".to_string(), Some(incident.clone())),
            ("up".to_string(), Some(incident)),
        ]
    );
    assert_eq!(alerts[0].event_id.to_string(), events[1]["event_id"]);
}

#[tokio::test]
async fn down_and_up_in_one_batch_and_down_again_are_two_incidents() {
    let h = Harness::started().await;
    let id = h.monitor(|m| m.confirmation_count = 1).await;
    let org = h.monitor_row(id).await.org_id;
    let t0 = Utc::now() - Duration::minutes(10);
    h.record(&[
        result(id, t0, CheckOutcome::Fail),
        result(id, t0 + Duration::seconds(60), CheckOutcome::Pass),
        result(id, t0 + Duration::seconds(120), CheckOutcome::Fail),
    ])
    .await;
    let all = incidents_of(&h, org, id).await;
    assert_eq!(all.len(), 2, "{all:#?}");
    // Newest first: the second is open, the first resolved in the same batch.
    assert_eq!(all[0].resolved_at, None);
    assert!(all[1].resolved_at.is_some());
}
