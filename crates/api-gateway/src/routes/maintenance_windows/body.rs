//! What `/api/v1/maintenance-windows` takes and answers, and the checks
//! that turn a body into a stored definition (every bound named here is in
//! the OpenAPI document and docs/api.md).

use crate::validation::{double_option, Problems};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use uptime_db::maintenance::MaintenanceWindow;
use uptime_labels::Labels;
use uptime_maintenance::Schedule;
use utoipa::ToSchema;

pub use super::schedule::{changes_schedule, schedule, Scheduled};

/// The longest name.
pub const MAX_NAME_CHARS: usize = 200;
/// The most monitor ids one window names.
pub const MAX_MONITOR_IDS: usize = 100;
/// How many next occurrences a response lists.
pub const NEXT_OCCURRENCES: u16 = 5;
/// How far ahead a window may start: a year.
pub const MAX_DAYS_AHEAD: i64 = 366;
/// The most windows an organisation keeps (ended ones are deleted after
/// `retention.maintenance_windows_days`).
pub const MAX_WINDOWS_PER_ORG: i64 = 200;

/// What a window does to the monitors it covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    /// Checks and results go on; alerts are held (one goes out at the end
    /// for a monitor still down).
    Silence,
    /// No checks are run (heartbeat monitors: missed deadlines still count,
    /// their alerts held, as with `silence`).
    Pause,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Silence => "silence",
            Effect::Pause => "pause",
        }
    }
}

