//! Reading a due check of either message version, and deciding whether it is
//! still worth running. Pure functions: the clock is a parameter.

use chrono::{DateTime, TimeDelta, Utc};
use uptime_contracts::{
    subjects, CheckDueV1, CheckDueV2, CheckResultV1, DueVersioning, Message, Trigger,
};

/// A due check as received: the version-1 fields, plus what version 2 adds
/// when it came as version 2 (its result then goes out as version 2 too).
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub due: CheckDueV1,
    pub versioning: Option<DueVersioning>,
}

/// Decodes `payload` by the version its `subject` names.
pub fn decode(subject: &str, payload: &[u8]) -> Result<Received, serde_json::Error> {
    if subject == subjects::CHECK_DUE_V1 {
        return CheckDueV1::from_bytes(payload).map(|due| Received {
            due,
            versioning: None,
        });
    }
    // Version 2 and anything newer on the stream's subjects: a newer version
    // adds fields, which serde ignores, so it reads as version 2.
    let (due, versioning) = CheckDueV2::from_bytes(payload)?.into_parts();
    Ok(Received {
        due,
        versioning: Some(versioning),
    })
}

impl Received {
    /// Whether running this check now would be pointless: a scheduled check
    /// received more than one interval after it was due (after an outage,
    /// say) has been overtaken by the monitor's next slot, which runs
    /// instead. Manual and heartbeat checks are never stale: somebody is
    /// waiting for exactly this one. A version-1 due check carries no
    /// interval and always runs.
    pub fn is_stale(&self, now: DateTime<Utc>) -> bool {
        let Some(versioning) = self.versioning else {
            return false;
        };
        self.due.trigger == Trigger::Scheduled
            && now - self.due.due_at > TimeDelta::seconds(i64::from(versioning.interval_secs))
    }

    /// The message to publish for `result`: the version the due check came in.
    pub fn publishable(&self, result: CheckResultV1) -> Publishable {
        match self.versioning {
            None => Publishable::V1(result),
            Some(v) => Publishable::V2(result.with_definition_version(v.definition_version)),
        }
    }
}

/// A result in the version its due check asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Publishable {
    V1(CheckResultV1),
    V2(uptime_contracts::CheckResultV2),
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::{CheckSpecV1, MonitorKind};
    use uuid::Uuid;

    fn v2(trigger: Trigger, due_at: DateTime<Utc>) -> CheckDueV2 {
        CheckDueV2 {
            check_id: Uuid::new_v4(),
            monitor_id: 1,
            definition_version: 4,
            interval_secs: 60,
            trigger,
            due_at,
            spec: CheckSpecV1 {
                kind: MonitorKind::Http,
                target: "http://127.0.0.1/".into(),
                timeout_secs: 5,
                expected_status: 200,
                keyword: None,
                keyword_type: None,
            },
        }
    }

    fn received(due: &CheckDueV2) -> Received {
        decode(subjects::CHECK_DUE_V2, &due.to_bytes()).unwrap()
    }

    #[test]
    fn a_scheduled_check_is_stale_only_past_one_interval() {
        let due_at = Utc::now();
        let check = received(&v2(Trigger::Scheduled, due_at));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(59)));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(60)));
        assert!(check.is_stale(due_at + TimeDelta::seconds(61)));
    }

    #[test]
    fn manual_and_version_one_checks_are_never_stale() {
        let due_at = Utc::now();
        let hours_later = due_at + TimeDelta::hours(5);
        assert!(!received(&v2(Trigger::Manual, due_at)).is_stale(hours_later));
        let (v1, _) = v2(Trigger::Scheduled, due_at).into_parts();
        let old = decode(subjects::CHECK_DUE_V1, &v1.to_bytes()).unwrap();
        assert_eq!(old.versioning, None);
        assert!(!old.is_stale(hours_later));
    }

    #[test]
    fn the_result_goes_out_in_the_version_of_its_due_check() {
        let due = v2(Trigger::Scheduled, Utc::now());
        let check = received(&due);
        let result = CheckResultV1 {
            check_id: due.check_id,
            monitor_id: 1,
            trigger: Trigger::Scheduled,
            due_at: Some(due.due_at),
            checked_at: due.due_at,
            outcome: uptime_contracts::CheckOutcome::Pass,
            latency_ms: Some(3),
            http_status: Some(200),
            error: None,
            ssl_expires_at: None,
            reporter: "c".into(),
        };
        match check.publishable(result.clone()) {
            Publishable::V2(r) => assert_eq!(r.definition_version, 4),
            other => panic!("expected version 2, got {other:?}"),
        }
        let old = Received {
            versioning: None,
            ..check
        };
        assert_eq!(old.publishable(result.clone()), Publishable::V1(result));
    }
}
