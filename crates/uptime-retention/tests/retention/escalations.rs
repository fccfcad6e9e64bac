//! `incident_escalations` has no rule of its own: a row goes with its
//! incident (foreign key, `ON DELETE CASCADE`), so pruning a resolved
//! incident prunes its escalation, and an open incident's stays.

use crate::fixtures::{connect, days_ago, now, seed};
use tokio_util::sync::CancellationToken;
use uptime_retention::pruning::prune;
use uptime_retention::RetentionSettings;
use uptime_testkit::TestDb;

#[tokio::test]
async fn an_escalation_goes_with_its_incident() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let monitor = seed::monitor(&mut conn, org).await;
    let incident = |started: i64, resolved: Option<i64>| uptime_db::incidents::NewIncident {
        id: uuid::Uuid::new_v4(),
        org_id: org,
        monitor_id: monitor,
        started_at: days_ago(started),
        resolved_at: resolved.map(days_ago),
        cause: None,
        alerts: Vec::new(),
    };
    let old = incident(400, Some(366));
    let open = incident(500, None);
    uptime_db::incidents::open(&mut conn, &[old.clone(), open.clone()])
        .await
        .unwrap();
    for id in [old.id, open.id] {
        diesel_async::RunQueryDsl::execute(
            diesel::sql_query(format!(
                "INSERT INTO incident_escalations \
                   (incident_id, monitor_id, payload, position, round, notified_at) \
                 VALUES ('{id}', {monitor}, '{{}}', 0, 0, now())"
            )),
            &mut conn,
        )
        .await
        .unwrap();
    }
    let out = prune(
        &mut conn,
        &RetentionSettings::default(),
        now(),
        &CancellationToken::new(),
    )
    .await;
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert_eq!(out.report.incidents, 1);
    let left = |id: uuid::Uuid| format!("incident_escalations WHERE incident_id = '{id}'");
    assert_eq!(seed::count(&mut conn, &left(old.id)).await, 0);
    assert_eq!(seed::count(&mut conn, &left(open.id)).await, 1);
}
