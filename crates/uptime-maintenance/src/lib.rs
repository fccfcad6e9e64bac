//! Maintenance windows: when they are open.
//!
//! A window is one-off (`starts_at`..`ends_at`) or recurring: an RFC 5545
//! `RRULE` (expanded by the `rrule` crate) whose occurrences start at local
//! times of an IANA zone (chrono-tz), each lasting `duration`. Local times
//! follow the zone across DST changes: a weekly 03:00 in Europe/Berlin is
//! 01:00 UTC in winter and 02:00 UTC in summer.
//!
//! The rule is expanded on the zone's wall clock (its local times, as if
//! the zone had no offsets), and each local time becomes an instant by one
//! rule, [`instant_of`], the RFC 5545 one: a local time that happens twice
//! (the autumn fold) is its earlier instant, one that does not exist (the
//! spring gap) is read with the offset before the gap, so it moves forward
//! by the gap's length. The first start (the rule's DTSTART) is the instant
//! given, whichever of a fold's two it is. No occurrence is ever dropped for
//! its local time, in any zone (Havana changes its clocks at midnight).
//!
//! Everything a tenant gives is bounded before anything is expanded: the
//! rule's length, no sub-hourly rule without `COUNT` or `UNTIL`, a duration
//! of at most [`MAX_DURATION_SECS`]; and every search looks at a bounded
//! number of occurrences ([`SEARCH_LIMIT`]). Pure: the clock is a parameter.
//!
//! One module: the window rules are this file; their unit tests are `tests.rs`.

use chrono::{DateTime, Duration, LocalResult, NaiveDateTime, Offset, TimeZone, Utc};
use rrule::{Frequency, RRule, RRuleSet, Tz, Unvalidated};
use std::collections::BTreeMap;

/// The longest `RRULE` text accepted.
pub const MAX_RULE_LEN: usize = 512;
/// The longest window: a week.
pub const MAX_DURATION_SECS: i64 = 7 * 24 * 3600;
/// The shortest window: a minute.
pub const MIN_DURATION_SECS: i64 = 60;
/// The most occurrences one search expands.
pub const SEARCH_LIMIT: u16 = 1000;
/// How far an occurrence's local time can be from its instant's local time
/// now, beyond the offset in force: a zone's offset never changed by more
/// than a day at once (Samoa skipped 30 December 2011), so a search on the
/// wall clock looks this much further either side and sorts by instant.
const WALL_SLACK_HOURS: i64 = 25;

/// Why a window's definition is refused; each names what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WindowError {
    #[error("ends_at must be after starts_at")]
    EndsBeforeStart,
    #[error("a window lasts {MIN_DURATION_SECS} s to {MAX_DURATION_SECS} s")]
    Duration,
    #[error("is not an IANA time zone (e.g. Europe/Berlin)")]
    TimeZone,
    #[error("at most {MAX_RULE_LEN} characters")]
    RuleTooLong,
    #[error("give the RRULE's parts only (FREQ=...;...), without DTSTART or other lines")]
    RuleLines,
    #[error("a rule more often than hourly needs COUNT or UNTIL")]
    Unbounded,
    #[error("is not a valid RFC 5545 RRULE: {0}")]
    Rule(String),
}

/// A span of time, `start` inclusive, `end` exclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub start: DateTime<Utc>,
    pub end: DateTime<Utc>,
}

impl Span {
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.start <= at && at < self.end
    }
}

/// A recurring window: an RRULE in a zone, from a first local start.
#[derive(Debug, Clone)]
pub struct Recurrence {
    /// The rule on the zone's wall clock: its "UTC" times are local times.
    wall_set: RRuleSet,
    tz: chrono_tz::Tz,
    duration: Duration,
    /// The first start as given, and its local time: that occurrence is
    /// this instant even when its local time is ambiguous.
    first_start: DateTime<Utc>,
    first_wall: NaiveDateTime,
    /// `UNTIL`, an instant: no occurrence starts after it.
    until: Option<DateTime<Utc>>,
}

