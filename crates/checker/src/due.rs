//! Reading a due check of a live message version (`check-due.v5`, the
//! current, and `.v4`, the previous: `uptime_contracts::versions`), and
//! deciding whether it is still worth running. Pure functions: the clock is
//! a parameter.
//!
//! Versions 1 to 3 were retired in issue 20: no service of the release before
//! published them, their stream's max age has passed since, and the
//! consumers' filters no longer take their subjects.

use chrono::{DateTime, TimeDelta, Utc};
use uptime_contracts::{
    subjects, CheckDueV4, CheckDueV5, CheckResultV3, CheckSpecV2, Message, Trigger,
};
use uuid::Uuid;

/// A due check as the checker works with it, whatever version it came as.
#[derive(Debug, Clone, PartialEq)]
pub struct DueCheck {
    pub check_id: Uuid,
    pub monitor_id: i64,
    pub trigger: Trigger,
    pub due_at: DateTime<Utc>,
    /// For version 5, without the basic-auth password: that is in
    /// `password_sealed`, opened only just before the request.
    pub spec: CheckSpecV2,
    /// Version 5: the basic-auth password, sealed.
    pub password_sealed: Option<Sealed>,
}

/// A sealed password as received (`uptime-secrets`); `Debug` shows none of it.
#[derive(Clone, PartialEq, Eq)]
pub struct Sealed(pub String);

impl std::fmt::Debug for Sealed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[sealed]")
    }
}

/// A due check as received, with what its result must carry back.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub due: DueCheck,
    /// The monitor's interval: a scheduled check later than that is stale.
    pub interval_secs: u32,
    pub round: RoundOf,
}

/// Where a due check belongs: its region and round, and the definition it
/// was made for.
#[derive(Debug, Clone, PartialEq)]
pub struct RoundOf {
    pub region: String,
    pub round_id: Uuid,
    pub definition_version: i64,
}

/// The prefix of the version-4 subjects, one per region.
fn is_v4(subject: &str) -> bool {
    is_under(subject, subjects::CHECK_DUE_V4_PREFIX)
}

/// The prefix of the version-5 subjects, one per region.
fn is_v5(subject: &str) -> bool {
    is_under(subject, subjects::CHECK_DUE_V5_PREFIX)
}

fn is_under(subject: &str, prefix: &str) -> bool {
    subject
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.starts_with('.'))
}

/// Why a due check cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum Undecodable {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// A subject of no live version (the filters take none, so only a
    /// consumer configured by hand delivers one).
    #[error("no live due-check version on subject {0}")]
    Subject(String),
}

/// Decodes `payload` by the version its `subject` names.
pub fn decode(subject: &str, payload: &[u8]) -> Result<Received, Undecodable> {
    if is_v5(subject) {
        let v5 = CheckDueV5::from_bytes(payload)?;
        let password_sealed = v5.spec.password_sealed().map(|s| Sealed(s.to_string()));
        return Ok(Received {
            interval_secs: v5.interval_secs,
            // The due check's own region: the consumer's filter delivers
            // only this checker's region's subjects anyway.
            round: RoundOf {
                region: v5.region,
                round_id: v5.round_id,
                definition_version: v5.definition_version,
            },
            due: DueCheck {
                check_id: v5.check_id,
                monitor_id: v5.monitor_id,
                trigger: v5.trigger,
                due_at: v5.due_at,
                spec: v5.spec.opened(None),
                password_sealed,
            },
        });
    }
    if is_v4(subject) {
        let v4 = CheckDueV4::from_bytes(payload)?;
        return Ok(Received {
            interval_secs: v4.interval_secs,
            round: RoundOf {
                region: v4.region,
                round_id: v4.round_id,
                definition_version: v4.definition_version,
            },
            due: DueCheck {
                check_id: v4.check_id,
                monitor_id: v4.monitor_id,
                trigger: v4.trigger,
                due_at: v4.due_at,
                spec: v4.spec,
                password_sealed: None,
            },
        });
    }
    Err(Undecodable::Subject(subject.to_string()))
}

/// What a probe found, before it becomes a result.
#[derive(Debug, Clone, PartialEq)]
pub struct Observed {
    pub checked_at: DateTime<Utc>,
    pub outcome: uptime_contracts::CheckOutcome,
    pub latency_ms: Option<u32>,
    pub http_status: Option<u16>,
    pub error: Option<String>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
}

impl Received {
    /// Whether running this check now would be pointless: a scheduled check
    /// received more than one interval after it was due (after an outage,
    /// say) has been overtaken by the monitor's next slot, which runs
    /// instead. Manual and heartbeat checks are never stale: somebody is
    /// waiting for exactly this one.
    pub fn is_stale(&self, now: DateTime<Utc>) -> bool {
        self.due.trigger == Trigger::Scheduled
            && now - self.due.due_at > TimeDelta::seconds(i64::from(self.interval_secs))
    }

