//! When a heartbeat monitor expects its next ping, and when it fails without
//! one. Pure: no clock (every answer takes `now` or works from the row's
//! instants), no I/O, so the scheduler and the API compute the same answers
//! and tests need no waiting.
//!
//! - `schedule`: a heartbeat's [`Period`] (a fixed interval or a cron
//!   [`Schedule`] in a time zone) and the scheduled times it yields.
//! - `heartbeat`: [`Heartbeat`], the row's instants, and the expected ping
//!   and deadlines that follow from them by the rules below.
//!
//! A heartbeat has a [`Period`]: a fixed interval (`interval_secs`) or a
//! five-field cron [`Schedule`] read in an IANA time zone (UTC by default).
//! `grace_secs` is the monitor's `timeout_secs`.
//!
//! The current period opens at `base` = max(last ping, `since`), where
//! `since` = max(created_at, updated_at): an edit, or a resume (which updates
//! the row), starts a fresh period, so a paused monitor is not blamed for the
//! time it spent paused.
//!
//! - **Interval**: the next ping is expected at `base + interval`; the
//!   deadline is `base + interval + grace`. After a missed deadline the next
//!   one is one interval later.
//! - **Cron**: a ping is expected after each scheduled time `T`. The expected
//!   ping is the first scheduled time strictly after `base`; the deadline is
//!   `T + grace`. After a missed deadline the next is the following scheduled
//!   time plus grace: each missed scheduled run is one failed check. A ping
//!   sent a little before its scheduled time (a fast clock) counts for the
//!   period it falls in, so the run scheduled just after it is still
//!   expected.
//! - **Started run**: a start ping (`started_at`) later than the last ping,
//!   and not before `since`, is a run in progress. The deadline is then
//!   `min(period deadline, started_at + grace)`: a run that starts and sends
//!   no success or failure ping within the grace has failed, even when the
//!   period's own deadline is later. A miss reported while a run is in
//!   progress says the run started at `started_at` and did not finish.
//!
//! `next_expected_at(now)` is what the API shows: the current period's
//! expected time while its deadline is ahead, then the next period's.
//!
//! The chain of deadlines (`deadline`, then `deadline_after` each missed one)
//! is what a scheduler walks; `latest_missed` jumps to the latest one at or
//! before now after an outage, so only that one is reported.

mod heartbeat;
mod schedule;

pub use heartbeat::Heartbeat;
pub use schedule::{Period, Schedule, ScheduleError};
