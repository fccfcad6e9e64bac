//! "Every state change alerted exactly once to every contact that wants
//! it", pure: the stack's own records of what happened (each state change
//! and certificate warning its recorder wrote to the outbox, each incident's
//! acknowledgement and end) and the contacts the driver made, turned into
//! the deliveries each contact is owed, against what the receivers got.
//!
//! The rules are restated here from the documentation, not borrowed from
//! the notifier, so a notifier that drifts from them fails:
//! - a held change (`held`: maintenance, a parent, flapping) and a change to
//!   `pending` alert nobody;
//! - a contact gets an alert of a kind it wants (`events`; none given: all)
//!   at least as severe as its `min_severity`: down is critical, degraded a
//!   warning, a recovery as severe as what it ends (a first `up` is info), a
//!   certificate warning critical from 3 days before expiry;
//! - a monitor's contacts are its own and, with an escalation policy, its
//!   first step's; each later step is told (the opening alert again) once
//!   the step before waited its delay on an incident nobody acknowledged and
//!   that is still open, and hears every later alert of the incident.
//!
//! Each (event, contact) is owed a number of receipts: exactly one, or at
//! most one where the moment decides and nobody can pin it (an event after
//! the run's end, a step falling due as the incident is acknowledged).

use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// How far a moment can be from where it is decided: the notifier's
/// escalation sweep (5 s) plus slack.
pub const DECIDE_MARGIN_MS: i64 = 10_000;

/// An event the recorder wrote (outbox), as the verdict needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct EventFact {
    pub event_id: Uuid,
    pub monitor_id: i64,
    /// `monitor.down`, `monitor.up`, `monitor.degraded`, `ssl.expiring`;
    /// `None`: a change to `pending`.
    pub event_type: Option<&'static str>,
    pub previous_status: Option<String>,
    /// Why it alerts nobody now, if it does not.
    pub held: Option<String>,
    pub incident_id: Option<Uuid>,
    /// `ssl.expiring` only.
    pub days_left: Option<i64>,
    pub occurred_ms: i64,
    /// When the recorder wrote it.
    pub written_ms: i64,
}

/// A contact the driver made.
#[derive(Debug, Clone)]
pub struct ContactFact {
    pub id: i64,
    /// Where its alerts arrive (a webhook path, an address).
    pub receiver: String,
    /// Event types it wants; `None`: every kind.
    pub events: Option<Vec<&'static str>>,
    /// 0 info, 1 warning, 2 critical.
    pub min_severity: u8,
}

/// A policy: steps of (contacts, delay), then again `repeat_count` times.
#[derive(Debug, Clone)]
pub struct PolicyFact {
    pub steps: Vec<(Vec<i64>, i64)>,
    pub repeat_count: u32,
}

/// What the incidents table says of one incident's end.
#[derive(Debug, Clone, Default)]
pub struct IncidentFact {
    pub acknowledged_ms: Option<i64>,
    pub resolved_ms: Option<i64>,
}

/// Everything the expectations are made from.
#[derive(Debug, Clone, Default)]
pub struct AlertInputs {
    pub events: Vec<EventFact>,
    pub contacts: Vec<ContactFact>,
    /// Each monitor's own contacts.
    pub monitor_contacts: HashMap<i64, Vec<i64>>,
    pub policies: HashMap<i64, PolicyFact>,
    pub incidents: HashMap<Uuid, IncidentFact>,
    /// Test alerts sent to each contact (`POST /alert-contacts/{id}/test`).
    pub test_alerts: HashMap<i64, usize>,
    /// Events written from here on are owed at most one receipt each.
    pub until_ms: i64,
}

/// One alert as a receiver got it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Receipt {
    pub receiver: String,
    /// The alert's `event_id`; `None` for a test alert.
    pub event_id: Option<Uuid>,
}

/// How many receipts one (event, contact) is owed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Owed {
    pub min: usize,
    pub max: usize,
}

impl Owed {
    const ONCE: Owed = Owed { min: 1, max: 1 };
    const AT_MOST_ONCE: Owed = Owed { min: 0, max: 1 };

    fn or(self, other: Owed) -> Owed {
        Owed {
            min: self.min.max(other.min),
            max: self.max.max(other.max),
        }
    }

