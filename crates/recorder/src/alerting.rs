//! How a transition becomes, or does not become, an alert: the one place the
//! recorder decides it. Pure: no I/O, no clock (times come in the inputs).
//!
//! Every transition is recorded and published as a state-change event; the
//! decision says whether that event asks for an alert now or is held, and
//! why (the notifier makes no delivery for a held event). It also says which
//! incident the transition opens or ends: a change to `down` opens one (a
//! confirmed down period), the change out of `down` resolves it.
//!
//! Holds, first that applies:
//! - a monitor in a maintenance window (`silenced_by_maintenance`, filled
//!   by the maintenance feature) has its transition alerts held;
//! - the change out of `down` of an incident whose down alert is still held
//!   is held for the same reason (nobody was told it went down, so nobody
//!   is told it came back);
//! - a monitor one of whose parents (`depends_on`) is down, or failing on
//!   its way to down, has its alerts held (`blocked_by_parent`), except the
//!   recovery of an incident whose down alert went out;
//! - a flapping monitor ([`crate::flapping`]) has its alerts held, after
//!   the one `flapping` alert of the change that started it.
//!
//! Held down alerts are released later, by the alert sweeper
//! ([`crate::alert_sweep`]): when no parent is down any more, when the
//! flapping ends, with one `released` alert if the monitor is still down.
//! Reminders ([`crate::reminders`]) repeat a down alert that went out.

use crate::flapping::Flapping;
use crate::state_machine::Transition;
use chrono::{DateTime, Utc};
use uptime_contracts::{AlertKind, HoldReason, MonitorStatus};
use uuid::Uuid;

/// The namespace of incident ids.
const INCIDENT_NAMESPACE: Uuid = Uuid::from_u128(0x1c2d_7a4e_9f30_4b6c_8d15_e2a7_5c90_3f41);

/// The id of `monitor_id`'s incident that began at `started_at`: derived, so
/// the batch that opens it and the one that resolves it (which knows when
/// the monitor went down: its `status_since`) name it without reading it,
/// and a redelivered batch names it again. Microseconds, because that is
/// what PostgreSQL keeps of `status_since`.
pub fn incident_id(monitor_id: i64, started_at: DateTime<Utc>) -> Uuid {
    Uuid::new_v5(
        &INCIDENT_NAMESPACE,
        format!("{monitor_id}:{}", started_at.timestamp_micros()).as_bytes(),
    )
}

/// What the decision knows besides the transition. Every field's default
/// is "nothing holds it", so a monitor that uses none of the features is
/// decided without any of them being looked up.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AlertContext {
    /// The monitor is in a maintenance window now.
    pub silenced_by_maintenance: bool,
    /// A monitor it depends on is down or failing (the event's
    /// `blocked_by` names them).
    pub blocked_by_parent: bool,
    /// The transition leaves `down` and the incident's down alert is still
    /// held, for this reason.
    pub incident_held: Option<HoldReason>,
    /// What flapping detection made of this transition.
    pub flapping: Flapping,
}

/// What happens to a monitor's incidents with a transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IncidentChange {
    /// Opens incident `id` (a change to `down`).
    Opens { id: Uuid, started_at: DateTime<Utc> },
    /// Resolves incident `id` (the change out of `down`).
    Resolves {
        id: Uuid,
        resolved_at: DateTime<Utc>,
    },
    /// Touches no down period (`pending` → `up`, `up` → `degraded`).
    None,
}

impl IncidentChange {
    pub fn incident_id(self) -> Option<Uuid> {
        match self {
            IncidentChange::Opens { id, .. } | IncidentChange::Resolves { id, .. } => Some(id),
            IncidentChange::None => None,
        }
    }
}

/// The decision about one transition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TransitionDecision {
    pub incident: IncidentChange,
    /// `None`: alert now; `Some`: held, and why.
    pub held: Option<HoldReason>,
    /// What the event says: a transition, or the `flapping` notice of the
    /// change that started flapping.
    pub alert: AlertKind,
}

