//! Audit entries leave through the outbox: one the api-gateway writes (with
//! `uptime_db::audit_log::record`, in the transaction of its change) is
//! published by the recorder's relay on `uptime.events.audit_recorded.v1`,
//! as the contract's schema says.

use crate::common::Harness;
use uptime_contracts::audit::AuditRecordedV1;
use uptime_contracts::Message;

#[tokio::test]
async fn an_audit_entry_is_published_on_its_subject_matching_its_schema() {
    let h = Harness::started().await;
    let mut conn = h.conn().await;
    let stored = uptime_db::audit_log::record(
        &mut conn,
        uptime_db::audit_log::NewAuditEntry {
            org_id: h.user_id,
            actor_user_id: h.user_id,
            key_prefix: "upt_abcd".into(),
            address: Some("192.0.2.7".into()),
            action: "update".into(),
            resource_kind: "member".into(),
            resource_id: Some(h.user_id),
            changes: serde_json::json!({"role": {"before": "editor", "after": "viewer"}}),
        },
    )
    .await
    .unwrap();
    drop(conn);

    assert_eq!(AuditRecordedV1::SUBJECT, "uptime.events.audit_recorded.v1");
    let events = h.events(AuditRecordedV1::SUBJECT).await;
    assert_eq!(events.len(), 1, "{events:?}");
    // The published file, which the contracts' tests pin.
    let schema: serde_json::Value = serde_json::from_str(include_str!(
        "../../../../proto-schemas/audit-recorded.v1.json"
    ))
    .unwrap();
    let validator = jsonschema::validator_for(&schema).expect("valid schema");
    assert!(
        validator.is_valid(&events[0]),
        "{} does not match the audit-recorded.v1 schema",
        events[0]
    );
    let published = AuditRecordedV1::from_bytes(events[0].to_string().as_bytes()).unwrap();
    assert_eq!(
        (published.id, published.org_id, published.action.as_str()),
        (stored.id, h.user_id, "update")
    );
    assert_eq!(published.address.as_deref(), Some("192.0.2.7"));
    assert_eq!(published.changes, stored.changes);
}