    fn plus(self, other: Owed) -> Owed {
        Owed {
            min: self.min + other.min,
            max: self.max + other.max,
        }
    }
}

/// `event_id` `None` stands for the contact's test alerts.
pub type OwedKey = (Option<Uuid>, String);

fn severity(event: &EventFact) -> u8 {
    let of_status = |status: Option<&str>| match status {
        Some("down") => 2,
        Some("degraded") => 1,
        _ => 0,
    };
    match event.event_type {
        Some("monitor.down") => 2,
        Some("monitor.degraded") => 1,
        Some("monitor.up") => of_status(event.previous_status.as_deref()),
        Some("ssl.expiring") if event.days_left.unwrap_or(0) <= 3 => 2,
        _ => 1,
    }
}

fn wants(contact: &ContactFact, event_type: &str, severity: u8) -> bool {
    contact
        .events
        .as_ref()
        .is_none_or(|e| e.contains(&event_type))
        && severity >= contact.min_severity
}

/// A step after the first, with when it falls due.
struct LaterStep {
    due_ms: i64,
    contacts: Vec<i64>,
}

/// Each later step of the escalation of `incident` opened by `opening`,
/// with whether it is told (`Owed`), and when.
fn later_steps(
    opening: &EventFact,
    policy: &PolicyFact,
    end_ms: Option<i64>,
    until_ms: i64,
) -> Vec<(LaterStep, Owed)> {
    let mut steps = Vec::new();
    let mut due = opening.occurred_ms;
    let rounds = policy.repeat_count as usize + 1;
    for index in 1..policy.steps.len() * rounds {
        let previous = &policy.steps[(index - 1) % policy.steps.len()];
        due += previous.1 * 1000;
        let near = |at: i64| due >= at - DECIDE_MARGIN_MS && due < at + DECIDE_MARGIN_MS;
        let owed = match end_ms {
            // Acknowledged or resolved before the step: it stops there.
            Some(end) if due >= end + DECIDE_MARGIN_MS => break,
            Some(end) if near(end) => Owed::AT_MOST_ONCE,
            // Due after the run: the drain may see it or not.
            _ if due >= until_ms - DECIDE_MARGIN_MS => Owed::AT_MOST_ONCE,
            _ => Owed::ONCE,
        };
        let contacts = policy.steps[index % policy.steps.len()].0.clone();
        steps.push((
            LaterStep {
                due_ms: due,
                contacts,
            },
            owed,
        ));
    }
    steps
}

/// What every (event, contact) is owed.
pub fn owed(inputs: &AlertInputs) -> BTreeMap<OwedKey, Owed> {
    let contacts: HashMap<i64, &ContactFact> = inputs.contacts.iter().map(|c| (c.id, c)).collect();
    let mut owed: BTreeMap<OwedKey, Owed> = BTreeMap::new();
    let mut add = |key: OwedKey, o: Owed| {
        let entry = owed.entry(key).or_insert(Owed { min: 0, max: 0 });
        *entry = entry.plus(o);
    };
    // Each incident's later steps: (when told, who, owed).
    let mut told: HashMap<Uuid, Vec<(i64, i64, Owed)>> = HashMap::new();
    let mut events: Vec<&EventFact> = inputs.events.iter().collect();
    events.sort_by_key(|e| (e.occurred_ms, e.written_ms));
    for event in events {
        let Some(event_type) = event.event_type else {
            continue;
        };
        if event.held.is_some() {
            continue;
        }
        let severity = severity(event);
        let late = event.written_ms >= inputs.until_ms;
        let base = if late { Owed::AT_MOST_ONCE } else { Owed::ONCE };
        // Who is told, once per contact whatever the links.
        let mut recipients: BTreeMap<i64, Owed> = BTreeMap::new();
        let mut tell = |contact: i64, o: Owed| {
            let entry = recipients.entry(contact).or_insert(o);
            *entry = entry.or(o);
        };
        for c in inputs
            .monitor_contacts
            .get(&event.monitor_id)
            .into_iter()
            .flatten()
        {
            tell(*c, base);
        }
        let policy = inputs.policies.get(&event.monitor_id);
        if let Some(policy) = policy {
            for c in policy.steps.first().map(|s| &s.0).into_iter().flatten() {
                tell(*c, base);
            }
        }
        if let Some(incident) = event.incident_id {
            for (at, contact, step_owed) in told.get(&incident).into_iter().flatten() {
                // Heard if the step was told before this event was taken in.
                if *at < event.written_ms - DECIDE_MARGIN_MS && *step_owed == Owed::ONCE {
                    tell(*contact, base);
                } else if *at < event.written_ms + DECIDE_MARGIN_MS {
                    tell(*contact, Owed::AT_MOST_ONCE);
                }
            }
        }
        for (contact, o) in recipients {
            let Some(c) = contacts.get(&contact) else {
                continue;
            };
            if wants(c, event_type, severity) {
                add((Some(event.event_id), c.receiver.clone()), o);
            }
        }
        // A down alert of a policy monitor opens its incident's escalation
        // (once: the first such alert of the incident).
        let (Some(policy), Some(incident)) = (policy, event.incident_id) else {
            continue;
        };
        if event_type != "monitor.down" || told.contains_key(&incident) {
            continue;
        }
        let fact = inputs.incidents.get(&incident).cloned().unwrap_or_default();
        let end = match (fact.acknowledged_ms, fact.resolved_ms) {
            (Some(a), Some(r)) => Some(a.min(r)),
            (a, r) => a.or(r),
        };
        let mut steps_told = Vec::new();
        for (step, step_owed) in later_steps(event, policy, end, inputs.until_ms) {
            for contact in step.contacts {
                let Some(c) = contacts.get(&contact) else {
                    continue;
                };
                if wants(c, "monitor.down", 2) {
                    add((Some(event.event_id), c.receiver.clone()), step_owed);
                    steps_told.push((step.due_ms, contact, step_owed));
                }
            }
        }
        told.insert(incident, steps_told);
    }
    for (contact, n) in &inputs.test_alerts {
        if let Some(c) = contacts.get(contact) {
            add((None, c.receiver.clone()), Owed { min: *n, max: *n });
        }
    }
    owed
}

