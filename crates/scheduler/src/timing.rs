//! When a monitor is next due, from its row.
//!
//! Checked monitors (http, keyword):
//! - never checked (`last_checked_at` NULL): due at once. The check is named
//!   after the creation instant, or after the latest slot if one has passed
//!   since, so a restart before the first result republishes the same id;
//! - the latest slot at or before now has no recorded check (it is later than
//!   `last_checked_at`): due at once, under that slot's id. This is how a
//!   restart (or a resume) skips nothing: only the latest missed slot is
//!   caught up, not every slot of a long outage;
//! - otherwise: the next slot.
//!
//! "Due at once" is the planner's input: a monitor due at or before now is
//! held for the catch-up budget (`core::catchup`), which lets one or a handful
//! go at once and spreads a large backlog, each under the id computed here.
//!
//! Heartbeat monitors: the deadline is `base + interval + grace` where `base`
//! is the last ping, else the creation, but never earlier than `updated_at`.
//! That floor means a paused monitor is not blamed for the periods it spent
//! paused: resuming (which updates the row) starts a fresh period. It also
//! means any edit of a heartbeat monitor restarts its current period. After a
//! missed deadline the next one is one interval later (each missed period is
//! one failed check). At start, a deadline already recorded as a failed check
//! (`last_checked_at` at or after it) is not reported again.

use crate::queue::Kind;
use uptime_db::schedule::MonitorTiming;

/// A row's timing in milliseconds, as the scheduler reasons about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timing {
    pub id: i64,
    pub kind: Kind,
    pub interval_ms: i64,
    pub grace_ms: i64,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub last_checked_ms: Option<i64>,
    pub last_heartbeat_ms: Option<i64>,
    /// Carried by the missed-heartbeat results.
    pub definition_version: i64,
}

impl Timing {
    pub fn from_row(row: &MonitorTiming) -> Self {
        Self {
            id: row.id,
            kind: Kind::of(row.kind),
            interval_ms: i64::from(row.interval_secs.max(1)) * 1000,
            grace_ms: i64::from(row.timeout_secs.max(0)) * 1000,
            created_ms: row.created_at.timestamp_millis(),
            updated_ms: row.updated_at.timestamp_millis(),
            last_checked_ms: row.last_checked_at.map(|t| t.timestamp_millis()),
            last_heartbeat_ms: row.last_heartbeat_at.map(|t| t.timestamp_millis()),
            definition_version: row.definition_version,
        }
    }

    pub fn interval_secs(&self) -> u32 {
        (self.interval_ms / 1000) as u32
    }

    /// When the monitor is first due, seen from `now_ms` (may be in the past:
    /// due at once).
    pub fn first_due(&self, now_ms: i64) -> i64 {
        match self.kind {
            Kind::Checked => self.first_check_due(now_ms),
            Kind::Heartbeat => self.first_heartbeat_deadline(now_ms),
        }
    }

    fn first_check_due(&self, now_ms: i64) -> i64 {
        let latest = crate::slots::slot_at_or_before(self.id, self.interval_ms, now_ms);
        match self.last_checked_ms {
            None => latest.max(self.created_ms),
            Some(checked) if latest > checked => latest,
            Some(_) => latest + self.interval_ms,
        }
    }

    /// The deadline the current period ends at: after it, no ping means a miss.
    pub fn heartbeat_deadline(&self) -> i64 {
        let base = self
            .last_heartbeat_ms
            .unwrap_or(self.created_ms)
            .max(self.updated_ms);
        base + self.interval_ms + self.grace_ms
    }

    fn first_heartbeat_deadline(&self, now_ms: i64) -> i64 {
        let deadline = self.heartbeat_deadline();
        if deadline > now_ms {
            return deadline;
        }
        // Missed while nobody was scheduling: report only the latest missed
        // period, unless it is already recorded.
        let latest = deadline + (now_ms - deadline) / self.interval_ms * self.interval_ms;
        match self.last_checked_ms {
            Some(checked) if checked >= latest => latest + self.interval_ms,
            _ => latest,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::slot_at_or_before;

    const NOW: i64 = 1_800_000_000_000;
    const TEN_S: i64 = 10_000;

    fn checked(created: i64, last_checked: Option<i64>) -> Timing {
        Timing {
            id: 9,
            kind: Kind::Checked,
            interval_ms: TEN_S,
            grace_ms: 1_000,
            created_ms: created,
            updated_ms: created,
            last_checked_ms: last_checked,
            last_heartbeat_ms: None,
            definition_version: 1,
        }
    }

    #[test]
    fn a_new_monitor_is_due_at_once_under_its_creation_instant() {
        let latest = slot_at_or_before(9, TEN_S, NOW);
        let created = latest + 1; // no slot since creation
        let t = checked(created, None);
        assert_eq!(t.first_due(NOW.max(created)), created);
    }

    #[test]
    fn a_never_checked_monitor_catches_up_the_latest_slot() {
        let latest = slot_at_or_before(9, TEN_S, NOW);
        let t = checked(latest - 3 * TEN_S, None);
        assert_eq!(t.first_due(NOW), latest);
    }

    #[test]
    fn an_unrecorded_slot_is_due_at_once_and_a_recorded_one_is_not() {
        let latest = slot_at_or_before(9, TEN_S, NOW);
        let created = latest - 100 * TEN_S;
        // The check before the latest slot was recorded; the latest was not.
        assert_eq!(
            checked(created, Some(latest - TEN_S + 5)).first_due(NOW),
            latest
        );
        // The latest slot was recorded: wait for the next one.
        assert_eq!(
            checked(created, Some(latest + 5)).first_due(NOW),
            latest + TEN_S
        );
    }

    fn heartbeat(created: i64, updated: i64, ping: Option<i64>, checked: Option<i64>) -> Timing {
        Timing {
            kind: Kind::Heartbeat,
            updated_ms: updated,
            last_heartbeat_ms: ping,
            last_checked_ms: checked,
            ..self::checked(created, None)
        }
    }

    #[test]
    fn a_heartbeat_deadline_follows_the_last_ping_plus_interval_and_grace() {
        let created = NOW - 5_000;
        assert_eq!(
            heartbeat(created, created, None, None).first_due(NOW),
            created + 11_000
        );
        let ping = NOW - 1_000;
        assert_eq!(
            heartbeat(created, created, Some(ping), Some(ping)).first_due(NOW),
            ping + 11_000
        );
    }

    #[test]
    fn a_resumed_heartbeat_counts_from_the_resume() {
        let created = NOW - 3_600_000;
        let resumed = NOW - 2_000;
        assert_eq!(
            heartbeat(created, resumed, Some(created), None).first_due(NOW),
            resumed + 11_000
        );
    }

    #[test]
    fn missed_heartbeats_catch_up_only_the_latest_unrecorded_period() {
        let created = NOW - 100_000;
        let first = created + 11_000;
        // Periods end at first, first+10s, ...; the latest at or before NOW:
        let latest = first + (NOW - first) / TEN_S * TEN_S;
        let t = heartbeat(created, created, None, None);
        assert_eq!(t.first_due(NOW), latest);
        let recorded = heartbeat(created, created, None, Some(latest));
        assert_eq!(recorded.first_due(NOW), latest + TEN_S);
    }
}
