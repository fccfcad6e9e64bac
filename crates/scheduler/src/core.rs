//! The scheduler's pure core: what to read, what to publish and when to wake.
//!
//! No I/O, no async, no clock: every input carries `now` (epoch ms), and the
//! shell ([`crate::shell`]) does what the core asks. The shell drives one
//! round at a time, calling [`Planner::next`] until it answers
//! [`Step::Sleep`]; a round mirrors the leader's loop:
//!
//! 1. **changes**: re-read the monitors a change event named ([`Read::Changed`]);
//!    one already overdue is held for the catch-up budget rather than put on
//!    the timeline due at once (so is one a resync or the load brings in);
//! 2. **catch-up**: let held items back onto the timeline as the budget
//!    allows (`catchup`: rate, order, never past the next slot);
//! 3. **stage**: pop everything due within the lookahead off the timeline and
//!    read the configuration of the checked ones in one query
//!    ([`Read::CheckConfigs`]); they wait in `ready` with their snapshot;
//! 4. **fire**: publish everything in `ready` that is due ([`Step::Publish`])
//!    and put each monitor back on the timeline at its next slot; heartbeat
//!    deadlines that are due are re-read ([`Read::Heartbeats`]) and either
//!    moved (a ping arrived) or reported as a failed check;
//! 5. **resync**: read one page of the walk over all active monitors
//!    ([`Read::Page`]) when one is running and there is slack;
//! 6. **sleep** until the next due instant ([`Step::Sleep`]), unless the
//!    world (a change event, the resync timer) calls first.
//!
//! Between rounds the shell reports what arrived: [`Planner::monitor_changed`],
//! [`Planner::changes_arrived`], [`Planner::start_resync`]. After a
//! [`Step::Read`] it hands the rows (or the failure) to [`Planner::loaded`].

mod catchup;
mod config_cache;
pub(crate) mod grants;
mod heartbeats;
mod messages;
mod planner;
mod shards;
#[cfg(test)]
mod tests;

pub(crate) use catchup::{CatchupPolicy, Tally};
pub(crate) use config_cache::CacheTally;
pub(crate) use planner::Planner;

use uptime_contracts::{CheckResult, DueCheck};
use uptime_db::schedule::{CheckConfig, MonitorTiming};

/// Rows per page of the full load and resync.
pub(crate) const RESYNC_PAGE: i64 = 5_000;

/// What the core wants done next.
// A publication (a due check with its spec) is most steps' payload, so boxing
// it would cost an allocation per publish to save space in the rare others.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Step {
    /// Run this query and hand the result to [`Planner::loaded`] before
    /// asking for the next step.
    Read(Read),
    /// Publish this message (the shell measures lateness from its due time).
    Publish(Publication),
    /// Update the timeline's size in the stats.
    Report(Report),
    /// Nothing more to do before this instant (epoch ms), unless something
    /// arrives from outside.
    Sleep(i64),
}

/// A database read the core needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Read {
    /// The timings of changed monitors (active ones only; a missing row
    /// means deleted or paused).
    Changed(Vec<i64>),
    /// The check configurations of the staged checked monitors.
    CheckConfigs(Vec<i64>),
    /// The timings of heartbeat monitors whose deadline is due.
    Heartbeats(Vec<i64>),
    /// One page of active monitor timings with `id > after_id`, in id order,
    /// at most [`RESYNC_PAGE`] rows.
    Page { after_id: i64 },
}

/// The answer to a [`Read`]: timings for every read but the check
/// configurations.
#[derive(Debug, Clone)]
pub(crate) enum Rows {
    Timings(Vec<MonitorTiming>),
    Configs(Vec<CheckConfig>),
}

/// A read failed (or timed out); the shell has logged why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DbFailed;

/// A message to publish.
// Due checks are nearly all publications; boxing them would cost an
// allocation each to shrink the rare missed-heartbeat results.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Publication {
    /// One region's check of a scheduled round, for that region's checkers.
    Check(DueCheck),
    /// The failed result of a heartbeat period that ended without a ping.
    MissedHeartbeat(CheckResult),
}

impl Publication {
    pub(crate) fn due_at_ms(&self) -> i64 {
        match self {
            Publication::Check(due) => due.due_at.timestamp_millis(),
            Publication::MissedHeartbeat(result) => result.checked_at.timestamp_millis(),
        }
    }
}

/// The timeline's size, for the stats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Report {
    /// Monitors on the timeline changed.
    Size {
        monitors: usize,
        bytes_per_monitor: usize,
    },
    /// A walk over all active monitors is complete (after a [`Report::Size`]).
    Loaded {
        monitors: usize,
        bytes_per_monitor: usize,
        full_load: bool,
    },
    /// Overdue items held for the catch-up budget now, and those released
    /// or superseded since the last such report.
    Catchup(Tally),
}
