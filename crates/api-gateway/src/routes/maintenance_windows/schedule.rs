//! A maintenance window's schedule: the `When` fields of a create or an
//! update body checked into the columns a window stores ([`Scheduled`]).

use super::body::{Effect, When, MAX_DAYS_AHEAD};
use crate::validation::Problems;
use chrono::{DateTime, Duration, Utc};
use uptime_db::maintenance::{MaintenanceWindow, WindowDefinition};
use uptime_maintenance::{Schedule, MAX_DURATION_SECS, MIN_DURATION_SECS};

/// The schedule columns of `when`, checked; `None` when it has problems
/// (noted, each naming its field).
pub fn schedule(problems: &mut Problems, when: &When, now: DateTime<Utc>) -> Option<Scheduled> {
    let mut noted = Noted {
        problems,
        bad: false,
    };
    let p = &mut noted;
    let horizon = now + Duration::days(MAX_DAYS_AHEAD);
    if when.starts_at.is_some_and(|s| s > horizon) {
        p.add("starts_at", format!("at most {MAX_DAYS_AHEAD} days ahead"));
    }
    let scheduled = if let Some(rule) = &when.rrule {
        if when.ends_at.is_some() {
            p.add(
                "ends_at",
                "a recurring window takes duration_secs, not ends_at",
            );
        }
        if when.duration_minutes.is_some() {
            p.add("duration_minutes", "a recurring window takes duration_secs");
        }
        let Some(secs) = when.duration_secs else {
            p.add("duration_secs", "is required with rrule");
            return None;
        };
        let timezone = when.timezone.clone().unwrap_or_else(|| "UTC".to_string());
        let starts_at = when.starts_at.unwrap_or(now);
        match uptime_maintenance::Recurrence::parse(rule, &timezone, starts_at, secs) {
            Ok(r) => Some(Scheduled {
                starts_at,
                ends_at: None,
                rrule: Some(rule.trim().to_string()),
                timezone: Some(timezone),
                duration_secs: i32::try_from(secs).ok(),
                last_ends_at: Schedule::Recurring(Box::new(r)).last_end(now),
            }),
            Err(e) => {
                let field = match e {
                    uptime_maintenance::WindowError::Duration => "duration_secs",
                    uptime_maintenance::WindowError::TimeZone => "timezone",
                    _ => "rrule",
                };
                p.add(field, e.to_string());
                None
            }
        }
    } else {
        for (given, field) in [
            (when.timezone.is_some(), "timezone"),
            (when.duration_secs.is_some(), "duration_secs"),
        ] {
            if given {
                p.add(field, "only for a recurring window (with rrule)");
            }
        }
        let starts_at = when.starts_at.unwrap_or(now);
        let ends_at = match (when.ends_at, when.duration_minutes) {
            (Some(_), Some(_)) => {
                p.add(
                    "duration_minutes",
                    "give ends_at or duration_minutes, not both",
                );
                None
            }
            (Some(end), None) => {
                if when.starts_at.is_none() {
                    p.add("starts_at", "is required with ends_at");
                }
                Some(end)
            }
            (None, Some(minutes)) => {
                let secs = minutes.saturating_mul(60);
                if !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&secs) {
                    p.add(
                        "duration_minutes",
                        format!("must be between 1 and {}", MAX_DURATION_SECS / 60),
                    );
                    None
                } else {
                    Some(starts_at + Duration::seconds(secs))
                }
            }
            (None, None) => {
                p.add(
                    "ends_at",
                    "give ends_at, duration_minutes, or rrule with duration_secs",
                );
                None
            }
        };
        ends_at.and_then(|end| {
            let secs = (end - starts_at).num_seconds();
            if end <= starts_at {
                p.add("ends_at", "must be after starts_at");
                None
            } else if !(MIN_DURATION_SECS..=MAX_DURATION_SECS).contains(&secs) {
                p.add(
                    "ends_at",
                    format!("a window lasts {MIN_DURATION_SECS} s to {MAX_DURATION_SECS} s"),
                );
                None
            } else {
                Some(Scheduled {
                    starts_at,
                    ends_at: Some(end),
                    rrule: None,
                    timezone: None,
                    duration_secs: None,
                    last_ends_at: Some(end),
                })
            }
        })
    };
    scheduled.filter(|_| !noted.bad)
}

/// Problems, remembering whether any was added here.
struct Noted<'a> {
    problems: &'a mut Problems,
    bad: bool,
}

impl Noted<'_> {
    fn add(&mut self, field: &str, message: impl Into<String>) {
        self.bad = true;
        self.problems.add(field, message);
    }
}

/// The schedule columns.
#[derive(Debug, Clone, PartialEq)]
pub struct Scheduled {
    pub starts_at: DateTime<Utc>,
    pub ends_at: Option<DateTime<Utc>>,
    pub rrule: Option<String>,
    pub timezone: Option<String>,
    pub duration_secs: Option<i32>,
    pub last_ends_at: Option<DateTime<Utc>>,
}

impl Scheduled {
    /// The stored schedule of `row`.
    pub fn of(row: &MaintenanceWindow) -> Self {
        Self {
            starts_at: row.starts_at,
            ends_at: row.ends_at,
            rrule: row.rrule.clone(),
            timezone: row.timezone.clone(),
            duration_secs: row.duration_secs,
            last_ends_at: row.last_ends_at,
        }
    }

    pub fn definition(
        self,
        name: String,
        monitor_ids: Vec<i64>,
        label_selector: Option<serde_json::Value>,
        effect: Effect,
    ) -> WindowDefinition {
        WindowDefinition {
            name,
            monitor_ids,
            label_selector,
            effect: effect.as_str().to_string(),
            starts_at: self.starts_at,
            ends_at: self.ends_at,
            rrule: self.rrule,
            timezone: self.timezone,
            duration_secs: self.duration_secs,
            last_ends_at: self.last_ends_at,
        }
    }
}

/// Whether an update body gives schedule fields.
pub fn changes_schedule(when: &When) -> bool {
    when.is_given()
}