impl Recurrence {
    /// The window whose occurrences start as `rule` (e.g.
    /// `FREQ=WEEKLY;BYDAY=SU;BYHOUR=2`) says, counted from `first_start`
    /// (the rule's DTSTART, which also gives the minutes and seconds the
    /// rule does not) in `timezone`, each lasting `duration_secs`.
    pub fn parse(
        rule: &str,
        timezone: &str,
        first_start: DateTime<Utc>,
        duration_secs: i64,
    ) -> Result<Self, WindowError> {
        if !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&duration_secs) {
            return Err(WindowError::Duration);
        }
        let tz: chrono_tz::Tz = timezone.parse().map_err(|_| WindowError::TimeZone)?;
        let rule = rule.trim();
        let rule = rule.strip_prefix("RRULE:").unwrap_or(rule);
        if rule.len() > MAX_RULE_LEN {
            return Err(WindowError::RuleTooLong);
        }
        if rule.contains(['\n', '\r']) || rule.to_ascii_uppercase().contains("DTSTART") {
            return Err(WindowError::RuleLines);
        }
        let mut parsed: RRule<Unvalidated> = rule
            .parse()
            .map_err(|e: rrule::RRuleError| WindowError::Rule(e.to_string()))?;
        let first_wall = wall_clock(tz, first_start);
        let until = match parsed.get_until() {
            None => None,
            // RFC 5545: with a zoned DTSTART, UNTIL is UTC; a local one
            // would be read in the machine's zone.
            Some(until) if until.timezone() != Tz::UTC => {
                return Err(WindowError::Rule(
                    "UNTIL must be a UTC date-time (e.g. 20271231T000000Z)".to_string(),
                ))
            }
            Some(until) => {
                let until = until.with_timezone(&Utc);
                parsed = parsed.until(as_wall(wall_clock(tz, until)));
                Some(until)
            }
        };
        let wall_set = parsed
            .build(as_wall(first_wall))
            .map_err(|e| WindowError::Rule(e.to_string()))?;
        for r in wall_set.get_rrule() {
            let sub_hourly = matches!(r.get_freq(), Frequency::Minutely | Frequency::Secondly);
            if sub_hourly && r.get_count().is_none() && r.get_until().is_none() {
                return Err(WindowError::Unbounded);
            }
        }
        Ok(Self {
            wall_set: wall_set.limit(),
            tz,
            duration: Duration::seconds(duration_secs),
            first_start,
            first_wall,
            until,
        })
    }

    /// The next `n` occurrences (at most [`SEARCH_LIMIT`]) that have not
    /// ended by `now`: the open one first, if any.
    pub fn upcoming(&self, now: DateTime<Utc>, n: u16) -> Vec<Span> {
        let n = usize::from(n.min(SEARCH_LIMIT));
        if n == 0 {
            return Vec::new();
        }
        let slack = Duration::hours(WALL_SLACK_HOURS);
        let from = wall_clock(self.tz, now - self.duration) - slack;
        // By start: two local times on one instant (a gap's moved forward
        // onto the hour after it) are one occurrence.
        let mut spans: BTreeMap<DateTime<Utc>, Span> = BTreeMap::new();
        // Once `n` are found, a later local time can still be an earlier
        // instant (a gap's times move forward): look one slack further.
        let mut look_until: Option<NaiveDateTime> = None;
        for wall in &self.wall_set {
            let wall = wall.naive_utc();
            if wall < from {
                continue;
            }
            if look_until.is_some_and(|last| wall > last) {
                break;
            }
            let start = if wall == self.first_wall {
                self.first_start
            } else {
                instant_of(self.tz, wall)
            };
            if start < self.first_start || self.until.is_some_and(|until| start > until) {
                continue;
            }
            let end = start + self.duration;
            if end > now {
                spans.insert(start, Span { start, end });
                if spans.len() >= n && look_until.is_none() {
                    look_until = Some(wall + slack);
                }
            }
        }
        spans.into_values().take(n).collect()
    }

    /// The occurrence open at `at`, if any.
    pub fn open_at(&self, at: DateTime<Utc>) -> Option<Span> {
        self.upcoming(at, 1)
            .into_iter()
            .find(|span| span.contains(at))
    }
}

/// The local time of `at` in `tz`.
fn wall_clock(tz: chrono_tz::Tz, at: DateTime<Utc>) -> NaiveDateTime {
    at.with_timezone(&tz).naive_local()
}

/// A local time as the `rrule` crate's UTC time: the wall-clock frame the
/// rule is expanded in.
fn as_wall(local: NaiveDateTime) -> DateTime<Tz> {
    Tz::UTC.from_utc_datetime(&local)
}

/// The instant of the local time `local` in `tz`, as RFC 5545 reads a
/// recurrence instance: a repeated local time (the autumn fold) is its
/// earlier instant; a local time that does not exist (the spring gap) is
/// read with the offset in force before the gap, so it moves forward by the
/// gap (02:30 on a Berlin spring day is 03:30 summer time).
pub fn instant_of(tz: chrono_tz::Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(at) | LocalResult::Ambiguous(at, _) => at.with_timezone(&Utc),
        LocalResult::None => {
            // A day earlier is before the gap and after any change before it
            // (no zone has changed twice in a day and a half).
            let before = tz
                .offset_from_utc_datetime(&(local - Duration::days(1)))
                .fix();
            Utc.from_utc_datetime(&(local - Duration::seconds(i64::from(before.local_minus_utc()))))
        }
    }
}