/// Decides `transition` of `monitor_id`.
pub fn decide_transition(
    monitor_id: i64,
    transition: &Transition,
    context: AlertContext,
) -> TransitionDecision {
    let incident = if transition.to == MonitorStatus::Down {
        IncidentChange::Opens {
            id: incident_id(monitor_id, transition.at),
            started_at: transition.at,
        }
    } else if transition.from == MonitorStatus::Down {
        match transition.previous_since {
            Some(since) => IncidentChange::Resolves {
                id: incident_id(monitor_id, since),
                resolved_at: transition.at,
            },
            // A down status with no start cannot be stored; nothing to end.
            None => IncidentChange::None,
        }
    } else {
        IncidentChange::None
    };
    let resolves = matches!(incident, IncidentChange::Resolves { .. });
    let held = if context.silenced_by_maintenance {
        Some(HoldReason::Maintenance)
    } else if resolves && context.incident_held.is_some() {
        context.incident_held
    } else if !resolves && context.blocked_by_parent {
        Some(HoldReason::BlockedByParent)
    } else if context.flapping == Flapping::Ongoing {
        Some(HoldReason::Flapping)
    } else {
        None
    };
    let alert = if held.is_none() && context.flapping == Flapping::Starts {
        AlertKind::Flapping
    } else {
        AlertKind::Transition
    };
    TransitionDecision {
        incident,
        held,
        alert,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use MonitorStatus::*;

    fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn transition(from: MonitorStatus, to: MonitorStatus, since: i64, at: i64) -> Transition {
        Transition {
            from,
            to,
            previous_since: Some(t(since)),
            at: t(at),
        }
    }

    #[test]
    fn a_change_to_down_opens_the_incident_the_change_out_of_it_resolves() {
        let down = decide_transition(4, &transition(Up, Down, 0, 60), AlertContext::default());
        let opened = incident_id(4, t(60));
        assert_eq!(
            down.incident,
            IncidentChange::Opens {
                id: opened,
                started_at: t(60)
            }
        );
        assert_eq!(down.held, None, "alerts now");
        // The recovery knows the start only as `previous_since`.
        let up = decide_transition(4, &transition(Down, Up, 60, 300), AlertContext::default());
        assert_eq!(
            up.incident,
            IncidentChange::Resolves {
                id: opened,
                resolved_at: t(300)
            }
        );
        let degraded = decide_transition(
            4,
            &transition(Down, Degraded, 60, 300),
            AlertContext::default(),
        );
        assert_eq!(degraded.incident.incident_id(), Some(opened));
    }

    #[test]
    fn changes_outside_a_down_period_touch_no_incident() {
        for (from, to) in [(Pending, Up), (Up, Degraded), (Degraded, Up)] {
            let d = decide_transition(4, &transition(from, to, 0, 60), AlertContext::default());
            assert_eq!(d.incident, IncidentChange::None, "{from:?} -> {to:?}");
        }
    }

    #[test]
    fn incident_ids_differ_by_monitor_and_start_and_ignore_nanoseconds() {
        assert_ne!(incident_id(1, t(0)), incident_id(2, t(0)));
        assert_ne!(incident_id(1, t(0)), incident_id(1, t(1)));
        let with_nanos = t(0) + chrono::Duration::nanoseconds(1_234_567);
        let stored = t(0) + chrono::Duration::microseconds(1_234);
        assert_eq!(incident_id(1, with_nanos), incident_id(1, stored));
    }

    #[test]
    fn maintenance_holds_the_alert_but_still_opens_the_incident() {
        let d = decide_transition(
            4,
            &transition(Up, Down, 0, 60),
            AlertContext {
                silenced_by_maintenance: true,
                ..AlertContext::default()
            },
        );
        assert_eq!(d.held, Some(HoldReason::Maintenance));
        assert_eq!(d.incident.incident_id(), Some(incident_id(4, t(60))));
    }

    fn blocked() -> AlertContext {
        AlertContext {
            blocked_by_parent: true,
            ..AlertContext::default()
        }
    }

    #[test]
    fn a_parent_down_holds_the_childs_changes_but_not_the_recovery_of_an_alerted_incident() {
        let down = decide_transition(4, &transition(Up, Down, 0, 60), blocked());
        assert_eq!(down.held, Some(HoldReason::BlockedByParent));
        assert!(down.incident.incident_id().is_some(), "still an incident");
        let degraded = decide_transition(4, &transition(Up, Degraded, 0, 60), blocked());
        assert_eq!(degraded.held, Some(HoldReason::BlockedByParent));
        // People were told it went down: they are told it came back.
        let up = decide_transition(4, &transition(Down, Up, 60, 120), blocked());
        assert_eq!(up.held, None);
    }

    #[test]
    fn the_recovery_of_an_incident_whose_down_alert_is_held_is_held_for_the_same_reason() {
        for reason in [HoldReason::BlockedByParent, HoldReason::Flapping] {
            let context = AlertContext {
                incident_held: Some(reason),
                ..AlertContext::default()
            };
            let up = decide_transition(4, &transition(Down, Up, 60, 120), context);
            assert_eq!(up.held, Some(reason));
        }
    }

    #[test]
    fn flapping_alerts_once_then_holds() {
        let starts = AlertContext {
            flapping: Flapping::Starts,
            ..AlertContext::default()
        };
        let d = decide_transition(4, &transition(Up, Down, 0, 60), starts);
        assert_eq!((d.held, d.alert), (None, AlertKind::Flapping));
        let ongoing = AlertContext {
            flapping: Flapping::Ongoing,
            ..AlertContext::default()
        };
        let d = decide_transition(4, &transition(Down, Up, 60, 70), ongoing);
        assert_eq!(
            (d.held, d.alert),
            (Some(HoldReason::Flapping), AlertKind::Transition)
        );
        // Behind a parent, the flapping notice is held with the rest.
        let d = decide_transition(
            4,
            &transition(Up, Down, 0, 60),
            AlertContext {
                flapping: Flapping::Starts,
                ..blocked()
            },
        );
        assert_eq!(
            (d.held, d.alert),
            (Some(HoldReason::BlockedByParent), AlertKind::Transition)
        );
    }

    #[test]
    fn maintenance_comes_first() {
        let d = decide_transition(
            4,
            &transition(Up, Down, 0, 60),
            AlertContext {
                silenced_by_maintenance: true,
                flapping: Flapping::Starts,
                ..blocked()
            },
        );
        assert_eq!(
            (d.held, d.alert),
            (Some(HoldReason::Maintenance), AlertKind::Transition)
        );
    }
}
