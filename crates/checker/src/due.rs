//! What a checker makes of a due check: it reads one with
//! `uptime_contracts::check_due::decode` (every live version, into a
//! [`DueCheck`]) and answers it with a [`CheckResult`] naming its region and
//! round. Pure functions: the clock is a parameter.

use chrono::{DateTime, Utc};
use uptime_contracts::{CheckOutcome, CheckResult, DueCheck};

/// What a probe found, before it becomes a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub checked_at: DateTime<Utc>,
    pub outcome: CheckOutcome,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
}

/// The result to publish for `due`: its check, region and round, and what
/// the probe observed.
pub fn result_of(due: &DueCheck, observed: Observed, reporter: &str) -> CheckResult {
    CheckResult {
        check_id: due.check_id,
        monitor_id: due.monitor_id,
        definition_version: due.definition_version,
        trigger: due.trigger,
        due_at: Some(due.due_at),
        checked_at: observed.checked_at,
        outcome: observed.outcome,
        latency_ms: observed.latency_ms,
        http_status: observed.http_status,
        error: observed.error,
        ssl_expires_at: observed.ssl_expires_at,
        reporter: reporter.to_string(),
        region: due.region.clone(),
        round_id: Some(due.round_id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::check_due;

    #[test]
    fn a_due_check_is_answered_with_its_region_and_round() {
        // The pinned example of the current version, as the scheduler sends it.
        let pinned = include_bytes!("../../../proto-schemas/examples/check-due.v5.json");
        let due = check_due::decode("uptime.checks.due.v5.eu", pinned).unwrap();
        let observed = Observed {
            checked_at: due.due_at,
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some("refused".into()),
            ssl_expires_at: None,
        };
        let r = result_of(&due, observed, "c");
        assert_eq!(r.region, "eu");
        assert_eq!(r.round_id, Some(due.round_id));
        assert_eq!(r.check_id, due.check_id);
        assert_eq!(r.definition_version, due.definition_version);
        assert_eq!(r.due_at, Some(due.due_at));
        assert_eq!(r.error.as_deref(), Some("refused"));
        assert_eq!(r.reporter, "c");
    }
}
