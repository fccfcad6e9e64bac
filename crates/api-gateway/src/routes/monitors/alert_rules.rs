//! A monitor's alert rules: reminders (`reminder_interval_secs`,
//! `reminder_max`), dependencies (`depends_on`) and flapping
//! (`flap_threshold`, `flap_window_secs`, `flap_stable_secs`). They are no
//! part of what a check does: changing them moves no `definition_version`.
//! The recorder applies them (docs/architecture.md, "How a transition
//! becomes, or does not become, an alert"); every one is off by default,
//! and a monitor that leaves them off costs nothing more per check.

use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::validation::Problems;
use diesel_async::AsyncPgConnection;
use serde::{Deserialize, Serialize};
use std::collections::{HashMap, HashSet};
use uptime_db::alerting::{AlertRules, MAX_DEPENDS_ON};
use uptime_db::models::Monitor;
use utoipa::ToSchema;

/// Longest reminder interval: a week.
pub const MAX_REMINDER_INTERVAL_SECS: i64 = 604_800;
pub const MAX_REMINDER_MAX: i64 = 1_000;
pub const MIN_FLAP_THRESHOLD: i64 = 2;
pub const MAX_FLAP_THRESHOLD: i64 = 100;
/// Longest flapping window and stable time: a day.
pub const MAX_FLAP_SECS: i64 = 86_400;

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH: `null` turns a rule off (or back to its default).
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;

    /// Repeat the down alert every this many seconds while the incident is
    /// open and unacknowledged: the deployment's floor
    /// (`alert_rules.min_reminder_interval_secs`, 300 by default: the
    /// `minimum` of the document a deployment serves; 1 in documents of
    /// every deployment) to 604800. Default: none.
    #[schema(nullable)]
    reminder_interval_secs: opt i64 [minimum = 1, maximum = 604800],
        clear => /// `null`: no reminders.
        Option<i32>;
    /// At most this many reminders per incident, 1 to 1000. Default: no
    /// limit (until acknowledged or recovered).
    #[schema(nullable)]
    reminder_max: opt i64 [minimum = 1, maximum = 1000],
        clear => /// `null`: no limit.
        Option<i32>;
    /// Ids of the organisation's monitors this one depends on, at most 10,
    /// no cycles. While one of them is down (or failing on its way to
    /// down) this monitor is still checked and its changes recorded, but
    /// its alerts are held (`blocked_by`); if it is still down when they
    /// recover, it alerts then. Default: none.
    depends_on: opt Vec<i64> [max_items = 10],
        clear /// Replaces the list; `null` or `[]` removes every dependency.
        => Vec<i64>;
    /// Flapping: more status changes than this within `flap_window_secs`
    /// send one `flapping` alert and hold the further ones until no change
    /// came for `flap_stable_secs`, 2 to 100. Default: none (off).
    #[schema(nullable)]
    flap_threshold: opt i64 [minimum = 2, maximum = 100],
        clear => /// `null`: flapping detection is off.
        Option<i32>;
    /// The deployment's floor (`alert_rules.min_flap_secs`, 60 by default:
    /// the `minimum` of the document a deployment serves; 1 in documents of
    /// every deployment) to 86400. Default 600.
    #[schema(nullable)]
    flap_window_secs: opt i64 [minimum = 1, maximum = 86400],
        clear => /// The window in effect (600 unless set).
        i32;
    /// The deployment's floor (`alert_rules.min_flap_secs`, 60 by default:
    /// the `minimum` of the document a deployment serves; 1 in documents of
    /// every deployment) to 86400. Default 900.
    #[schema(nullable)]
    flap_stable_secs: opt i64 [minimum = 1, maximum = 86400],
        clear => /// The stable time in effect (900 unless set).
        i32;
    shown /// Since when the monitor is flapping (its alerts held); `null`: it is not.
    flapping_since: Option<chrono::DateTime<chrono::Utc>>;
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.reminder_interval_secs.is_none()
            && self.reminder_max.is_none()
            && self.depends_on.is_none()
            && self.flap_threshold.is_none()
            && self.flap_window_secs.is_none()
            && self.flap_stable_secs.is_none()
    }
}

impl Shown {
    pub(super) fn of(m: &Monitor) -> Self {
        let effective =
            |v: Option<i32>, default: u32| v.unwrap_or(i32::try_from(default).unwrap_or(i32::MAX));
        Self {
            reminder_interval_secs: m.rules.reminder_interval_secs,
            reminder_max: m.rules.reminder_max,
            depends_on: m.rules.depends_on.clone(),
            flap_threshold: m.rules.flap_threshold,
            flap_window_secs: effective(m.rules.flap_window_secs, 600),
            flap_stable_secs: effective(m.rules.flap_stable_secs, 900),
            flapping_since: m.flapping_since,
        }
    }
}

/// The lowest values the deployment accepts (config `alert_rules.*`).
#[derive(Debug, Clone, Copy)]
pub struct Floors {
    pub min_reminder_interval_secs: i64,
    pub min_flap_secs: i64,
}

