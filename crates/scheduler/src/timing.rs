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
//! Heartbeat monitors follow [`uptime_heartbeats`] (its crate documentation
//! has the rules): a fixed interval or a five-field cron schedule, the grace
//! (`timeout_secs`), and a started run that must finish within the grace.
//! The current period opens at the last ping, never earlier than
//! `updated_at`, so a paused monitor is not blamed for the periods it spent
//! paused: resuming (which updates the row) starts a fresh period, and so
//! does any edit. After a missed deadline the next one is one interval, or
//! the next scheduled run, later (each missed period is one failed check).
//! At start, only the latest missed deadline is reported, and not when it is
//! already recorded as a failed check (`last_checked_at` at or after it).

use crate::queue::Kind;
use chrono::{DateTime, Utc};
use uptime_db::schedule::MonitorTiming;
use uptime_heartbeats::{Heartbeat, Period};

/// A deadline that never comes (a schedule with no next run; the API
/// refuses such schedules, so this is only a guard).
pub const NEVER_MS: i64 = i64::MAX / 4;

/// A row's timing in milliseconds, as the scheduler reasons about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Timing {
    pub id: i64,
    pub kind: Kind,
    pub interval_ms: i64,
    pub grace_ms: i64,
    pub created_ms: i64,
    pub last_checked_ms: Option<i64>,
    /// Heartbeat monitors: their period, grace, last ping and started run.
    pub heartbeat: Option<Heartbeat>,
    /// Carried by the missed-heartbeat results.
    pub definition_version: i64,
}

fn to_datetime(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

fn to_ms(t: Option<DateTime<Utc>>) -> i64 {
    t.map_or(NEVER_MS, |t| t.timestamp_millis().min(NEVER_MS))
}

impl Timing {
    pub fn from_row(row: &MonitorTiming) -> Self {
        let kind = Kind::of(row.kind);
        let heartbeat = (kind == Kind::Heartbeat).then(|| Heartbeat {
            period: heartbeat_period(row),
            grace_secs: row.timeout_secs.max(0).unsigned_abs(),
            since: row.created_at.max(row.updated_at),
            last_ping_at: row.last_heartbeat_at,
            started_at: row.heartbeat_started_at,
        });
        Self {
            id: row.id,
            kind,
            interval_ms: i64::from(row.interval_secs.max(1)) * 1000,
            grace_ms: i64::from(row.timeout_secs.max(0)) * 1000,
            created_ms: row.created_at.timestamp_millis(),
            last_checked_ms: row.last_checked_at.map(|t| t.timestamp_millis()),
            heartbeat,
            definition_version: row.definition_version,
        }
    }

    pub fn interval_secs(&self) -> u32 {
        (self.interval_ms / 1000) as u32
    }

    /// When the monitor is first due, seen from `now_ms` (may be in the past:
    /// due at once).
    pub fn first_due(&self, now_ms: i64) -> i64 {
        match &self.heartbeat {
            None => self.first_check_due(now_ms),
            Some(heartbeat) => first_heartbeat_deadline(heartbeat, self.last_checked_ms, now_ms),
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

    /// The deadline the current period (or the started run) ends at: after
    /// it, no ping means a miss. [`NEVER_MS`] for a checked monitor.
    pub fn heartbeat_deadline(&self) -> i64 {
        to_ms(self.heartbeat.as_ref().and_then(Heartbeat::deadline))
    }

    /// The deadline after the missed one at `missed_ms`.
    pub fn heartbeat_deadline_after(&self, missed_ms: i64) -> i64 {
        to_ms(
            self.heartbeat
                .as_ref()
                .and_then(|h| h.deadline_after(to_datetime(missed_ms))),
        )
    }
}

/// The row's period. A schedule the API should have refused (it validates
/// with the same parser) is logged and the interval followed instead, so the
/// monitor is still watched.
fn heartbeat_period(row: &MonitorTiming) -> Period {
    let schedule = row.heartbeat_schedule.as_deref();
    Period::of(row.interval_secs, schedule, row.heartbeat_timezone.as_deref()).unwrap_or_else(
        |error| {
            tracing::warn!(monitor_id = row.id, %error, "heartbeat schedule unusable; following its interval");
            Period::Interval {
                secs: row.interval_secs.max(1).unsigned_abs(),
            }
        },
    )
}

fn first_heartbeat_deadline(
    heartbeat: &Heartbeat,
    last_checked_ms: Option<i64>,
    now_ms: i64,
) -> i64 {
    let now = to_datetime(now_ms);
    // Missed while nobody was scheduling: report only the latest missed
    // period, unless it is already recorded.
    let Some(latest) = heartbeat.latest_missed(now) else {
        return to_ms(heartbeat.deadline());
    };
    match last_checked_ms {
        Some(checked) if checked >= latest.timestamp_millis() => {
            to_ms(heartbeat.deadline_after(latest))
        }
        _ => latest.timestamp_millis(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slots::slot_at_or_before;
    use uptime_heartbeats::{Heartbeat, Period};

    const NOW: i64 = 1_800_000_000_000;
    const TEN_S: i64 = 10_000;

    fn checked(created: i64, last_checked: Option<i64>) -> Timing {
        Timing {
            id: 9,
            kind: Kind::Checked,
            interval_ms: TEN_S,
            grace_ms: 1_000,
            created_ms: created,
            last_checked_ms: last_checked,
            heartbeat: None,
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
            last_checked_ms: checked,
            heartbeat: Some(Heartbeat {
                period: Period::Interval { secs: 10 },
                grace_secs: 1,
                since: to_datetime(created.max(updated)),
                last_ping_at: ping.map(to_datetime),
                started_at: None,
            }),
            ..self::checked(created, None)
        }
    }

    /// Every minute, 5 s grace.
    fn every_minute(created: i64, ping: Option<i64>, started: Option<i64>) -> Timing {
        let mut t = heartbeat(created, created, ping, None);
        if let Some(h) = t.heartbeat.as_mut() {
            h.period = Period::of(10, Some("* * * * *"), None).unwrap();
            h.grace_secs = 5;
            h.started_at = started.map(to_datetime);
        }
        t
    }

    #[test]
    fn a_cron_heartbeat_is_due_at_its_next_run_plus_grace_then_each_run() {
        const MINUTE: i64 = 60_000;
        assert_eq!(NOW % MINUTE, 0, "NOW is a scheduled run");
        let t = every_minute(NOW - 1_000, None, None);
        assert_eq!(t.first_due(NOW - 1_000), NOW + 5_000);
        assert_eq!(
            t.heartbeat_deadline_after(NOW + 5_000),
            NOW + MINUTE + 5_000
        );
        // Silent for ten minutes: only the latest missed run is caught up,
        // and not once it is recorded.
        let mut t = every_minute(NOW - 10 * MINUTE, None, None);
        assert_eq!(t.first_due(NOW), NOW - MINUTE + 5_000);
        t.last_checked_ms = Some(NOW - MINUTE + 5_000);
        assert_eq!(t.first_due(NOW), NOW + 5_000);
        // A start ping 2 s ago: the run fails 5 s after it, before the
        // schedule's own deadline.
        let t = every_minute(NOW - 3_000, None, Some(NOW - 2_000));
        assert_eq!(t.first_due(NOW), NOW + 3_000);
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
