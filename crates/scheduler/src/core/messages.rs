//! The messages the scheduler publishes, built from what was read, and the
//! staged items they are built from.

use crate::queue::Due;
use crate::slots;
use crate::timing::Timing;
use chrono::{DateTime, SecondsFormat, TimeDelta, Utc};
use uptime_contracts::{CheckOutcome, CheckResult, DueCheck, Trigger, DEFAULT_REGION};
use uptime_db::monitors::RoundOf;
use uptime_heartbeats::Period;

pub(crate) const REPORTER: &str = "scheduler";

/// A slot's round, built from the row read just before it is due: one due
/// check per region the monitor is checked from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Snapshot {
    pub round: Vec<DueCheck>,
}

/// An item taken off the timeline, waiting for its due instant.
#[derive(Debug)]
pub(crate) struct Ready {
    pub due: Due,
    /// The snapshot for a checked monitor; `None` for a heartbeat deadline,
    /// which is re-read at the deadline itself.
    pub snapshot: Option<Snapshot>,
}

impl PartialEq for Ready {
    fn eq(&self, other: &Self) -> bool {
        self.due == other.due
    }
}
impl Eq for Ready {}
impl PartialOrd for Ready {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ready {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.due.cmp(&other.due)
    }
}

fn to_datetime(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// The scheduled round of `due`, named after its slot (a single-region
/// round's one check has the slot's id, as before regions existed).
pub(crate) fn round_of(due: &Due, interval_secs: u32, definition_version: i64) -> RoundOf {
    RoundOf {
        round_id: slots::check_id(due.monitor_id, due.due_at_ms),
        trigger: Trigger::Scheduled,
        due_at: to_datetime(due.due_at_ms),
        definition_version,
        interval_secs,
    }
}

/// The failed result of the heartbeat period that ended at `due` without a ping.
pub(crate) fn missed_heartbeat(due: &Due, timing: &Timing) -> CheckResult {
    let deadline = to_datetime(due.due_at_ms);
    CheckResult {
        check_id: slots::missed_heartbeat_id(due.monitor_id, due.due_at_ms),
        monitor_id: due.monitor_id,
        definition_version: timing.definition_version,
        trigger: Trigger::Heartbeat,
        due_at: Some(deadline),
        checked_at: deadline,
        outcome: CheckOutcome::Fail,
        latency_ms: None,
        http_status: None,
        error: Some(missed_heartbeat_error(deadline, timing)),
        ssl_expires_at: None,
        reporter: REPORTER.to_string(),
        // Heartbeats have no regions or rounds: checked where pings arrive.
        region: DEFAULT_REGION.to_string(),
        round_id: None,
    }
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Why the period that ended at `deadline` failed: a run that started and
/// did not finish within the grace (its deadline is `deadline`), or no ping
/// for the period, naming the run still in progress if there is one.
fn missed_heartbeat_error(deadline: DateTime<Utc>, timing: &Timing) -> String {
    let grace_secs = timing.grace_ms / 1000;
    let Some(heartbeat) = &timing.heartbeat else {
        return format!(
            "no ping received within {}s + {grace_secs}s grace",
            timing.interval_ms / 1000
        );
    };
    let grace = TimeDelta::milliseconds(timing.grace_ms);
    let run = heartbeat.unfinished_run().filter(|s| *s <= deadline);
    // The run's own deadline; a later one is a scheduled period's, which
    // the run in progress has not answered either.
    if let Some(started) = run.filter(|s| *s + grace == deadline) {
        return format!(
            "the run started at {} did not finish within {grace_secs}s grace \
             (no success or failure ping)",
            rfc3339(started)
        );
    }
    let missed = match &heartbeat.period {
        Period::Interval { secs } => {
            format!("no ping received within {secs}s + {grace_secs}s grace")
        }
        Period::Cron(schedule) => format!(
            "no ping after the run scheduled for {} (\"{}\" in {}) within {grace_secs}s grace",
            rfc3339(deadline - grace),
            schedule.expression(),
            schedule.timezone()
        ),
    };
    match run {
        Some(started) => format!(
            "{missed}; the run started at {} has not finished",
            rfc3339(started)
        ),
        None => missed,
    }
}
