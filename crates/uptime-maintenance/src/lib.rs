//! Maintenance windows: when they are open.
//!
//! A window is one-off (`starts_at`..`ends_at`) or recurring: an RFC 5545
//! `RRULE` (expanded by the `rrule` crate) whose occurrences start at local
//! times of an IANA zone (chrono-tz), each lasting `duration`. Local times
//! follow the zone across DST changes: a weekly 03:00 in Europe/Berlin is
//! 01:00 UTC in winter and 02:00 UTC in summer. A local time that does not
//! exist (inside the spring gap) starts at the instant it would have with
//! the offset before the gap, and one that happens twice (the autumn fold)
//! at its first, as RFC 5545 says.
//!
//! Everything a tenant gives is bounded before anything is expanded: the
//! rule's length, no sub-hourly rule without `COUNT` or `UNTIL`, a duration
//! of at most [`MAX_DURATION_SECS`]; and every search looks at a bounded
//! number of occurrences ([`SEARCH_LIMIT`]). Pure: the clock is a parameter.

use chrono::{DateTime, Duration, TimeZone, Utc};
use rrule::{Frequency, RRuleSet, Tz};

/// The longest `RRULE` text accepted.
pub const MAX_RULE_LEN: usize = 512;
/// The longest window: a week.
pub const MAX_DURATION_SECS: i64 = 7 * 24 * 3600;
/// The shortest window: a minute.
pub const MIN_DURATION_SECS: i64 = 60;
/// The most occurrences one search expands.
pub const SEARCH_LIMIT: u16 = 1000;

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
    set: RRuleSet,
    tz: chrono_tz::Tz,
    duration: Duration,
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
        let local = first_start.with_timezone(&tz);
        let text = format!(
            "DTSTART;TZID={}:{}\nRRULE:{rule}",
            tz.name(),
            local.format("%Y%m%dT%H%M%S")
        );
        let set: RRuleSet = text
            .parse()
            .map_err(|e: rrule::RRuleError| WindowError::Rule(e.to_string()))?;
        for r in set.get_rrule() {
            let sub_hourly = matches!(r.get_freq(), Frequency::Minutely | Frequency::Secondly);
            if sub_hourly && r.get_count().is_none() && r.get_until().is_none() {
                return Err(WindowError::Unbounded);
            }
        }
        Ok(Self {
            set,
            tz,
            duration: Duration::seconds(duration_secs),
        })
    }

    /// The next `n` occurrences (at most [`SEARCH_LIMIT`]) that have not
    /// ended by `now`: the open one first, if any.
    pub fn upcoming(&self, now: DateTime<Utc>, n: u16) -> Vec<Span> {
        let from = self.in_zone(now - self.duration);
        let result = self
            .set
            .clone()
            .after(from)
            .all(n.min(SEARCH_LIMIT).saturating_add(1));
        result
            .dates
            .into_iter()
            .map(|start| {
                let start = start.with_timezone(&Utc);
                Span {
                    start,
                    end: start + self.duration,
                }
            })
            .filter(|span| span.end > now)
            .take(usize::from(n))
            .collect()
    }

    /// The occurrence open at `at`, if any.
    pub fn open_at(&self, at: DateTime<Utc>) -> Option<Span> {
        self.upcoming(at, 1)
            .into_iter()
            .find(|span| span.contains(at))
    }

    fn in_zone(&self, at: DateTime<Utc>) -> DateTime<Tz> {
        Tz::Tz(self.tz).from_utc_datetime(&at.naive_utc())
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
