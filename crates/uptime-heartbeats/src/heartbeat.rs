//! When a heartbeat monitor's ping is expected and when it fails without one.

use chrono::{DateTime, TimeDelta, Utc};

use crate::schedule::Period;

/// What is known of one heartbeat monitor, read from its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heartbeat {
    pub period: Period,
    pub grace_secs: u32,
    /// max(created_at, updated_at): an edit or a resume starts a fresh period.
    pub since: DateTime<Utc>,
    pub last_ping_at: Option<DateTime<Utc>>,
    pub started_at: Option<DateTime<Utc>>,
}

impl Heartbeat {
    fn grace(&self) -> TimeDelta {
        TimeDelta::seconds(i64::from(self.grace_secs))
    }

    /// Where the current period opens: the last ping, never earlier than
    /// `since`.
    fn base(&self) -> DateTime<Utc> {
        self.last_ping_at.map_or(self.since, |p| p.max(self.since))
    }

    /// The expected ping of the period that opens at `base`, before grace.
    fn expected_after(&self, base: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.period {
            Period::Interval { secs } => base.checked_add_signed(interval(*secs)),
            Period::Cron(schedule) => schedule.next_after(base),
        }
    }

    /// The start of the run in progress: a start ping later than the last
    /// ping and not before `since` (a pause, resume or edit forgets a run
    /// started before it).
    pub fn unfinished_run(&self) -> Option<DateTime<Utc>> {
        self.started_at
            .filter(|s| *s >= self.since && self.last_ping_at.is_none_or(|ping| *s > ping))
    }

    /// When the next ping is expected (before grace), as the API shows it at
    /// `now`: the expected time of the current period while its deadline
    /// (expected + grace) is still ahead, even when the expected time itself
    /// has passed; once that deadline has passed, the next period's.
    pub fn next_expected_at(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let first = self.expected_after(self.base())?;
        let grace = self.grace();
        if first + grace > now {
            return Some(first);
        }
        // Missed: the first expected time whose deadline is after `now`.
        match &self.period {
            Period::Interval { secs } => {
                let step = interval(*secs);
                let behind = now - (first + grace);
                let periods = behind.num_milliseconds() / step.num_milliseconds() + 1;
                Some(first + step * i32::try_from(periods).ok()?)
            }
            Period::Cron(schedule) => schedule.next_after(now - grace),
        }
    }

    /// When the current period (or the started run) fails without a ping:
    /// the period's expected time plus grace, or the run's start plus grace
    /// when a started run would fail first.
    pub fn deadline(&self) -> Option<DateTime<Utc>> {
        let period = self
            .expected_after(self.base())
            .and_then(|t| t.checked_add_signed(self.grace()));
        let run = self
            .unfinished_run()
            .and_then(|s| s.checked_add_signed(self.grace()));
        match (period, run) {
            (Some(p), Some(r)) => Some(p.min(r)),
            (p, r) => p.or(r),
        }
    }

    /// The deadline that follows a missed one (each missed period is one
    /// failed check): one interval later, or the next scheduled time after
    /// the missed one's, plus grace.
    pub fn deadline_after(&self, missed: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match &self.period {
            Period::Interval { secs } => missed.checked_add_signed(interval(*secs)),
            Period::Cron(schedule) => schedule
                .next_after(missed - self.grace())
                .and_then(|t| t.checked_add_signed(self.grace())),
        }
    }

    /// The latest deadline at or before `now` in the chain that starts at
    /// [`deadline`](Self::deadline) and goes on by
    /// [`deadline_after`](Self::deadline_after); `None` while the first is
    /// still ahead. Lets a scheduler that was away report only the latest
    /// missed period instead of every one.
    pub fn latest_missed(&self, now: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let first = self.deadline()?;
        if first > now {
            return None;
        }
        match &self.period {
            Period::Interval { secs } => {
                let step = interval(*secs);
                let periods = (now - first).num_milliseconds() / step.num_milliseconds();
                Some(first + step * i32::try_from(periods).ok()?)
            }
            Period::Cron(schedule) => {
                // Any scheduled time later than the first deadline's is in
                // the chain; one at or before it is not.
                let latest = schedule
                    .latest_at_or_before(now - self.grace())
                    .map(|t| t + self.grace());
                Some(latest.map_or(first, |l| l.max(first)))
            }
        }
    }
}

fn interval(secs: u32) -> TimeDelta {
    TimeDelta::seconds(i64::from(secs.max(1)))
}
