//! The `monitor-changed` message a write publishes once it has committed.

use crate::state::AppState;
use chrono::Utc;
use uptime_contracts::{MonitorChange, MonitorChangedV1};

/// Tells the scheduler (after the change committed). A failure is only
/// logged: the change is durable, and the scheduler resyncs from the database
/// periodically.
pub(super) async fn announce(state: &AppState, monitor_id: i64, change: MonitorChange) {
    let msg = MonitorChangedV1 {
        monitor_id,
        change,
        changed_at: Utc::now(),
    };
    let msg_id = format!("monitor-{monitor_id}-{}", uuid::Uuid::new_v4());
    if let Err(error) = state.publish(&msg_id, &msg).await {
        tracing::warn!(
            monitor_id,
            ?change,
            ?error,
            "monitor change not published; the scheduler will pick it up on its next resync"
        );
    }
}
