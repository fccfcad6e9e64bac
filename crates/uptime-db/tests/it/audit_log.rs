//! An audit entry and the outbox row that publishes it are written together
//! (migration 000019): the row carries the contract's message, about no
//! monitor, for the recorder's relay.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_contracts::audit::AuditRecordedV1;
use uptime_contracts::Message;
use uptime_db::audit_log::{self, AuditFilter, NewAuditEntry};
use uptime_db::recording::OutboxEvent;
use uptime_db::schema::outbox_events;
use uptime_testkit::TestDb;

#[tokio::test]
async fn an_entry_is_written_with_its_outbox_message() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let org = uptime_db::users::create(&mut conn, "acme")
        .await
        .unwrap()
        .id;
    let entry = audit_log::record(
        &mut conn,
        NewAuditEntry {
            org_id: org,
            actor_user_id: org,
            key_prefix: "upt_abcd".into(),
            address: Some("192.0.2.1".into()),
            action: "update".into(),
            resource_kind: "monitor".into(),
            resource_id: Some(42),
            changes: serde_json::json!({"name": {"before": "a", "after": "b"}}),
        },
    )
    .await
    .unwrap();

    let rows: Vec<OutboxEvent> = outbox_events::table
        .select(OutboxEvent::as_select())
        .load(&mut conn)
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    let row = &rows[0];
    assert_eq!(row.subject, AuditRecordedV1::SUBJECT);
    assert_eq!(row.monitor_id, None);
    assert!(row.published_at.is_none(), "left for the relay");
    let message: AuditRecordedV1 = serde_json::from_value(row.payload.clone()).unwrap();
    assert_eq!(message.event_id, row.id);
    assert_eq!(
        (
            message.id,
            message.org_id,
            message.resource_id,
            message.changes
        ),
        (entry.id, org, Some(42), entry.changes.clone())
    );

    let listed = audit_log::list_page(
        &mut conn,
        uptime_db::reach::Reach::org(org),
        &AuditFilter::default(),
        None,
        10,
    )
    .await
    .unwrap();
    assert_eq!(listed, [entry]);
}