/// One (event, contact) that got other than it was owed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlertProblem {
    pub event_id: Option<Uuid>,
    pub receiver: String,
    pub owed: Option<Owed>,
    pub got: usize,
}

#[derive(Debug, Default, Clone)]
pub struct AlertVerdict {
    /// Receipts owed for certain (the sum of every minimum).
    pub expected: usize,
    /// Receipts that may come (an event at the end, a step at its ack).
    pub optional: usize,
    /// Receipts that matched what was owed.
    pub sent: usize,
    /// Owed and not received.
    pub missing: usize,
    /// Received beyond what was owed (a second copy).
    pub doubled: usize,
    /// Received and owed nothing at all (a held change alerted, a contact
    /// that did not want it).
    pub unexpected: usize,
    pub problems: Vec<AlertProblem>,
}

impl AlertVerdict {
    pub fn clean(&self) -> bool {
        self.missing == 0 && self.doubled == 0 && self.unexpected == 0
    }
}

const MAX_PROBLEMS: usize = 40;

/// `owed` against `receipts`.
pub fn judge(owed: &BTreeMap<OwedKey, Owed>, receipts: &[Receipt]) -> AlertVerdict {
    let mut got: BTreeMap<OwedKey, usize> = BTreeMap::new();
    for r in receipts {
        *got.entry((r.event_id, r.receiver.clone())).or_default() += 1;
    }
    let mut verdict = AlertVerdict::default();
    let problem = |v: &mut AlertVerdict, key: &OwedKey, owed: Option<Owed>, got: usize| {
        if v.problems.len() < MAX_PROBLEMS {
            v.problems.push(AlertProblem {
                event_id: key.0,
                receiver: key.1.clone(),
                owed,
                got,
            });
        }
    };
    for (key, o) in owed {
        verdict.expected += o.min;
        verdict.optional += o.max - o.min;
        let n = got.remove(key).unwrap_or(0);
        verdict.sent += n.min(o.max);
        if n < o.min {
            verdict.missing += o.min - n;
            problem(&mut verdict, key, Some(*o), n);
        }
        if n > o.max {
            verdict.doubled += n - o.max;
            problem(&mut verdict, key, Some(*o), n);
        }
    }
    for (key, n) in got {
        verdict.unexpected += n;
        problem(&mut verdict, &key, None, n);
    }
    verdict
}

#[cfg(test)]
#[path = "alerts_tests.rs"]
mod tests;
