//! Rolling upgrades: results of the previous `check-result` version, as
//! publishers of the release before sent them, are still recorded beside the
//! current version's (`uptime_contracts::versions`).

use crate::common::{result, Harness};
use chrono::Utc;
use uptime_contracts::{subjects, CheckOutcome, MonitorStatus, DEFAULT_REGION};

#[tokio::test]
async fn a_pinned_previous_version_result_is_still_recorded() {
    let h = Harness::started().await;
    let id = h.monitor(|_| {}).await;
    // The pinned example, moved to this monitor and now: a scheduler or
    // api-gateway of the release before may still send it.
    let path = format!(
        "{}/../../proto-schemas/examples/check-result.v2.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut old: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let check_id = uuid::Uuid::new_v4();
    old["check_id"] = check_id.to_string().into();
    old["monitor_id"] = id.into();
    old["definition_version"] = 1.into();
    old["checked_at"] = Utc::now().to_rfc3339().into();
    old["due_at"] = Utc::now().to_rfc3339().into();
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(uptime_contracts::MSG_ID_HEADER, check_id.to_string());
    h.js.publish_with_headers(
        subjects::CHECK_RESULT_V2,
        headers,
        serde_json::to_vec(&old).unwrap().into(),
    )
    .await
    .unwrap()
    .await
    .unwrap();
    // Beside it, a result of the current version.
    let current = result(id, Utc::now(), CheckOutcome::Pass);
    h.record(std::slice::from_ref(&current)).await;

    let rows = h.results_of(id).await;
    let old_row = rows
        .iter()
        .find(|r| r.check_id == check_id)
        .expect("the previous version's result is stored");
    assert_eq!(old_row.status, "down");
    assert_eq!(old_row.http_status, Some(503));
    assert_eq!(old_row.definition_version, Some(1));
    // Read as the default region's, outside any round.
    assert_eq!(old_row.region.as_deref(), Some(DEFAULT_REGION));
    assert_eq!(old_row.round_id, None);
    assert!(rows.iter().any(|r| r.check_id == current.check_id));
    assert_eq!(h.monitor_row(id).await.status, MonitorStatus::Up);
}
