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
    use uptime_contracts::{check_due, CheckSpec, MonitorKind, Trigger};
    use uuid::Uuid;

    #[test]
    fn a_due_check_is_answered_with_its_region_and_round() {
        let round_id = Uuid::new_v4();
        let due = DueCheck {
            check_id: uptime_contracts::check_id_in_round(round_id, "eu", 3),
            monitor_id: 1,
            definition_version: 4,
            interval_secs: 60,
            trigger: Trigger::Scheduled,
            due_at: Utc::now(),
            spec: CheckSpec {
                kind: MonitorKind::Http,
                target: "http://127.0.0.1/".into(),
                timeout_secs: 5,
                expected_status: 200,
                keyword: None,
                keyword_type: None,
                options: Default::default(),
            },
            region: "eu".into(),
            round_id,
        };
        let (subject, payload) = check_due::encode(&due);
        let received = check_due::decode(&subject, &payload).unwrap();
        let observed = Observed {
            checked_at: due.due_at,
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some("refused".into()),
            ssl_expires_at: None,
        };
        let r = result_of(&received, observed, "c");
        assert_eq!(r.region, "eu");
        assert_eq!(r.round_id, Some(due.round_id));
        assert_eq!(r.check_id, due.check_id);
        assert_eq!(r.definition_version, 4);
        assert_eq!(r.due_at, Some(due.due_at));
        assert_eq!(r.error.as_deref(), Some("refused"));
        assert_eq!(r.reporter, "c");
    }
}
