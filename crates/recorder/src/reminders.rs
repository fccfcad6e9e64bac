//! Reminders: while an incident is open, unacknowledged and its down alert
//! went out, the down alert is repeated every `reminder_interval_secs`, at
//! most `reminder_max` times. Pure: the times come in the inputs.
//!
//! The schedule lives on the incident (`next_reminder_at`): set when its
//! down alert goes out (the change to `down`, or its release after a
//! hold), moved on by each reminder, and left alone by everything else. A
//! monitor without reminders never gets one set, so it costs nothing.
//! The alert sweeper ([`crate::alert_sweep`]) sends the due ones.

use chrono::{DateTime, Duration, Utc};
use uuid::Uuid;

/// The namespace of reminder event ids.
const REMINDER_NAMESPACE: Uuid = Uuid::from_u128(0x7f3e_21a9_5c4d_4e8b_b6a0_93d1_2c7e_58f4);

/// A monitor's reminder settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReminderRules {
    pub interval: Duration,
    /// At most this many per incident; `None`: until acknowledged or recovered.
    pub max: Option<u32>,
}

impl ReminderRules {
    /// The rules of a monitor's columns; `None` when it sends no reminders.
    pub fn of(interval_secs: Option<i32>, max: Option<i32>) -> Option<Self> {
        let interval = i64::from(interval_secs?.max(1));
        Some(Self {
            interval: Duration::seconds(interval),
            max: max.map(|m| m.max(0).unsigned_abs()),
        })
    }

    /// When the first reminder of a down alert that went out at `alerted_at`
    /// is due (`None`: none will be, `reminder_max` is 0).
    pub fn first_due(self, alerted_at: DateTime<Utc>) -> Option<DateTime<Utc>> {
        (self.max != Some(0)).then(|| alerted_at + self.interval)
    }
}

/// What the sweeper does with a due incident.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReminderStep {
    /// Send reminder number `number` (1 for the first); the next is due at
    /// `next` (`None`: that was the last).
    Send {
        number: u32,
        next: Option<DateTime<Utc>>,
    },
    /// Send nothing more: the monitor's reminders were turned off, or the
    /// incident was acknowledged, or its down alert is held.
    Stop,
}

/// What an incident due for a reminder needs now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueIncident {
    /// Reminders sent so far.
    pub sent: u32,
    pub acknowledged: bool,
    /// Its down alert is held (a reminder repeats only an alert that went out).
    pub held: bool,
}

/// Decides a due incident at `now` under the monitor's current `rules`.
pub fn step(
    incident: DueIncident,
    rules: Option<ReminderRules>,
    now: DateTime<Utc>,
) -> ReminderStep {
    let Some(rules) = rules else {
        return ReminderStep::Stop;
    };
    if incident.acknowledged || incident.held {
        return ReminderStep::Stop;
    }
    let number = incident.sent.saturating_add(1);
    if rules.max.is_some_and(|max| number > max) {
        return ReminderStep::Stop;
    }
    let last = rules.max == Some(number);
    ReminderStep::Send {
        number,
        // From now, not from when it was due: a sweeper that was away does
        // not fire a burst to catch up.
        next: (!last).then(|| now + rules.interval),
    }
}

/// The event id of reminder `number` of `incident_id`: the same if the
/// sweeper runs it again after a crash, so the outbox and JetStream keep
/// one.
pub fn reminder_event_id(incident_id: Uuid, number: u32) -> Uuid {
    Uuid::new_v5(
        &REMINDER_NAMESPACE,
        format!("{incident_id}:reminder:{number}").as_bytes(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state_machine::tests::t;

    fn due(sent: u32) -> DueIncident {
        DueIncident {
            sent,
            acknowledged: false,
            held: false,
        }
    }

    #[test]
    fn reminders_repeat_up_to_the_maximum() {
        let rules = ReminderRules::of(Some(300), Some(2));
        assert_eq!(rules.unwrap().first_due(t(0)), Some(t(300)));
        assert_eq!(
            step(due(0), rules, t(300)),
            ReminderStep::Send {
                number: 1,
                next: Some(t(600))
            }
        );
        assert_eq!(
            step(due(1), rules, t(610)),
            ReminderStep::Send {
                number: 2,
                next: None
            }
        );
        assert_eq!(step(due(2), rules, t(900)), ReminderStep::Stop);
    }

    #[test]
    fn without_a_maximum_they_go_on() {
        let rules = ReminderRules::of(Some(60), None);
        assert_eq!(
            step(due(1000), rules, t(0)),
            ReminderStep::Send {
                number: 1001,
                next: Some(t(60))
            }
        );
    }

    #[test]
    fn acknowledged_held_or_turned_off_stops() {
        let rules = ReminderRules::of(Some(60), None);
        let acked = DueIncident {
            acknowledged: true,
            ..due(0)
        };
        assert_eq!(step(acked, rules, t(0)), ReminderStep::Stop);
        let held = DueIncident {
            held: true,
            ..due(0)
        };
        assert_eq!(step(held, rules, t(0)), ReminderStep::Stop);
        assert_eq!(step(due(0), None, t(0)), ReminderStep::Stop);
        assert_eq!(ReminderRules::of(None, Some(3)), None);
        assert_eq!(
            ReminderRules::of(Some(60), Some(0))
                .unwrap()
                .first_due(t(0)),
            None
        );
    }

    #[test]
    fn event_ids_are_fixed_per_incident_and_number() {
        let a = Uuid::from_u128(1);
        assert_eq!(reminder_event_id(a, 1), reminder_event_id(a, 1));
        assert_ne!(reminder_event_id(a, 1), reminder_event_id(a, 2));
        assert_ne!(
            reminder_event_id(a, 1),
            reminder_event_id(Uuid::from_u128(2), 1)
        );
    }
}
