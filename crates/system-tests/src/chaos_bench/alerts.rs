//! "State changes alerted once": the alerting monitors' target is failing
//! for each fault's window and healthy after it. Each of them with a failed
//! check stored for the fault (a check during the window; under a fault
//! that delays checks past it there may be none) went down once and up
//! once, and should have alerted each once. Counted at the webhook receiver
//! by distinct `webhook-id` (a redelivery keeps its id: a receiver dedupes
//! it).

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::{HashMap, HashSet};
use uptime_db::schema::{check_results, monitors};
use uptime_testkit::receiver::ReceivedRequest;

#[derive(Debug, Default)]
pub struct AlertTally {
    /// Alerting monitors that went down (a failed check stored).
    pub changed: usize,
    /// Monitors with exactly one `monitor.down` / `monitor.up` alert.
    pub down_once: usize,
    pub up_once: usize,
    /// Alerts beyond the first of one monitor and event (distinct ids).
    pub repeated: usize,
}

impl AlertTally {
    pub fn cell(&self) -> String {
        format!(
            "down {} / up {} of {} that changed, repeated {}",
            self.down_once, self.up_once, self.changed, self.repeated
        )
    }
}

/// How many of the alerting monitors (named `alerting …`) have a failed
/// check stored that ran since `from` (a late check of an earlier slot
/// counts: it saw the failing target). `earliest_slot` bounds the slots
/// looked at (the partitions scanned).
pub async fn changed(
    pool: &uptime_db::Pool,
    from: DateTime<Utc>,
    earliest_slot: DateTime<Utc>,
) -> anyhow::Result<usize> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    let down: Vec<i64> = check_results::table
        .inner_join(monitors::table)
        .filter(monitors::name.like("alerting %"))
        .filter(check_results::slot_at.ge(earliest_slot))
        .filter(check_results::checked_at.ge(from))
        .filter(check_results::status.eq("down"))
        .select(check_results::monitor_id)
        .distinct()
        .load(&mut *conn)
        .await?;
    Ok(down.len())
}

/// Tallies `requests` (the receiver's, since the fault began) against the
/// `changed` monitors.
pub fn tally(requests: &[ReceivedRequest], changed: usize) -> AlertTally {
    let mut ids: HashMap<(i64, String), HashSet<String>> = HashMap::new();
    for r in requests {
        let body = r.json();
        let (Some(event), Some(monitor)) = (body["event"].as_str(), body["monitor"]["id"].as_i64())
        else {
            continue;
        };
        let id = r.header("webhook-id").unwrap_or_default().to_string();
        ids.entry((monitor, event.to_string()))
            .or_default()
            .insert(id);
    }
    let once = |event: &str| {
        ids.iter()
            .filter(|((_, e), set)| e == event && set.len() == 1)
            .count()
    };
    AlertTally {
        changed,
        down_once: once("monitor.down"),
        up_once: once("monitor.up"),
        repeated: ids.values().map(|set| set.len() - 1).sum(),
    }
}
