//! `check-due`: a check to run now in one region. The scheduler publishes
//! one per region of each round (the api-gateway for a manual check), on the
//! region's subject, `uptime.checks.due.v5.<region>` ([`subjects::due_v5`]);
//! each region's checkers consume only theirs. The spec carries its
//! basic-auth password sealed ([`crate::spec`]).
//!
//! [`DueCheck`] is the current version's message (`check-due.v5`, its
//! published schema name `CheckDueV5`); [`decode`] reads every live version
//! into it, [`encode`] writes the current one.

use crate::{subjects, CheckSpec, DecodeError, Message, Trigger};
use bytes::Bytes;
use chrono::{DateTime, TimeDelta, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A check to run now in one region, its secrets sealed. Published on
/// `uptime.checks.due.v5.<region>` ([`subjects::due_v5`]) with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckDueV5")]
pub struct DueCheck {
    /// This region's check of the round (`check_id_in_round`).
    pub check_id: Uuid,
    pub monitor_id: i64,
    #[schemars(range(min = 1))]
    pub definition_version: i64,
    /// The monitor's check interval (a scheduled check received more than
    /// one interval late is skipped).
    #[schemars(range(min = 1))]
    pub interval_secs: u32,
    pub trigger: Trigger,
    /// When the round was due (scheduled) or requested (manual).
    pub due_at: DateTime<Utc>,
    pub spec: CheckSpec,
    /// The region whose checkers run this check.
    pub region: String,
    /// The round this check is part of (the slot's id).
    pub round_id: Uuid,
}

impl Message for DueCheck {
    /// The subjects' common prefix; each region's due checks go to
    /// [`subjects::due_v5`]`(region)`.
    const SUBJECT: &'static str = subjects::CHECK_DUE_V5_PREFIX;
    const SCHEMA: &'static str = "check-due.v5";
}

impl DueCheck {
    /// The subject this check is published on: its region's.
    pub fn subject(&self) -> String {
        subjects::due_v5(&self.region)
    }

    /// Whether this check is too late to be worth running at `now`: a
    /// scheduled check received more than one interval after it was due
    /// *and* more than `grace` after it was due. Within the grace a late
    /// check still runs, under its own slot, so a fault shorter than the
    /// grace (a NATS node lost, a checker restarted, a database restart)
    /// costs lateness and no slot; past both, the monitor's later slots
    /// have been published by then and working through a long backlog of
    /// old ones would only delay them. Manual and heartbeat checks are
    /// never stale: somebody is waiting for exactly this one.
    pub fn is_stale(&self, now: DateTime<Utc>, grace: TimeDelta) -> bool {
        let late = now - self.due_at;
        self.trigger == Trigger::Scheduled
            && late > TimeDelta::seconds(i64::from(self.interval_secs))
            && late > grace
    }
}

/// Whether `subject` is one region's subject under `prefix`.
fn is_under(subject: &str, prefix: &str) -> bool {
    subject
        .strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('.'))
        .is_some_and(|region| !region.is_empty() && !region.contains('.'))
}

/// Reads a due check received on `subject`, of any live version.
pub fn decode(subject: &str, payload: &[u8]) -> Result<DueCheck, DecodeError> {
    if is_under(subject, subjects::CHECK_DUE_V5_PREFIX) {
        return Ok(DueCheck::from_bytes(payload)?);
    }
    Err(DecodeError::UnknownSubject(subject.to_string()))
}

/// The current version of `due`: its region's subject and the payload.
pub fn encode(due: &DueCheck) -> (String, Bytes) {
    (due.subject(), due.to_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MonitorKind;

    fn due(trigger: Trigger, due_at: DateTime<Utc>) -> DueCheck {
        let round_id = Uuid::new_v4();
        DueCheck {
            check_id: crate::check_id_in_round(round_id, "eu", 3),
            monitor_id: 1,
            definition_version: 4,
            interval_secs: 60,
            trigger,
            due_at,
            spec: CheckSpec {
                kind: MonitorKind::Http,
                target: "http://127.0.0.1/".into(),
                timeout_secs: crate::TimeoutSecs::of(5),
                expected_status: crate::ExpectedStatus::of(200),
                keyword: None,
                keyword_type: None,
                options: Default::default(),
            },
            region: "eu".into(),
            round_id,
        }
    }

    #[test]
    fn a_due_check_round_trips_on_its_regions_subject() {
        let check = due(Trigger::Scheduled, Utc::now());
        let (subject, payload) = encode(&check);
        assert_eq!(subject, "uptime.checks.due.v5.eu");
        assert_eq!(decode(&subject, &payload).unwrap(), check);
    }

    #[test]
    fn subjects_of_no_live_version_are_undecodable() {
        let (_, payload) = encode(&due(Trigger::Scheduled, Utc::now()));
        let retired = crate::versions::VERSIONS
            .iter()
            .filter(|v| v.family == "check-due" && !v.status.is_live())
            .map(|v| format!("{}.eu", v.subject));
        let others = [
            "uptime.checks.due.v6.eu",
            "uptime.checks.due.v5",
            "uptime.checks.due.v55.eu",
            "uptime.checks.due.v5.",
        ]
        .map(str::to_string);
        for subject in retired.chain(others) {
            assert!(
                matches!(
                    decode(&subject, &payload),
                    Err(DecodeError::UnknownSubject(_))
                ),
                "{subject}"
            );
        }
        assert!(matches!(
            decode("uptime.checks.due.v5.eu", b"{"),
            Err(DecodeError::Json(_))
        ));
    }

    /// A checker trusts the spec's numbers (no `.max(1)` on the timeout):
    /// a message carrying one the API would refuse does not decode.
    #[test]
    fn a_spec_number_out_of_its_range_is_undecodable() {
        let (subject, payload) = encode(&due(Trigger::Scheduled, Utc::now()));
        let mut message: serde_json::Value = serde_json::from_slice(&payload).unwrap();
        for (field, value) in [
            ("timeout_secs", 0),
            ("timeout_secs", 121),
            ("expected_status", 99),
        ] {
            let mut broken = message.clone();
            broken["spec"][field] = value.into();
            let payload = serde_json::to_vec(&broken).unwrap();
            let err = decode(&subject, &payload).unwrap_err().to_string();
            assert!(err.contains(field), "{field} {value}: {err}");
        }
        message["spec"]["timeout_secs"] = 120.into();
        assert!(decode(&subject, &serde_json::to_vec(&message).unwrap()).is_ok());
    }

    #[test]
    fn a_scheduled_check_is_stale_only_past_one_interval_and_the_grace() {
        let due_at = Utc::now();
        let check = due(Trigger::Scheduled, due_at);
        let none = TimeDelta::zero();
        assert!(!check.is_stale(due_at + TimeDelta::seconds(59), none));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(60), none));
        assert!(check.is_stale(due_at + TimeDelta::seconds(61), none));
        // A grace longer than the interval: late past the interval still runs.
        let grace = TimeDelta::seconds(300);
        assert!(!check.is_stale(due_at + TimeDelta::seconds(61), grace));
        assert!(!check.is_stale(due_at + TimeDelta::seconds(300), grace));
        assert!(check.is_stale(due_at + TimeDelta::seconds(301), grace));
        // A grace shorter than the interval changes nothing.
        let short = TimeDelta::seconds(10);
        assert!(!check.is_stale(due_at + TimeDelta::seconds(60), short));
        assert!(check.is_stale(due_at + TimeDelta::seconds(61), short));
        let manual = due(Trigger::Manual, due_at);
        assert!(!manual.is_stale(due_at + TimeDelta::hours(5), none));
    }
}
