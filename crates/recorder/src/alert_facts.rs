//! The facts the alert decision needs beyond the locked monitor rows, and
//! the one read that gathers them. A first plan of the batch says which
//! monitors need any ([`FactsNeeded`]: transitions of monitors that depend
//! on others, and changes into or out of `down`); a batch without such
//! transitions reads nothing. Otherwise up to three small indexed reads
//! (parents' states, held incidents, held dependents) and the batch is
//! planned again with them: the plan is pure, so the second is the first
//! with better knowledge.

use crate::alerting::AlertContext;
use crate::flapping::Flapping;
use crate::reminders::ReminderRules;
use crate::state_machine::Transition;
use chrono::{DateTime, Utc};
use diesel_async::AsyncPgConnection;
use std::collections::{HashMap, HashSet};
use uptime_contracts::{HoldReason, MonitorStatus};
use uptime_db::alerting::OpenAlerting;
use uptime_db::monitor_decisions::MonitorForDecisions;
use uptime_db::recording::MonitorStateUpdate;
use uptime_db::DbResult;
use uuid::Uuid;

/// The monitors of a batch whose transitions the alert decision needs
/// more facts about.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FactsNeeded {
    /// Changed status and depend on others: whether a parent holds them.
    pub children: Vec<i64>,
    /// Changed into or out of `down`: how many dependents they hold, and
    /// whether the incident they leave has its down alert held.
    pub down_changes: Vec<i64>,
}

impl FactsNeeded {
    pub fn is_empty(&self) -> bool {
        self.children.is_empty() && self.down_changes.is_empty()
    }
}

/// What the recorder read for the alert decision (see [`FactsNeeded`]).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AlertFacts {
    /// Per monitor: the parents holding its alerts now.
    pub blocking_parents: HashMap<i64, Vec<i64>>,
    /// Per monitor: why its open incident's down alert is held.
    pub held_incidents: HashMap<i64, HoldReason>,
    /// Per monitor: how many open incidents are held behind it.
    pub held_children: HashMap<i64, u32>,
}

impl AlertFacts {
    /// The context of `monitor`'s `transition` (`flapping` as detection
    /// made it; `opened_hold`: the hold of an incident this batch opened
    /// for it, which outranks what was read). Notes in `needed` which facts
    /// the monitor would need. Returns the context, the parents holding the
    /// monitor and how many dependents it holds.
    pub fn context_for(
        &self,
        monitor: &MonitorForDecisions,
        transition: &Transition,
        opened_hold: Option<Option<HoldReason>>,
        flapping: Flapping,
        needed: &mut FactsNeeded,
    ) -> (AlertContext, Vec<i64>, u32) {
        let id = monitor.id;
        if !monitor.rules.depends_on.is_empty() {
            needed.children.push(id);
        }
        let touches_down =
            transition.to == MonitorStatus::Down || transition.from == MonitorStatus::Down;
        if touches_down {
            needed.down_changes.push(id);
        }
        let blocked_by = self.blocking_parents.get(&id).cloned().unwrap_or_default();
        let incident_held = if transition.from == MonitorStatus::Down {
            opened_hold.unwrap_or_else(|| self.held_incidents.get(&id).copied())
        } else {
            None
        };
        let held_children = if touches_down {
            self.held_children.get(&id).copied().unwrap_or(0)
        } else {
            0
        };
        let context = AlertContext {
            blocked_by_parent: !blocked_by.is_empty(),
            incident_held,
            flapping,
            ..AlertContext::default()
        };
        (context, blocked_by, held_children)
    }
}

/// The alerting columns of incident `id` of `monitor`, opened at
/// `started_at` with its down alert `held` (or not); `None` when it uses
/// none of them (nothing more to write).
pub fn opened_alerting(
    monitor: &MonitorForDecisions,
    id: Uuid,
    started_at: DateTime<Utc>,
    held: Option<HoldReason>,
    blocked_by: &[i64],
    held_children: u32,
) -> Option<OpenAlerting> {
    let reminders = ReminderRules::of(
        monitor.rules.reminder_interval_secs,
        monitor.rules.reminder_max,
    );
    let alerting = OpenAlerting {
        id,
        alert_held: held.map(|h| h.as_str().to_string()),
        blocked_by: blocked_by.to_vec(),
        held_children: i32::try_from(held_children).unwrap_or(i32::MAX),
        // A held down alert is reminded of only once released.
        next_reminder_at: match held {
            None => reminders.and_then(|r| r.first_due(started_at)),
            Some(_) => None,
        },
    };
    let unused = OpenAlerting {
        id,
        ..OpenAlerting::default()
    };
    (alerting != unused).then_some(alerting)
}

/// Reads what a plan made without facts says it `needed`, for the locked
/// `monitors`, with the `updates` that plan makes to them; `None` when it
/// needs nothing.
pub async fn gather(
    conn: &mut AsyncPgConnection,
    monitors: &[MonitorForDecisions],
    needed: &FactsNeeded,
    updates: &[MonitorStateUpdate],
) -> DbResult<Option<AlertFacts>> {
    if needed.is_empty() {
        return Ok(None);
    }
    let by_id: HashMap<i64, &MonitorForDecisions> = monitors.iter().map(|m| (m.id, m)).collect();
    let mut facts = AlertFacts::default();

    if !needed.children.is_empty() {
        // A parent recorded in this very batch is judged by its state after
        // the batch; the others by their stored one.
        let in_batch: HashMap<i64, _> = updates.iter().map(|u| (u.id, u)).collect();
        let mut parents: Vec<i64> = needed
            .children
            .iter()
            .flat_map(|c| {
                by_id
                    .get(c)
                    .map(|m| m.rules.depends_on.clone())
                    .unwrap_or_default()
            })
            .filter(|p| !in_batch.contains_key(p))
            .collect();
        parents.sort_unstable();
        parents.dedup();
        let mut blocking: HashSet<i64> = uptime_db::alerting::blocking_parents(conn, &parents)
            .await?
            .into_iter()
            .collect();
        for (id, update) in &in_batch {
            let active = by_id.get(id).is_some_and(|m| m.active);
            if active
                && (update.status == MonitorStatus::Down.as_str()
                    || update.consecutive_failures > 0)
            {
                blocking.insert(*id);
            }
        }
        for child in &needed.children {
            let Some(m) = by_id.get(child) else { continue };
            let holding: Vec<i64> = m
                .rules
                .depends_on
                .iter()
                .copied()
                .filter(|p| blocking.contains(p))
                .collect();
            if !holding.is_empty() {
                facts.blocking_parents.insert(*child, holding);
            }
        }
    }

    if !needed.down_changes.is_empty() {
        for (monitor, reason) in
            uptime_db::alerting::held_incidents(conn, &needed.down_changes).await?
        {
            if let Some(reason) = hold_reason(&reason) {
                facts.held_incidents.insert(monitor, reason);
            }
        }
        for (parent, held) in uptime_db::alerting::held_children(conn, &needed.down_changes).await?
        {
            facts
                .held_children
                .insert(parent, u32::try_from(held).unwrap_or(u32::MAX));
        }
    }
    Ok(Some(facts))
}

/// A stored hold reason (`incidents.alert_held`).
pub fn hold_reason(stored: &str) -> Option<HoldReason> {
    [
        HoldReason::BlockedByParent,
        HoldReason::Flapping,
        HoldReason::Maintenance,
    ]
    .into_iter()
    .find(|r| r.as_str() == stored)
}
