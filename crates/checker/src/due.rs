//! Reading a due check of any message version, and deciding whether it is
//! still worth running. Pure functions: the clock is a parameter.

use chrono::{DateTime, TimeDelta, Utc};
use uptime_contracts::{
    subjects, CheckDueV1, CheckDueV2, CheckDueV3, CheckDueV4, CheckDueV5, CheckResultV1,
    CheckResultV3, CheckSpecV2, DueVersioning, Message, Trigger,
};
use uuid::Uuid;

/// A due check as the checker works with it, whatever version it came as
/// (an older spec reads as the newest, with default options).
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

impl From<CheckDueV1> for DueCheck {
    fn from(v1: CheckDueV1) -> Self {
        Self {
            check_id: v1.check_id,
            monitor_id: v1.monitor_id,
            trigger: v1.trigger,
            due_at: v1.due_at,
            spec: v1.spec.into(),
            password_sealed: None,
        }
    }
}

/// A due check as received, plus the versioning of version 2 and later
/// (whose results go out as `check-result.v2`; version 1 gets version 1)
/// and the round of version 4 (answered with `check-result.v3`).
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    pub due: DueCheck,
    pub versioning: Option<DueVersioning>,
    pub round: Option<RoundOf>,
}

/// Where a version-4 due check belongs: its region and round.
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

/// Decodes `payload` by the version its `subject` names.
pub fn decode(subject: &str, payload: &[u8]) -> Result<Received, serde_json::Error> {
    match subject {
        subjects::CHECK_DUE_V1 => CheckDueV1::from_bytes(payload).map(|due| Received {
            due: due.into(),
            versioning: None,
            round: None,
        }),
        subjects::CHECK_DUE_V2 => {
            let (due, versioning) = CheckDueV2::from_bytes(payload)?.into_parts();
            Ok(Received {
                due: due.into(),
                versioning: Some(versioning),
                round: None,
            })
        }
        v4 if is_v4(v4) => {
            let v4 = CheckDueV4::from_bytes(payload)?;
            Ok(Received {
                versioning: Some(DueVersioning {
                    definition_version: v4.definition_version,
                    interval_secs: v4.interval_secs,
                }),
                // The due check's own region: the consumer's filter
                // delivers only this checker's region's subject anyway.
                round: Some(RoundOf {
                    region: v4.region,
                    round_id: v4.round_id,
                    definition_version: v4.definition_version,
                }),
                due: DueCheck {
                    check_id: v4.check_id,
                    monitor_id: v4.monitor_id,
                    trigger: v4.trigger,
                    due_at: v4.due_at,
                    spec: v4.spec,
                    password_sealed: None,
                },
            })
        }
        v5 if is_v5(v5) => {
            let v5 = CheckDueV5::from_bytes(payload)?;
            let password_sealed = v5.spec.password_sealed().map(|s| Sealed(s.to_string()));
            Ok(Received {
                versioning: Some(DueVersioning {
                    definition_version: v5.definition_version,
                    interval_secs: v5.interval_secs,
                }),
                round: Some(RoundOf {
                    region: v5.region,
                    round_id: v5.round_id,
                    definition_version: v5.definition_version,
                }),
                due: DueCheck {
                    check_id: v5.check_id,
                    monitor_id: v5.monitor_id,
                    trigger: v5.trigger,
                    due_at: v5.due_at,
                    spec: v5.spec.opened(None),
                    password_sealed,
                },
            })
        }
        // Version 3 and anything newer on the stream's subjects: a newer
        // version adds fields, which serde ignores, so it reads as version 3.
        _ => {
            let v3 = CheckDueV3::from_bytes(payload)?;
            Ok(Received {
                round: None,
                versioning: Some(DueVersioning {
                    definition_version: v3.definition_version,
                    interval_secs: v3.interval_secs,
                }),
                due: DueCheck {
                    check_id: v3.check_id,
                    monitor_id: v3.monitor_id,
                    trigger: v3.trigger,
                    due_at: v3.due_at,
                    spec: v3.spec,
                    password_sealed: None,
                },
            })
        }
    }
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

    /// The message to publish for `result`: the version the due check came
    /// in (version 4 is answered with `check-result.v3`).
    pub fn publishable(&self, result: CheckResultV1) -> Publishable {
        match (&self.round, self.versioning) {
            (Some(round), _) => Publishable::V3(result_v3(result, round)),
            (None, None) => Publishable::V1(result),
            (None, Some(v)) => {
                Publishable::V2(result.with_definition_version(v.definition_version))
            }
        }
    }
}

