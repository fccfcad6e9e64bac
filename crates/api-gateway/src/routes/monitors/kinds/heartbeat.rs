//! heartbeat monitors: pinged by the work they watch, never checked from
//! anywhere. Their own fields are the cron `schedule` (instead of the
//! interval) and its `timezone`, and responses add `next_expected_at`.

use super::stored::Stored;
use crate::error::ApiError;
use crate::routes::monitors::monitor_type::MonitorType;
use crate::validation::Problems;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

const MAX_SCHEDULE_CHARS: usize = 255;
const MAX_TIMEZONE_CHARS: usize = 64;

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response (`null` on other kinds).
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;


    /// heartbeat monitors: a five-field cron expression (minute hour
    /// day-of-month month day-of-week, as crontab reads it) after each of
    /// whose times a ping is expected, within `timeout_secs` of grace;
    /// instead of `interval_secs` (give one or the other). At most 255
    /// characters. Default none: the interval.
    schedule: opt String [min_length = 1, max_length = 255],
        clear /// `null` goes back to `interval_secs` (and drops the time zone).
        /// Giving `interval_secs` while a schedule stays is a 400.
        => /// heartbeat monitors: the cron schedule (fields separated by single
        /// spaces), if any; `interval_secs` is unused while one is set.
        Option<String>;
    /// heartbeat monitors with a `schedule`: the IANA time zone its times
    /// are read in, e.g. `Europe/Berlin` (default `UTC`).
    timezone: opt String [min_length = 1, max_length = 64],
        clear /// `null` resets it to `UTC`.
        => /// The schedule's IANA time zone (`UTC` unless one was given); `null`
        /// without a schedule.
        Option<String>;
    shown /// Active heartbeat monitors: when the next ping is expected (before the
    /// grace of `timeout_secs`), computed when the response is made; once a
    /// period's deadline has passed, the next period's. `null` for other
    /// types and paused monitors.
    next_expected_at: Option<DateTime<Utc>>;
}

/// The schedule being validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub(crate) schedule: Option<String>,
    pub(crate) timezone: Option<String>,
}

impl Draft {
    pub(crate) fn from_create(given: Create) -> Self {
        Self {
            schedule: given.schedule,
            timezone: given.timezone,
        }
    }

    /// The stored schedule with `patch` applied, for a monitor of `kind`.
    pub(crate) fn merge(kind: MonitorType, stored: &Stored<'_>, patch: Update) -> Self {
        let heartbeat = kind == MonitorType::Heartbeat;
        let keep = |stored: &Option<String>| stored.clone().filter(|_| heartbeat);
        let timezone = match (&patch.timezone, &patch.schedule) {
            (Some(given), _) => given.clone(),
            // The zone is the schedule's: clearing the schedule drops it.
            (None, Some(None)) => None,
            (None, _) => keep(&stored.monitor.heartbeat_timezone),
        };
        let schedule = match patch.schedule {
            Some(given) => given,
            None => keep(&stored.monitor.heartbeat_schedule),
        };
        Self { schedule, timezone }
    }

    /// Checks the rules of a monitor of `kind`; `interval_given`: whether
    /// the request named `interval_secs`, which a schedule excludes.
    pub(crate) fn validate(
        &self,
        kind: MonitorType,
        interval_given: bool,
        problems: &mut Problems,
    ) {
        if kind != MonitorType::Heartbeat {
            for (field, set) in [
                ("schedule", self.schedule.is_some()),
                ("timezone", self.timezone.is_some()),
            ] {
                if set {
                    problems.add(field, "is only for heartbeat monitors");
                }
            }
            return;
        }
        if let Some(zone) = &self.timezone {
            problems.check_len("timezone", zone, MAX_TIMEZONE_CHARS);
            if self.schedule.is_none() {
                problems.add(
                    "timezone",
                    "is the time zone of a schedule: set schedule too",
                );
            }
        }
        let Some(expression) = &self.schedule else {
            return;
        };
        if interval_given {
            problems.add(
                "interval_secs",
                "is not used with a schedule: give either interval_secs or schedule \
                 (schedule null goes back to the interval)",
            );
        }
        let n = expression.chars().count();
        if n == 0 || n > MAX_SCHEDULE_CHARS {
            return problems.add(
                "schedule",
                format!("must be 1 to {MAX_SCHEDULE_CHARS} characters long"),
            );
        }
        if self
            .timezone
            .as_ref()
            .is_some_and(|z| z.chars().count() > MAX_TIMEZONE_CHARS)
        {
            return;
        }
        match uptime_heartbeats::Schedule::parse(expression, self.timezone.as_deref()) {
            Ok(_) => {}
            Err(e @ uptime_heartbeats::ScheduleError::Timezone(_)) => {
                problems.add("timezone", e.to_string())
            }
            Err(e @ uptime_heartbeats::ScheduleError::Cron { .. }) => {
                problems.add("schedule", e.to_string())
            }
        }
    }

    /// The `heartbeat_schedule` and `heartbeat_timezone` columns: fields one
    /// space apart, the zone's canonical name, and a zone only when one was
    /// given (none reads as UTC). After [`Self::validate`] found nothing.
    pub(crate) fn store(&self) -> Result<(Option<String>, Option<String>), ApiError> {
        let schedule = match self.schedule.as_deref() {
            Some(expression) => Some(
                uptime_heartbeats::Schedule::parse(expression, self.timezone.as_deref())
                    .map_err(|e| ApiError::Internal(format!("schedule passed validation: {e}")))?,
            ),
            None => None,
        };
        let timezone = match (&schedule, &self.timezone) {
            (Some(s), Some(_)) => Some(s.timezone().to_string()),
            _ => None,
        };
        Ok((schedule.map(|s| s.expression().to_string()), timezone))
    }
}

/// The target: an optional label, never contacted.
pub(crate) fn check_target(problems: &mut Problems, label: &str) {
    problems.check_len("target", label, crate::validation::MAX_URL_CHARS);
}

/// What a response shows of a stored monitor.
pub(crate) fn shown(stored: &Stored<'_>, now: DateTime<Utc>) -> Shown {
    let m = stored.monitor;
    Shown {
        schedule: m.heartbeat_schedule.clone(),
        timezone: m
            .heartbeat_schedule
            .as_ref()
            .map(|_| m.heartbeat_timezone.clone().unwrap_or_else(|| "UTC".into())),
        next_expected_at: next_expected_at(m, now),
    }
}

/// When an active heartbeat monitor expects its next ping at `now`
/// (uptime-heartbeats, as the scheduler computes its deadlines).
pub(crate) fn next_expected_at(
    m: &uptime_db::models::Monitor,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    if m.kind != uptime_contracts::MonitorKind::Heartbeat || !m.active {
        return None;
    }
    let period = uptime_heartbeats::Period::of(
        m.interval_secs,
        m.heartbeat_schedule.as_deref(),
        m.heartbeat_timezone.as_deref(),
    );
    let period = match period {
        Ok(period) => period,
        Err(error) => {
            // The API validated the schedule it stored; a row it cannot read
            // shows no time rather than failing the whole response.
            tracing::warn!(monitor_id = m.id, %error, "heartbeat schedule unreadable");
            return None;
        }
    };
    uptime_heartbeats::Heartbeat {
        period,
        grace_secs: m.timeout_secs.max(0).unsigned_abs(),
        since: m.created_at.max(m.updated_at),
        last_ping_at: m.last_heartbeat_at,
        started_at: m.heartbeat_started_at,
    }
    .next_expected_at(now)
}
