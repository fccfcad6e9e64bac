//! A heartbeat's period: a fixed interval, or a five-field cron schedule in
//! an IANA time zone.

use std::fmt;
use std::str::FromStr;

use chrono::{DateTime, TimeDelta, Utc};
use chrono_tz::Tz;
use croner::parser::{CronParser, Seconds, Year};
use croner::Cron;

/// Why a schedule or a time zone was refused. The messages are shown to the
/// user as they are.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    #[error("invalid cron schedule {expression:?}: {reason}")]
    Cron { expression: String, reason: String },
    #[error("unknown time zone {0:?}; use an IANA name such as Europe/Berlin")]
    Timezone(String),
}

const FIELDS: &str = "minute hour day-of-month month day-of-week";

/// A parsed five-field cron expression and the zone its wall clock is read in.
#[derive(Clone)]
pub struct Schedule {
    // Boxed: a parsed pattern is a few hundred bytes, and `Period` should stay
    // small for its interval variant.
    cron: Box<Cron>,
    expression: String,
    zone: Tz,
}

impl Schedule {
    /// `expression`: five fields (minute hour day-of-month month
    /// day-of-week), as crontab(5) reads them: a day matches when either the
    /// day of month or the day of week matches (when neither is `*`); names
    /// (`MON`, `JAN`), ranges, lists and steps are accepted, and so are `L`,
    /// `W` and `#`. No seconds field, no year field, no `@daily` nicknames.
    /// `timezone`: an IANA name; `None` means UTC.
    pub fn parse(expression: &str, timezone: Option<&str>) -> Result<Schedule, ScheduleError> {
        let zone = match timezone {
            None => Tz::UTC,
            Some(name) => {
                Tz::from_str(name).map_err(|_| ScheduleError::Timezone(name.to_owned()))?
            }
        };
        let refuse = |reason: String| ScheduleError::Cron {
            expression: expression.to_owned(),
            reason,
        };
        let fields = expression.split_whitespace().count();
        if fields != 5 {
            return Err(refuse(format!(
                "must have five fields: {FIELDS} (got {fields})"
            )));
        }
        let cron = CronParser::builder()
            .seconds(Seconds::Disallowed)
            .year(Year::Disallowed)
            .build()
            .parse(expression)
            .map_err(|e| refuse(e.to_string()))?;
        let schedule = Schedule {
            cron: Box::new(cron),
            expression: expression.split_whitespace().collect::<Vec<_>>().join(" "),
            zone,
        };
        // A pattern that names no real day ("0 0 31 2 *") never fires: refuse
        // it here rather than let a monitor wait forever.
        if schedule.next_after(DateTime::<Utc>::UNIX_EPOCH).is_none() {
            return Err(refuse(format!("never matches a real date ({FIELDS})")));
        }
        Ok(schedule)
    }

    /// The first scheduled instant strictly after `t`.
    ///
    /// Wall clock times that a DST change skips run at the first instant
    /// after the gap; times that it repeats run once, at their first
    /// occurrence, for fixed-time patterns (vixie cron's rule).
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = t.with_timezone(&self.zone);
        let next = self.cron.find_next_occurrence(&local, false).ok()?;
        Some(next.with_timezone(&Utc))
    }

    /// The last scheduled instant at or before `t`.
    pub fn latest_at_or_before(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let local = t.with_timezone(&self.zone);
        let previous = self.cron.find_previous_occurrence(&local, true).ok()?;
        Some(previous.with_timezone(&Utc))
    }

    /// The expression, its fields separated by single spaces.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The IANA name of the zone (`UTC` when none was given).
    pub fn timezone(&self) -> &str {
        self.zone.name()
    }
}

impl PartialEq for Schedule {
    fn eq(&self, other: &Self) -> bool {
        self.expression == other.expression && self.zone == other.zone
    }
}

impl Eq for Schedule {}

impl fmt::Debug for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Schedule")
            .field("expression", &self.expression)
            .field("timezone", &self.zone.name())
            .finish()
    }
}

/// How often a heartbeat is expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Period {
    /// A ping at most every `secs` seconds, counted from the previous one.
    Interval { secs: u32 },
    /// A ping after each scheduled time.
    Cron(Schedule),
}

impl Period {
    /// The period of a monitor row: the schedule when there is one, else the
    /// interval (at least one second). A time zone without a schedule is
    /// ignored.
    pub fn of(
        interval_secs: i32,
        schedule: Option<&str>,
        timezone: Option<&str>,
    ) -> Result<Period, ScheduleError> {
        match schedule {
            Some(expression) => Ok(Period::Cron(Schedule::parse(expression, timezone)?)),
            None => Ok(Period::Interval {
                secs: interval_secs.max(1).unsigned_abs(),
            }),
        }
    }
}

impl Period {
    /// For the daily uptime, which counts periods, not pings: after a ping
    /// counted at `ping`, pings before the returned instant belong to the
    /// same period and count for nothing more.
    ///
    /// A tenth of the period is slack for a job that pings a little early:
    /// - interval: `ping + interval - interval / 10`;
    /// - cron: the next scheduled run after `ping + slack`, less the slack,
    ///   where slack is a tenth of the gap between the runs around `ping`. A
    ///   ping just before a run counts for that run, and a second ping for
    ///   the same run (a retry) does not count again.
    ///
    /// A schedule with no next run (never accepted) returns `ping`: every
    /// ping counts.
    pub fn counted_until(&self, ping: DateTime<Utc>) -> DateTime<Utc> {
        match self {
            Period::Interval { secs } => {
                let interval_ms = i64::from((*secs).max(1)) * 1000;
                ping + TimeDelta::milliseconds(interval_ms - interval_ms / 10)
            }
            Period::Cron(schedule) => {
                let Some(next) = schedule.next_after(ping) else {
                    return ping;
                };
                let previous = schedule.latest_at_or_before(ping);
                let gap = match previous {
                    Some(previous) => next - previous,
                    None => schedule
                        .next_after(next)
                        .map_or(TimeDelta::zero(), |n| n - next),
                };
                let slack = gap / 10;
                schedule
                    .next_after(ping + slack)
                    .map_or(ping, |end| end - slack)
            }
        }
    }
}