fn result_v3(r: CheckResultV1, round: &RoundOf) -> CheckResultV3 {
    CheckResultV3 {
        check_id: r.check_id,
        monitor_id: r.monitor_id,
        definition_version: round.definition_version,
        trigger: r.trigger,
        due_at: r.due_at,
        checked_at: r.checked_at,
        outcome: r.outcome,
        latency_ms: r.latency_ms,
        http_status: r.http_status,
        error: r.error,
        ssl_expires_at: r.ssl_expires_at,
        reporter: r.reporter,
        region: round.region.clone(),
        round_id: Some(round.round_id),
    }
}

/// A result in the version its due check asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Publishable {
    V1(CheckResultV1),
    V2(uptime_contracts::CheckResultV2),
    V3(CheckResultV3),
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_contracts::{CheckSpecV1, MonitorKindV1};
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
                kind: MonitorKindV1::Http,
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

    #[test]
    fn a_version_four_check_is_answered_with_its_region_and_round() {
        let (v1, versioning) = v2(Trigger::Scheduled, Utc::now()).into_parts();
        let round_id = Uuid::new_v4();
        let due = CheckDueV4 {
            check_id: uptime_contracts::check_id_in_round(round_id, "eu", 3),
            monitor_id: v1.monitor_id,
            definition_version: versioning.definition_version,
            interval_secs: versioning.interval_secs,
            trigger: v1.trigger,
            due_at: v1.due_at,
            spec: v1.spec.into(),
            region: "eu".into(),
            round_id,
        };
        let check = decode(&due.subject(), &due.to_bytes()).unwrap();
        assert_eq!(check.due.check_id, due.check_id);
        assert!(!check.is_stale(due.due_at), "version 4 keeps the interval");
        let result = CheckResultV1 {
            check_id: due.check_id,
            monitor_id: 1,
            trigger: Trigger::Scheduled,
            due_at: Some(due.due_at),
            checked_at: due.due_at,
            outcome: uptime_contracts::CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some("refused".into()),
            ssl_expires_at: None,
            reporter: "c".into(),
        };
        match check.publishable(result) {
            Publishable::V3(r) => {
                assert_eq!(r.region, "eu");
                assert_eq!(r.round_id, Some(round_id));
                assert_eq!(r.check_id, due.check_id);
                assert_eq!(r.definition_version, 4);
                assert_eq!(r.error.as_deref(), Some("refused"));
            }
            other => panic!("expected version 3, got {other:?}"),
        }
        // A subject that merely starts like version 4 is not version 4.
        assert!(!is_v4("uptime.checks.due.v4"));
        assert!(!is_v4("uptime.checks.due.v45.eu"));
    }

    #[test]
    fn a_version_five_check_keeps_its_password_sealed_apart() {
        use uptime_contracts::{BasicAuthV1, CheckOptionsV1, HttpRequestV1, MonitorKind};
        let (v1, versioning) = v2(Trigger::Scheduled, Utc::now()).into_parts();
        let mut spec: CheckSpecV2 = v1.spec.into();
        spec.kind = MonitorKind::Http;
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
            monitor_id: v1.monitor_id,
            definition_version: versioning.definition_version,
            interval_secs: versioning.interval_secs,
            trigger: v1.trigger,
            due_at: v1.due_at,
            spec: spec.clone().sealed(Some("v1.k1.AAAA".into())),
            region: "default".into(),
            round_id,
        };
        let check = decode(&due.subject(), &due.to_bytes()).unwrap();
        assert_eq!(check.due.spec, spec, "no password in the spec");
        assert_eq!(check.due.password_sealed, Some(Sealed("v1.k1.AAAA".into())));
        assert!(!format!("{check:?}").contains("v1.k1"));
        assert_eq!(check.round.as_ref().map(|r| r.round_id), Some(round_id));
        assert!(!is_v5("uptime.checks.due.v5"));
        assert!(!is_v5("uptime.checks.due.v55.eu"));
    }
}