impl From<crate::settings::AlertRuleSettings> for Floors {
    fn from(s: crate::settings::AlertRuleSettings) -> Self {
        Self {
            min_reminder_interval_secs: i64::from(s.min_reminder_interval_secs),
            min_flap_secs: i64::from(s.min_flap_secs),
        }
    }
}

/// The fields each floor bounds.
const REMINDER_FIELDS: &[&str] = &["reminder_interval_secs"];
const FLAP_FIELDS: &[&str] = &["flap_window_secs", "flap_stable_secs"];

impl Floors {
    /// The shortest reminder interval accepted.
    pub fn reminder_interval_secs(&self) -> i64 {
        self.min_reminder_interval_secs
            .clamp(1, MAX_REMINDER_INTERVAL_SECS)
    }

    /// The shortest flapping window and stable time accepted.
    pub fn flap_secs(&self) -> i64 {
        self.min_flap_secs.clamp(1, MAX_FLAP_SECS)
    }

    /// States these floors as the `minimum` of the fields they bound,
    /// wherever the OpenAPI document's schemas have them: the annotations
    /// give the absolute minimum (what any deployment may accept, for the
    /// schema uptimectl validates files with), and a client validating
    /// against the document this deployment serves must accept exactly
    /// what it accepts.
    pub fn document(&self, doc: &mut serde_json::Value) {
        use serde_json::Value;
        match doc {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get_mut("properties") {
                    for (fields, floor) in [
                        (REMINDER_FIELDS, self.reminder_interval_secs()),
                        (FLAP_FIELDS, self.flap_secs()),
                    ] {
                        for field in fields {
                            if let Some(min) = properties
                                .get_mut(*field)
                                .and_then(|p| p.get_mut("minimum"))
                            {
                                *min = floor.into();
                            }
                        }
                    }
                }
                map.values_mut().for_each(|v| self.document(v));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| self.document(v)),
            _ => {}
        }
    }
}