    /// The result to publish: `check-result.v3`, naming the region and
    /// round, whichever live version the due check came as.
    pub fn result(&self, observed: Observed, reporter: &str) -> CheckResultV3 {
        CheckResultV3 {
            check_id: self.due.check_id,
            monitor_id: self.due.monitor_id,
            definition_version: self.round.definition_version,
            trigger: self.due.trigger,
            due_at: Some(self.due.due_at),
            checked_at: observed.checked_at,
            outcome: observed.outcome,
            latency_ms: observed.latency_ms,
            http_status: observed.http_status,
            error: observed.error,
            ssl_expires_at: observed.ssl_expires_at,
            reporter: reporter.to_string(),
            region: self.round.region.clone(),
            round_id: Some(self.round.round_id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::{CheckOutcome, MonitorKind};

    fn spec() -> CheckSpecV2 {
        CheckSpecV2 {
            kind: MonitorKind::Http,
            target: "http://127.0.0.1/".into(),
            timeout_secs: 5,
            expected_status: 200,
            keyword: None,
            keyword_type: None,
            options: Default::default(),
        }
    }

    fn v4(trigger: Trigger, due_at: DateTime<Utc>) -> CheckDueV4 {
        let round_id = Uuid::new_v4();
        CheckDueV4 {
            check_id: uptime_contracts::check_id_in_round(round_id, "eu", 3),
            monitor_id: 1,
            definition_version: 4,
            interval_secs: 60,
            trigger,
            due_at,
            spec: spec(),
            region: "eu".into(),
            round_id,
        }
    }

    fn received(due: &CheckDueV4) -> Received {
        decode(&due.subject(), &due.to_bytes()).unwrap()
    }

    fn observed(at: DateTime<Utc>) -> Observed {
        Observed {
            checked_at: at,
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some("refused".into()),
            ssl_expires_at: None,
        }
    }

    #[test]
    fn a_scheduled_check_is_stale_only_past_one_interval() {
        let due_at = Utc::now();
        let check = received(&v4(Trigger::Scheduled, due_at));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(59)));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(60)));
        assert!(check.is_stale(due_at + TimeDelta::seconds(61)));
    }

    #[test]
    fn manual_checks_are_never_stale() {
        let due_at = Utc::now();
        let hours_later = due_at + TimeDelta::hours(5);
        assert!(!received(&v4(Trigger::Manual, due_at)).is_stale(hours_later));
    }

    #[test]
    fn a_version_four_check_is_answered_with_its_region_and_round() {
        let due = v4(Trigger::Scheduled, Utc::now());
        let check = received(&due);
        assert_eq!(check.due.check_id, due.check_id);
        let r = check.result(observed(due.due_at), "c");
        assert_eq!(r.region, "eu");
        assert_eq!(r.round_id, Some(due.round_id));
        assert_eq!(r.check_id, due.check_id);
        assert_eq!(r.definition_version, 4);
        assert_eq!(r.due_at, Some(due.due_at));
        assert_eq!(r.error.as_deref(), Some("refused"));
        assert_eq!(r.reporter, "c");
        // A subject that merely starts like version 4 is not version 4.
        assert!(!is_v4("uptime.checks.due.v4"));
        assert!(!is_v4("uptime.checks.due.v45.eu"));
    }

    #[test]
    fn subjects_of_no_live_version_are_undecodable() {
        let due = v4(Trigger::Scheduled, Utc::now());
        let payload = due.to_bytes();
        // The retired unregioned subjects (versions 1 to 3) and unknown ones.
        let retired = uptime_contracts::versions::VERSIONS
            .iter()
            .filter(|v| v.family == "check-due" && !v.status.is_live())
            .map(|v| v.subject);
        for subject in retired.chain(["uptime.checks.due.v6.eu"]) {
            assert!(
                matches!(decode(subject, &payload), Err(Undecodable::Subject(_))),
                "{subject}"
            );
        }
    }

    #[test]
    fn a_version_five_check_keeps_its_password_sealed_apart() {
        use uptime_contracts::{BasicAuthV1, CheckOptionsV1, HttpRequestV1};
        let v4 = v4(Trigger::Scheduled, Utc::now());
        let mut spec = spec();
        spec.options = CheckOptionsV1 {
            http: Some(HttpRequestV1 {
                basic_auth: Some(BasicAuthV1 {
                    username: "u".into(),
                    password: None,
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let round_id = Uuid::new_v4();
        let due = CheckDueV5 {
            check_id: round_id,
            monitor_id: v4.monitor_id,
            definition_version: v4.definition_version,
            interval_secs: v4.interval_secs,
            trigger: v4.trigger,
            due_at: v4.due_at,
            spec: spec.clone().sealed(Some("v1.k1.AAAA".into())),
            region: "default".into(),
            round_id,
        };
        let check = decode(&due.subject(), &due.to_bytes()).unwrap();
        assert_eq!(check.due.spec, spec, "no password in the spec");
        assert_eq!(check.due.password_sealed, Some(Sealed("v1.k1.AAAA".into())));
        assert!(!format!("{check:?}").contains("v1.k1"));
        assert_eq!(check.round.round_id, round_id);
        assert_eq!(check.result(observed(due.due_at), "c").region, "default");
        assert!(!is_v5("uptime.checks.due.v5"));
        assert!(!is_v5("uptime.checks.due.v55.eu"));
    }
}