/// Declares a window body (create or PATCH) with the schedule fields (the
/// ones [`When`] holds: documentation and bounds stated once for both)
/// after its own and before its `ref`, and its `when()`.
macro_rules! with_schedule {
    ($(#[$m:meta])* pub struct $name:ident { $($fields:tt)* } $(#[$rm:meta])* $ref_kind:ident ref) => {
        crate::refs::with_ref! {
            $(#[$m])*
            pub struct $name {
                $($fields)*
                /// One-off: its start; recurring: the first local start (the rule's
                /// DTSTART: minutes and seconds the rule does not give come from it);
                /// ad hoc: default now. At most 366 days ahead.
                #[serde(default)]
                pub starts_at: Option<DateTime<Utc>>,
                /// One-off: its end (1 minute to 7 days after `starts_at`).
                #[serde(default)]
                pub ends_at: Option<DateTime<Utc>>,
                /// Ad hoc: the window lasts this long from `starts_at` (default now).
                #[serde(default)]
                #[schema(minimum = 1, maximum = 10080)]
                pub duration_minutes: Option<i64>,
                /// Recurring: an RFC 5545 RRULE (`FREQ=WEEKLY;BYDAY=SU;BYHOUR=2`), at
                /// most 512 characters, no DTSTART; more often than hourly only with
                /// COUNT or UNTIL.
                #[serde(default)]
                #[schema(max_length = 512)]
                pub rrule: Option<String>,
                /// Recurring: the IANA zone the rule's local times are in (default
                /// `UTC`); kept across DST changes.
                #[serde(default)]
                pub timezone: Option<String>,
                /// Recurring: each occurrence's length, 60 to 604800.
                #[serde(default)]
                #[schema(minimum = 60, maximum = 604800)]
                pub duration_secs: Option<i64>,
            }
            $(#[$rm])*
            $ref_kind ref
        }

        impl $name {
            /// The schedule fields as given.
            pub fn when(&self) -> When {
                When {
                    starts_at: self.starts_at,
                    ends_at: self.ends_at,
                    duration_minutes: self.duration_minutes,
                    rrule: self.rrule.clone(),
                    timezone: self.timezone.clone(),
                    duration_secs: self.duration_secs,
                }
            }
        }
    };
}

with_schedule! {
    /// A new window. Which monitors: `monitor_ids` and/or `label_selector` (at
    /// least one). When: one-off (`starts_at` and `ends_at`), ad hoc
    /// (`duration_minutes` from `starts_at`, or from now without it: the deploy
    /// script's call), or recurring (`rrule`, `timezone`, `duration_secs`, from
    /// `starts_at` or now). Every window lasts 1 minute to 7 days.
    #[derive(Debug, Default, Clone, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CreateWindow {
        #[schema(min_length = 1, max_length = 200)]
        pub name: String,
        /// Monitors of the organisation, at most 100.
        #[serde(default)]
        #[schema(max_items = 100)]
        pub monitor_ids: Vec<i64>,
        /// Every monitor whose labels hold all these pairs, evaluated live (a
        /// monitor created later with them joins the window); at most 32 pairs,
        /// keys and values bounded as monitor labels are.
        #[serde(default)]
        #[schema(value_type = Option<BTreeMap<String, String>>)]
        pub label_selector: Option<BTreeMap<String, String>>,
        /// Default `silence`. Read as text, so an unknown value is a 400
        /// naming `effect`.
        #[serde(default)]
        #[schema(value_type = Option<Effect>)]
        pub effect: Option<String>,
    }
    /// A stable name of the caller's choice (monitoring as code names the
    /// window by it): 1 to 255 of lowercase letters, digits, `.`, `_`,
    /// `-`, alphanumeric at both ends; unique among the organisation's
    /// windows (`409` naming `ref` when taken) and immutable once set.
    create ref
}

/// When a window is open: the schedule fields of a create, and of an
/// update that changes the schedule (given together, they replace it
/// whole), each documented (and bounded) in `with_schedule!`.
#[derive(Debug, Default, Clone)]
pub struct When {
    pub starts_at: Option<DateTime<Utc>>,
    pub ends_at: Option<DateTime<Utc>>,
    pub duration_minutes: Option<i64>,
    pub rrule: Option<String>,
    pub timezone: Option<String>,
    pub duration_secs: Option<i64>,
}

impl When {
    pub(super) fn is_given(&self) -> bool {
        self.starts_at.is_some()
            || self.ends_at.is_some()
            || self.duration_minutes.is_some()
            || self.rrule.is_some()
            || self.timezone.is_some()
            || self.duration_secs.is_some()
    }
}

with_schedule! {
    /// A partial update: fields left out keep their value; schedule fields
    /// given replace the schedule whole (as in a create).
    #[derive(Debug, Default, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct UpdateWindow {
        #[serde(default)]
        #[schema(min_length = 1, max_length = 200)]
        pub name: Option<String>,
        #[serde(default)]
        #[schema(max_items = 100)]
        pub monitor_ids: Option<Vec<i64>>,
        /// `null` removes the selector.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<BTreeMap<String, String>>, required = false)]
        pub label_selector: Option<Option<BTreeMap<String, String>>>,
        #[serde(default)]
        #[schema(value_type = Option<Effect>)]
        pub effect: Option<String>,
    }
    /// Sets the ref of a window that has none; repeating the current ref
    /// (or `null` while there is none) changes nothing; changing or
    /// removing a set ref is a `400` naming `ref`.
    update ref
}

/// One occurrence.
#[derive(Debug, Serialize, ToSchema)]
pub struct Occurrence {
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
}

crate::refs::with_ref! {
    /// A maintenance window.
    #[derive(Debug, Serialize, ToSchema)]
    pub struct WindowResponse {
        pub id: i64,
        pub name: String,
        pub monitor_ids: Vec<i64>,
        #[schema(value_type = Option<BTreeMap<String, String>>)]
        pub label_selector: Option<serde_json::Value>,
        pub effect: Effect,
        pub starts_at: DateTime<Utc>,
        pub ends_at: Option<DateTime<Utc>>,
        pub rrule: Option<String>,
        pub timezone: Option<String>,
        pub duration_secs: Option<i32>,
        /// Open now (as the schedule says; it takes effect within the recorder's
        /// sweep interval).
        pub open_now: bool,
        /// The next occurrences not ended yet (at most 5), the open one first.
        pub next_occurrences: Vec<Occurrence>,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
    }
    /// The window's ref; `null` when it has none.
    shown ref
}

impl WindowResponse {
    pub fn of(row: MaintenanceWindow, now: DateTime<Utc>) -> Self {
        let schedule = Schedule::from_parts(
            row.starts_at,
            row.ends_at,
            row.rrule.as_deref(),
            row.timezone.as_deref(),
            row.duration_secs.map(i64::from),
        );
        let next: Vec<Occurrence> = schedule
            .map(|s| s.upcoming(now, NEXT_OCCURRENCES))
            .unwrap_or_default()
            .into_iter()
            .map(|s| Occurrence {
                starts_at: s.start,
                ends_at: s.end,
            })
            .collect();
        Self {
            id: row.id,
            name: row.name,
            monitor_ids: row.monitor_ids,
            label_selector: row.label_selector,
            effect: if row.effect == "pause" {
                Effect::Pause
            } else {
                Effect::Silence
            },
            starts_at: row.starts_at,
            ends_at: row.ends_at,
            rrule: row.rrule,
            timezone: row.timezone,
            duration_secs: row.duration_secs,
            open_now: next.first().is_some_and(|o| o.starts_at <= now),
            next_occurrences: next,
            created_at: row.created_at,
            updated_at: row.updated_at,
            ref_: None,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct WindowList {
    pub maintenance_windows: Vec<WindowResponse>,
    pub next_cursor: Option<String>,
}

/// The effect named by `given` (`None`: not given, or not one, noted).
pub fn effect(problems: &mut Problems, given: Option<&str>) -> Option<Effect> {
    match given? {
        "silence" => Some(Effect::Silence),
        "pause" => Some(Effect::Pause),
        _ => {
            problems.add("effect", "must be silence or pause");
            None
        }
    }
}

/// The selector as stored (`None`: none given or empty), its problems
/// noted under `label_selector`.
pub fn selector(
    problems: &mut Problems,
    given: Option<BTreeMap<String, String>>,
) -> Option<serde_json::Value> {
    let labels = Labels(given?);
    for (_, error) in labels.problems() {
        problems.add("label_selector", error.to_string());
    }
    (!labels.is_empty()).then(|| labels.to_json())
}

/// The ids as stored (sorted, once each), their bounds noted.
pub fn monitor_ids(problems: &mut Problems, mut ids: Vec<i64>) -> Vec<i64> {
    if ids.len() > MAX_MONITOR_IDS {
        problems.add(
            "monitor_ids",
            format!("at most {MAX_MONITOR_IDS} monitor ids"),
        );
    }
    if ids.iter().any(|id| *id < 1) {
        problems.add("monitor_ids", "must be monitor ids (at least 1)");
    }
    ids.sort_unstable();
    ids.dedup();
    ids
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