impl Create {
    /// The fields given (a bulk create refuses them).
    pub(super) fn given(&self) -> Vec<&'static str> {
        [
            (
                "reminder_interval_secs",
                self.reminder_interval_secs.is_some(),
            ),
            ("reminder_max", self.reminder_max.is_some()),
            ("depends_on", self.depends_on.is_some()),
            ("flap_threshold", self.flap_threshold.is_some()),
            ("flap_window_secs", self.flap_window_secs.is_some()),
            ("flap_stable_secs", self.flap_stable_secs.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }
}

fn bounded(
    problems: &mut Problems,
    field: &str,
    value: Option<i64>,
    range: std::ops::RangeInclusive<i64>,
) -> Option<i32> {
    let v = value?;
    problems.check_range(field, v, range);
    i32::try_from(v).ok()
}

/// The rules of a create request, checked field by field (the dependencies'
/// owners and cycles are [`check_dependencies`]'s).
pub(super) fn created(req: Create, floors: Floors, problems: &mut Problems) -> AlertRules {
    rules_of(
        req.reminder_interval_secs,
        req.reminder_max,
        req.depends_on.unwrap_or_default(),
        [
            req.flap_threshold,
            req.flap_window_secs,
            req.flap_stable_secs,
        ],
        floors,
        problems,
    )
}

/// `stored` with `patch` merged in, checked field by field.
pub(super) fn merged(
    stored: &Monitor,
    patch: Update,
    floors: Floors,
    problems: &mut Problems,
) -> AlertRules {
    let keep =
        |given: Option<Option<i64>>, stored: Option<i32>| given.unwrap_or(stored.map(i64::from));
    rules_of(
        keep(
            patch.reminder_interval_secs,
            stored.rules.reminder_interval_secs,
        ),
        keep(patch.reminder_max, stored.rules.reminder_max),
        match patch.depends_on {
            Some(given) => given.unwrap_or_default(),
            None => stored.rules.depends_on.clone(),
        },
        [
            keep(patch.flap_threshold, stored.rules.flap_threshold),
            keep(patch.flap_window_secs, stored.rules.flap_window_secs),
            keep(patch.flap_stable_secs, stored.rules.flap_stable_secs),
        ],
        floors,
        problems,
    )
}

fn rules_of(
    reminder_interval_secs: Option<i64>,
    reminder_max: Option<i64>,
    mut depends_on: Vec<i64>,
    [flap_threshold, flap_window_secs, flap_stable_secs]: [Option<i64>; 3],
    floors: Floors,
    problems: &mut Problems,
) -> AlertRules {
    let flap_floor = floors.flap_secs();
    let reminder_floor = floors.reminder_interval_secs();
    let before = depends_on.len();
    depends_on.sort_unstable();
    depends_on.dedup();
    if depends_on.len() != before {
        problems.add("depends_on", "each monitor may be named once");
    }
    if depends_on.len() > MAX_DEPENDS_ON {
        problems.add("depends_on", format!("at most {MAX_DEPENDS_ON} monitors"));
    }
    AlertRules {
        reminder_interval_secs: bounded(
            problems,
            "reminder_interval_secs",
            reminder_interval_secs,
            reminder_floor..=MAX_REMINDER_INTERVAL_SECS,
        ),
        reminder_max: bounded(problems, "reminder_max", reminder_max, 1..=MAX_REMINDER_MAX),
        depends_on,
        flap_threshold: bounded(
            problems,
            "flap_threshold",
            flap_threshold,
            MIN_FLAP_THRESHOLD..=MAX_FLAP_THRESHOLD,
        ),
        flap_window_secs: bounded(
            problems,
            "flap_window_secs",
            flap_window_secs,
            flap_floor..=MAX_FLAP_SECS,
        ),
        flap_stable_secs: bounded(
            problems,
            "flap_stable_secs",
            flap_stable_secs,
            flap_floor..=MAX_FLAP_SECS,
        ),
    }
}

/// 400 naming `depends_on` unless every id is another monitor the caller
/// reaches (one out of a label-limited key's reach is refused as one that
/// does not exist, as another organisation's is) and the new edges of
/// `monitor_id` (`None`: not created yet, so nothing can depend on it)
/// close no cycle.
pub(super) async fn check_dependencies(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    monitor_id: Option<i64>,
    depends_on: &[i64],
) -> Result<(), ApiError> {
    if depends_on.is_empty() {
        return Ok(());
    }
    if monitor_id.is_some_and(|id| depends_on.contains(&id)) {
        return Err(ApiError::invalid_field(
            "depends_on",
            "a monitor cannot depend on itself",
        ));
    }
    let reached = user.reach().reached_among(conn, depends_on).await?;
    let unknown: Vec<String> = depends_on
        .iter()
        .filter(|id| !reached.contains(id))
        .map(|id| id.to_string())
        .collect();
    if !unknown.is_empty() {
        return Err(ApiError::invalid_field(
            "depends_on",
            format!("no such monitor: {}", unknown.join(", ")),
        ));
    }
    let Some(id) = monitor_id else {
        return Ok(());
    };
    // The whole organisation's graph: a cycle may pass through monitors the
    // key does not reach, and is refused all the same.
    let mut graph: HashMap<i64, Vec<i64>> =
        uptime_db::alerting::dependency_edges(conn, user.org_id)
            .await?
            .into_iter()
            .collect();
    graph.insert(id, depends_on.to_vec());
    if let Some(path) = cycle_through(&graph, id) {
        let on_path = user.reach().reached_among(conn, &path).await?;
        // Monitors out of reach are not named.
        let shown: Vec<String> = path
            .iter()
            .map(|id| {
                if on_path.contains(id) {
                    id.to_string()
                } else {
                    "…".to_string()
                }
            })
            .collect();
        return Err(ApiError::invalid_field(
            "depends_on",
            format!("would close a cycle: {}", shown.join(" -> ")),
        ));
    }
    Ok(())
}

/// A path from `start` back to itself along `graph`'s edges, if any.
pub(super) fn cycle_through(graph: &HashMap<i64, Vec<i64>>, start: i64) -> Option<Vec<i64>> {
    // Depth-first with an explicit stack: (node, path to it).
    let mut seen = HashSet::new();
    let mut stack = vec![(start, vec![start])];
    while let Some((node, path)) = stack.pop() {
        for next in graph.get(&node).into_iter().flatten() {
            if *next == start {
                let mut cycle = path.clone();
                cycle.push(start);
                return Some(cycle);
            }
            if seen.insert(*next) {
                let mut longer = path.clone();
                longer.push(*next);
                stack.push((*next, longer));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_found_through_any_path() {
        let graph = HashMap::from([(1, vec![2]), (2, vec![3]), (3, vec![1]), (4, vec![1])]);
        assert_eq!(cycle_through(&graph, 1), Some(vec![1, 2, 3, 1]));
        assert_eq!(cycle_through(&graph, 4), None, "4 is on no cycle");
        let tree = HashMap::from([(1, vec![2, 3]), (2, vec![3])]);
        assert_eq!(cycle_through(&tree, 1), None, "a diamond is no cycle");
    }

    #[test]
    fn bounds_name_their_field() {
        let floors = Floors {
            min_reminder_interval_secs: 300,
            min_flap_secs: 60,
        };
        let mut problems = Problems::new();
        let req = Create {
            reminder_interval_secs: Some(299),
            reminder_max: Some(0),
            depends_on: Some((1..=11).collect()),
            flap_threshold: Some(1),
            flap_window_secs: Some(59),
            flap_stable_secs: Some(86_401),
        };
        created(req, floors, &mut problems);
        let Err(ApiError::InvalidBody(errors)) = problems.into_result() else {
            panic!("refused");
        };
        let fields: Vec<String> = errors.iter().map(|e| e.field.to_string()).collect();
        for field in [
            "reminder_interval_secs",
            "reminder_max",
            "depends_on",
            "flap_threshold",
            "flap_window_secs",
            "flap_stable_secs",
        ] {
            assert!(fields.iter().any(|f| f == field), "{field}: {fields:?}");
        }
    }
}
