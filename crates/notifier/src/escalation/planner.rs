//! What happens next to one incident's escalation: pure, the clock passed
//! in. The model (PagerDuty's): step 0 is notified when the incident opens
//! (by the intake); each step's delay is how long the incident waits on it,
//! unacknowledged, before the next step is notified; after the last step's
//! delay the policy runs again from step 0, `repeat_count` more times; then
//! it is exhausted. Acknowledging or resolving the incident stops it.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// A policy's shape: each step's delay, and how many more runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyShape {
    pub delays: Vec<Duration>,
    pub repeat_count: u16,
}

/// The step notified last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub position: u16,
    pub round: u16,
    pub notified_at: DateTime<Utc>,
}

/// The incident, as the sweep reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncidentNow {
    Open,
    Acknowledged,
    Resolved,
}

/// Why an escalation stopped (`incident_escalations.stopped`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    Acknowledged,
    Resolved,
    /// Every step of every run was notified.
    Exhausted,
    /// The policy was deleted (or has no steps left).
    NoPolicy,
}

impl Stop {
    pub fn as_str(self) -> &'static str {
        match self {
            Stop::Acknowledged => "acknowledged",
            Stop::Resolved => "resolved",
            Stop::Exhausted => "exhausted",
            Stop::NoPolicy => "no_policy",
        }
    }
}

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// Not due yet (the policy's delays changed since it was scheduled):
    /// look again at `until`.
    Wait {
        until: DateTime<Utc>,
    },
    Stop(Stop),
    /// Notify step `position` of run `round` now; look again at `next_at`
    /// (after its delay).
    Notify {
        position: u16,
        round: u16,
        next_at: DateTime<Utc>,
    },
}

/// The plan for an escalation at `progress`, at `now`.
pub fn plan(
    policy: Option<&PolicyShape>,
    progress: Progress,
    incident: IncidentNow,
    now: DateTime<Utc>,
) -> Plan {
    match incident {
        IncidentNow::Acknowledged => return Plan::Stop(Stop::Acknowledged),
        IncidentNow::Resolved => return Plan::Stop(Stop::Resolved),
        IncidentNow::Open => {}
    }
    let Some(policy) = policy.filter(|p| !p.delays.is_empty()) else {
        return Plan::Stop(Stop::NoPolicy);
    };
    let steps = policy.delays.len();
    // A step removed since it was notified: its delay is the last step's.
    let waited_on = usize::from(progress.position).min(steps - 1);
    let due = progress.notified_at + policy.delays[waited_on];
    if now < due {
        return Plan::Wait { until: due };
    }
    let (position, round) = if usize::from(progress.position) + 1 < steps {
        (progress.position + 1, progress.round)
    } else if progress.round < policy.repeat_count {
        (0, progress.round + 1)
    } else {
        return Plan::Stop(Stop::Exhausted);
    };
    Plan::Notify {
        position,
        round,
        next_at: now + policy.delays[usize::from(position)],
    }
}

/// The namespace of step event ids.
const STEP_NAMESPACE: Uuid = Uuid::from_u128(0x7e3a_51c0_2b94_4f1d_a6e8_0c5d_93b2_17f4);

/// The event id of step `position` of run `round` of `incident_id`'s
/// escalation: its deliveries' `event_id`, so a step is written once per
/// contact however often the sweep runs into it.
pub fn step_event_id(incident_id: Uuid, position: u16, round: u16) -> Uuid {
    Uuid::new_v5(
        &STEP_NAMESPACE,
        format!("{incident_id}:{round}:{position}").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn policy(delays: &[i64], repeat_count: u16) -> PolicyShape {
        PolicyShape {
            delays: delays.iter().map(|s| Duration::seconds(*s)).collect(),
            repeat_count,
        }
    }

    fn opened_at(secs: i64) -> Progress {
        Progress {
            position: 0,
            round: 0,
            notified_at: t(secs),
        }
    }

    #[test]
    fn with_nobody_acknowledging_step_two_is_reached_after_its_delay() {
        let p = policy(&[300, 600], 0);
        // Step 0 was notified when the incident opened at t(0).
        assert_eq!(
            plan(Some(&p), opened_at(0), IncidentNow::Open, t(299)),
            Plan::Wait { until: t(300) }
        );
        assert_eq!(
            plan(Some(&p), opened_at(0), IncidentNow::Open, t(300)),
            Plan::Notify {
                position: 1,
                round: 0,
                next_at: t(900)
            }
        );
        // After the last step's delay, with no repeat: exhausted.
        let at_step_two = Progress {
            position: 1,
            round: 0,
            notified_at: t(300),
        };
        assert_eq!(
            plan(Some(&p), at_step_two, IncidentNow::Open, t(900)),
            Plan::Stop(Stop::Exhausted)
        );
    }

    #[test]
    fn acknowledging_before_the_delay_stops_it() {
        let p = policy(&[300, 600], 2);
        for now in [t(10), t(300), t(5000)] {
            assert_eq!(
                plan(Some(&p), opened_at(0), IncidentNow::Acknowledged, now),
                Plan::Stop(Stop::Acknowledged)
            );
        }
        assert_eq!(
            plan(Some(&p), opened_at(0), IncidentNow::Resolved, t(300)),
            Plan::Stop(Stop::Resolved)
        );
    }

    #[test]
    fn the_policy_runs_again_repeat_count_times() {
        let p = policy(&[60, 120], 1);
        let last = Progress {
            position: 1,
            round: 0,
            notified_at: t(60),
        };
        assert_eq!(
            plan(Some(&p), last, IncidentNow::Open, t(180)),
            Plan::Notify {
                position: 0,
                round: 1,
                next_at: t(240)
            }
        );
        let last_of_repeat = Progress { round: 1, ..last };
        assert_eq!(
            plan(Some(&p), last_of_repeat, IncidentNow::Open, t(1000)),
            Plan::Stop(Stop::Exhausted)
        );
    }

    #[test]
    fn a_deleted_policy_or_shortened_one_is_handled() {
        assert_eq!(
            plan(None, opened_at(0), IncidentNow::Open, t(1000)),
            Plan::Stop(Stop::NoPolicy)
        );
        // Notified step 3 of a policy cut to one step: its delay is the
        // remaining step's, and a run of it is over.
        let p = policy(&[60], 0);
        let beyond = Progress {
            position: 3,
            round: 0,
            notified_at: t(0),
        };
        assert_eq!(
            plan(Some(&p), beyond, IncidentNow::Open, t(30)),
            Plan::Wait { until: t(60) }
        );
        assert_eq!(
            plan(Some(&p), beyond, IncidentNow::Open, t(60)),
            Plan::Stop(Stop::Exhausted)
        );
    }

    #[test]
    fn step_event_ids_differ_by_step_and_run() {
        let i = Uuid::from_u128(1);
        assert_eq!(step_event_id(i, 1, 0), step_event_id(i, 1, 0));
        assert_ne!(step_event_id(i, 1, 0), step_event_id(i, 2, 0));
        assert_ne!(step_event_id(i, 1, 0), step_event_id(i, 1, 1));
        assert_ne!(
            step_event_id(i, 1, 0),
            step_event_id(Uuid::from_u128(2), 1, 0)
        );
    }
}
