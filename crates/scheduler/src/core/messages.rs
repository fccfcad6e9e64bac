//! The messages the scheduler publishes, built from what was read, and the
//! staged items they are built from.

use crate::queue::Due;
use crate::slots;
use crate::timing::Timing;
use chrono::{DateTime, Utc};
use uptime_contracts::{
    CheckDueV2, CheckOutcome, CheckResultV2, CheckSpecV1, KeywordType, MonitorKind, Trigger,
};
use uptime_db::schedule::CheckConfig;

pub(crate) const REPORTER: &str = "scheduler";

/// What a due check is made of, read from the row just before it is due.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub spec: CheckSpecV1,
    /// The row's definition version, which the check and its result carry.
    pub definition_version: i64,
}

/// An item taken off the timeline, waiting for its due instant.
#[derive(Debug)]
pub(crate) struct Ready {
    pub due: Due,
    /// The snapshot for a checked monitor; `None` for a heartbeat deadline,
    /// which is re-read at the deadline itself.
    pub snapshot: Option<Snapshot>,
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.due == other.due
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ready {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.due.cmp(&other.due)
    }
}

fn to_datetime(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// The checker's snapshot of a monitor row; `None` when the row cannot be
/// checked (which the API never lets happen).
pub(crate) fn spec_of(config: &CheckConfig) -> Option<CheckSpecV1> {
    let kind = MonitorKind::parse(&config.kind)?;
    if kind == MonitorKind::Heartbeat {
        return None;
    }
    Some(CheckSpecV1 {
        kind,
        target: config.target.clone()?,
        timeout_secs: config.timeout_secs.max(1) as u32,
        expected_status: u16::try_from(config.expected_status).ok()?,
        keyword: config.keyword.clone(),
        keyword_type: config.keyword_type.as_deref().and_then(KeywordType::parse),
    })
}

/// The scheduled check of `due`, named after its slot.
pub(crate) fn check_due(due: &Due, interval_secs: u32, snapshot: Snapshot) -> CheckDueV2 {
    CheckDueV2 {
        check_id: slots::check_id(due.monitor_id, due.due_at_ms),
        monitor_id: due.monitor_id,
        definition_version: snapshot.definition_version,
        interval_secs,
        trigger: Trigger::Scheduled,
        due_at: to_datetime(due.due_at_ms),
        spec: snapshot.spec,
    }
}

/// The failed result of the heartbeat period that ended at `due` without a ping.
pub(crate) fn missed_heartbeat(due: &Due, timing: &Timing) -> CheckResultV2 {
    let deadline = to_datetime(due.due_at_ms);
    CheckResultV2 {
        check_id: slots::missed_heartbeat_id(due.monitor_id, due.due_at_ms),
        monitor_id: due.monitor_id,
        definition_version: timing.definition_version,
        trigger: Trigger::Heartbeat,
        due_at: Some(deadline),
        checked_at: deadline,
        outcome: CheckOutcome::Fail,
        latency_ms: None,
        http_status: None,
        error: Some(format!(
            "no ping received within {}s + {}s grace",
            timing.interval_ms / 1000,
            timing.grace_ms / 1000
        )),
        ssl_expires_at: None,
        reporter: REPORTER.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(kind: &str, target: Option<&str>) -> CheckConfig {
        CheckConfig {
            id: 1,
            kind: kind.into(),
            interval_secs: 60,
            target: target.map(Into::into),
            timeout_secs: 5,
            expected_status: 204,
            keyword: Some("ok".into()),
            keyword_type: Some("not_contains".into()),
            definition_version: 1,
        }
    }

    #[test]
    fn the_snapshot_carries_the_row() {
        let spec = spec_of(&config("keyword", Some("https://example.com"))).unwrap();
        assert_eq!(spec.kind, MonitorKind::Keyword);
        assert_eq!(spec.target, "https://example.com");
        assert_eq!((spec.timeout_secs, spec.expected_status), (5, 204));
        assert_eq!(spec.keyword.as_deref(), Some("ok"));
        assert_eq!(spec.keyword_type, Some(KeywordType::NotContains));
    }

    #[test]
    fn rows_that_cannot_be_checked_have_no_snapshot() {
        assert!(spec_of(&config("http", None)).is_none());
        assert!(spec_of(&config("heartbeat", Some("https://x"))).is_none());
    }
}