/// When a window is open: once, or on a recurrence.
#[derive(Debug, Clone)]
pub enum Schedule {
    Once(Span),
    Recurring(Box<Recurrence>),
}

impl Schedule {
    /// A one-off window.
    pub fn once(starts_at: DateTime<Utc>, ends_at: DateTime<Utc>) -> Result<Self, WindowError> {
        if ends_at <= starts_at {
            return Err(WindowError::EndsBeforeStart);
        }
        Ok(Self::Once(Span {
            start: starts_at,
            end: ends_at,
        }))
    }

    /// The ad-hoc window of a deploy script: from `now` for `minutes`.
    pub fn from_now(now: DateTime<Utc>, minutes: i64) -> Result<Self, WindowError> {
        let secs = minutes.saturating_mul(60);
        if !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&secs) {
            return Err(WindowError::Duration);
        }
        Self::once(now, now + Duration::seconds(secs))
    }

    /// The span open at `at`, if any.
    pub fn open_at(&self, at: DateTime<Utc>) -> Option<Span> {
        match self {
            Self::Once(span) => span.contains(at).then_some(*span),
            Self::Recurring(r) => r.open_at(at),
        }
    }

    /// The next `n` spans not ended by `now`.
    pub fn upcoming(&self, now: DateTime<Utc>, n: u16) -> Vec<Span> {
        match self {
            Self::Once(span) => (span.end > now && n > 0)
                .then_some(*span)
                .into_iter()
                .collect(),
            Self::Recurring(r) => r.upcoming(now, n),
        }
    }

    /// A window as stored: one-off when there is no `rrule` (`ends_at`
    /// required), else recurring from `starts_at` (the rule's first local
    /// start) in `timezone`, each occurrence `duration_secs` long.
    pub fn from_parts(
        starts_at: DateTime<Utc>,
        ends_at: Option<DateTime<Utc>>,
        rrule: Option<&str>,
        timezone: Option<&str>,
        duration_secs: Option<i64>,
    ) -> Result<Self, WindowError> {
        match rrule {
            None => Self::once(starts_at, ends_at.ok_or(WindowError::EndsBeforeStart)?),
            Some(rule) => Ok(Self::Recurring(Box::new(Recurrence::parse(
                rule,
                timezone.unwrap_or("UTC"),
                starts_at,
                duration_secs.ok_or(WindowError::Duration)?,
            )?))),
        }
    }

    /// When the window can never be open again: a one-off's end, or the end
    /// of a rule's last occurrence when its COUNT/UNTIL ends it within
    /// [`SEARCH_LIMIT`] occurrences of `since`; `None` for a rule that goes on.
    pub fn last_end(&self, since: DateTime<Utc>) -> Option<DateTime<Utc>> {
        match self {
            Self::Once(span) => Some(span.end),
            Self::Recurring(r) => {
                let spans = r.upcoming(since, SEARCH_LIMIT);
                if spans.len() < usize::from(SEARCH_LIMIT) {
                    // A bounded rule: its last occurrence (or none left).
                    Some(spans.last().map_or(since, |s| s.end))
                } else {
                    None
                }
            }
        }
    }
}

/// Seconds of `[from, to)` inside any of `spans` (overlaps counted once):
/// the maintenance time a day's uptime leaves out and reports beside it.
pub fn seconds_within(spans: &[Span], from: DateTime<Utc>, to: DateTime<Utc>) -> i64 {
    let mut clipped: Vec<(DateTime<Utc>, DateTime<Utc>)> = spans
        .iter()
        .map(|s| (s.start.max(from), s.end.min(to)))
        .filter(|(a, b)| a < b)
        .collect();
    clipped.sort();
    let mut total = 0;
    let mut current: Option<(DateTime<Utc>, DateTime<Utc>)> = None;
    for (a, b) in clipped {
        current = match current {
            Some((ca, cb)) if a <= cb => Some((ca, cb.max(b))),
            Some((ca, cb)) => {
                total += (cb - ca).num_seconds();
                Some((a, b))
            }
            None => Some((a, b)),
        };
    }
    if let Some((ca, cb)) = current {
        total += (cb - ca).num_seconds();
    }
    total
}

/// `Utc.with_ymd_and_hms` for tests and callers that build instants.
pub fn utc(y: i32, mo: u32, d: u32, h: u32, mi: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(y, mo, d, h, mi, 0)
        .single()
        .expect("a valid UTC time")
}

#[cfg(test)]
mod tests;
