//! What pages and badges show, computed from the rows of one refresh and
//! the clock (a parameter: pure, tested without waiting).

use chrono::{DateTime, Duration, DurationRound, NaiveDate, Utc};
use std::collections::HashMap;
use std::sync::Arc;
use uptime_db::status_notices::{Notice, NoticeUpdate};
use uptime_db::status_pages::StatusPage;
use uptime_db::status_snapshot::{Badge, DayCounts, HourStats, OpenIncident, ShownMonitor};

/// Daily bars on a page.
pub const BAR_DAYS: usize = 90;
/// Hourly points of the response-time line.
pub const LATENCY_HOURS: usize = 24;
/// How far back the hourly aggregates go (the 7-day badges).
pub const HOURLY_WINDOW_HOURS: i64 = 7 * 24;

/// The fast part of a refresh: read every few seconds.
#[derive(Debug, Clone, Default)]
pub struct StateRows {
    pub pages: Vec<StatusPage>,
    pub badges: Vec<Badge>,
    pub monitors: Vec<ShownMonitor>,
    pub open_incidents: Vec<OpenIncident>,
    pub notices: Vec<Notice>,
    pub notice_updates: Vec<NoticeUpdate>,
    /// Maintenance windows that may still be open at or after the refresh.
    pub maintenance: Vec<uptime_db::maintenance::MaintenanceWindow>,
}

/// The slow part: read every `aggregate_refresh_secs`.
#[derive(Debug, Clone, Default)]
pub struct AggregateRows {
    pub days: Vec<DayCounts>,
    pub hours: Vec<HourStats>,
}

/// A monitor's state as a page shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Up,
    Degraded,
    Down,
    Pending,
    Paused,
}

impl State {
    pub fn of(monitor: &ShownMonitor) -> Self {
        if !monitor.active {
            return State::Paused;
        }
        match monitor.status.as_str() {
            "up" => State::Up,
            "degraded" => State::Degraded,
            "down" => State::Down,
            _ => State::Pending,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            State::Up => "up",
            State::Degraded => "degraded",
            State::Down => "down",
            State::Pending => "pending",
            State::Paused => "paused",
        }
    }
}

/// One day's bar.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DayBar {
    pub day: NaiveDate,
    pub total: i64,
    pub up: i64,
}

impl DayBar {
    pub fn percent(&self) -> Option<f64> {
        (self.total > 0).then(|| 100.0 * self.up as f64 / self.total as f64)
    }
}

/// Everything shown of one monitor.
#[derive(Debug, Clone, PartialEq)]
pub struct MonitorView {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    pub state: State,
    pub state_since: Option<DateTime<Utc>>,
    /// Oldest first, [`BAR_DAYS`] of them, the last one today (UTC).
    pub bars: Vec<DayBar>,
    /// Mean response time per hour, oldest first, [`LATENCY_HOURS`] of them.
    pub latency: Vec<Option<f64>>,
    pub uptime_24h: Option<f64>,
    pub uptime_7d: Option<f64>,
    pub uptime_30d: Option<f64>,
    pub uptime_90d: Option<f64>,
    pub response_24h: Option<f64>,
    pub response_7d: Option<f64>,
    pub labels: uptime_labels::Labels,
    pub incident_since: Option<DateTime<Utc>>,
}

/// Every shown monitor's view, by id.
pub fn monitor_views(
    state: &StateRows,
    aggregates: &AggregateRows,
    now: DateTime<Utc>,
) -> HashMap<i64, Arc<MonitorView>> {
    let today = now.date_naive();
    let first_day = today - Duration::days(BAR_DAYS as i64 - 1);
    let this_hour = now.duration_trunc(Duration::hours(1)).unwrap_or(now);
    let mut days: HashMap<i64, Vec<&DayCounts>> = HashMap::new();
    for d in &aggregates.days {
        days.entry(d.monitor_id).or_default().push(d);
    }
    let mut hours: HashMap<i64, Vec<&HourStats>> = HashMap::new();
    for h in &aggregates.hours {
        hours.entry(h.monitor_id).or_default().push(h);
    }
    let incidents: HashMap<i64, DateTime<Utc>> = state
        .open_incidents
        .iter()
        .map(|i| (i.monitor_id, i.started_at))
        .collect();
    state
        .monitors
        .iter()
        .map(|m| {
            let mine_days = days.get(&m.id).map(Vec::as_slice).unwrap_or_default();
            let bars: Vec<DayBar> = (0..BAR_DAYS as i64)
                .map(|i| {
                    let day = first_day + Duration::days(i);
                    let found = mine_days.iter().find(|d| d.day == day);
                    DayBar {
                        day,
                        total: found.map_or(0, |d| i64::from(d.total_checks)),
                        up: found.map_or(0, |d| i64::from(d.up_checks)),
                    }
                })
                .collect();
            let mine_hours = hours.get(&m.id).map(Vec::as_slice).unwrap_or_default();
            let latency = (0..LATENCY_HOURS as i64)
                .map(|i| {
                    let hour = this_hour - Duration::hours(LATENCY_HOURS as i64 - 1 - i);
                    mine_hours
                        .iter()
                        .find(|h| h.hour == hour)
                        .and_then(|h| h.mean_latency_ms)
                })
                .collect();
            let since_24h = now - Duration::hours(24);
            let since_7d = now - Duration::hours(HOURLY_WINDOW_HOURS);
            let view = MonitorView {
                id: m.id,
                org_id: m.org_id,
                name: m.name.clone(),
                state: State::of(m),
                state_since: m.status_since,
                uptime_24h: hourly_uptime(mine_hours, since_24h),
                uptime_7d: hourly_uptime(mine_hours, since_7d),
                uptime_30d: daily_uptime(&bars[BAR_DAYS - 30..]),
                uptime_90d: daily_uptime(&bars),
                response_24h: mean_latency(mine_hours, since_24h),
                response_7d: mean_latency(mine_hours, since_7d),
                bars,
                latency,
                labels: uptime_labels::Labels::from_json(&m.labels),
                incident_since: incidents.get(&m.id).copied(),
            };
            (m.id, Arc::new(view))
        })
        .collect()
}

/// Hours that started within the window count (an hour still under way
/// counts whole).
fn in_window(hour: &HourStats, since: DateTime<Utc>) -> bool {
    hour.hour + Duration::hours(1) > since
}

fn hourly_uptime(hours: &[&HourStats], since: DateTime<Utc>) -> Option<f64> {
    let (total, up) = hours
        .iter()
        .filter(|h| in_window(h, since))
        .fold((0i64, 0i64), |(t, u), h| (t + h.total, u + h.up));
    (total > 0).then(|| 100.0 * up as f64 / total as f64)
}

fn daily_uptime(bars: &[DayBar]) -> Option<f64> {
    let (total, up) = bars
        .iter()
        .fold((0i64, 0i64), |(t, u), b| (t + b.total, u + b.up));
    (total > 0).then(|| 100.0 * up as f64 / total as f64)
}

/// The mean of the hourly means, weighted by each hour's results.
fn mean_latency(hours: &[&HourStats], since: DateTime<Utc>) -> Option<f64> {
    let (sum, weight) = hours
        .iter()
        .filter(|h| in_window(h, since))
        .filter_map(|h| h.mean_latency_ms.map(|m| (m, h.total as f64)))
        .fold((0.0, 0.0), |(s, w), (m, n)| (s + m * n, w + n));
    (weight > 0.0).then(|| sum / weight)
}

/// One update of a notice.
#[derive(Debug, Clone, PartialEq)]
pub struct UpdateView {
    pub state: String,
    pub body: String,
    pub created_at: DateTime<Utc>,
}

/// A notice as a page shows it, updates oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct NoticeView {
    pub id: i64,
    pub title: String,
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub resolved: bool,
    pub updates: Vec<UpdateView>,
}

/// Each page's notices (by page id), oldest first.
pub fn notice_views(state: &StateRows) -> HashMap<i64, Vec<NoticeView>> {
    let mut updates: HashMap<i64, Vec<UpdateView>> = HashMap::new();
    for u in &state.notice_updates {
        updates.entry(u.notice_id).or_default().push(UpdateView {
            state: u.state.clone(),
            body: u.body.clone(),
            created_at: u.created_at,
        });
    }
    let mut out: HashMap<i64, Vec<NoticeView>> = HashMap::new();
    for n in &state.notices {
        out.entry(n.page_id).or_default().push(NoticeView {
            id: n.id,
            title: n.title.clone(),
            state: n.state.clone(),
            created_at: n.created_at,
            updated_at: n.updated_at,
            resolved: n.resolved_at.is_some(),
            updates: updates.remove(&n.id).unwrap_or_default(),
        });
    }
    out
}

/// A group of a page, with its monitors in order.
#[derive(Debug, Clone)]
pub struct GroupView {
    pub name: String,
    pub monitors: Vec<Arc<MonitorView>>,
}

/// The monitors of each group of `page`: the listed ones in their order,
/// then those its selector picks (the page's organisation's only), by name.
pub fn page_groups(page: &StatusPage, monitors: &HashMap<i64, Arc<MonitorView>>) -> Vec<GroupView> {
    let groups = page.groups.as_array().cloned().unwrap_or_default();
    groups
        .iter()
        .map(|group| {
            let mut shown: Vec<Arc<MonitorView>> = group["monitor_ids"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|id| id.as_i64())
                .filter_map(|id| monitors.get(&id))
                .filter(|m| m.org_id == page.org_id)
                .cloned()
                .collect();
            if group["selector"].is_object() {
                let selector =
                    uptime_labels::Selector(uptime_labels::Labels::from_json(&group["selector"]));
                let mut picked: Vec<Arc<MonitorView>> = monitors
                    .values()
                    .filter(|m| m.org_id == page.org_id && selector.matches(&m.labels))
                    .filter(|m| !shown.iter().any(|s| s.id == m.id))
                    .cloned()
                    .collect();
                picked.sort_by(|a, b| a.name.cmp(&b.name).then(a.id.cmp(&b.id)));
                shown.extend(picked);
            }
            GroupView {
                name: group["name"].as_str().unwrap_or_default().to_string(),
                monitors: shown,
            }
        })
        .collect()
}

/// The page's headline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Overall {
    Operational,
    Degraded,
    PartialOutage,
    MajorOutage,
    NoData,
}

impl Overall {
    pub fn of(groups: &[GroupView]) -> Self {
        let states: Vec<State> = groups
            .iter()
            .flat_map(|g| g.monitors.iter().map(|m| m.state))
            .filter(|s| !matches!(s, State::Paused | State::Pending))
            .collect();
        let down = states.iter().filter(|s| **s == State::Down).count();
        if states.is_empty() {
            Overall::NoData
        } else if down == states.len() {
            Overall::MajorOutage
        } else if down > 0 {
            Overall::PartialOutage
        } else if states.contains(&State::Degraded) {
            Overall::Degraded
        } else {
            Overall::Operational
        }
    }

    pub fn text(self) -> &'static str {
        match self {
            Overall::Operational => "All systems operational",
            Overall::Degraded => "Degraded performance",
            Overall::PartialOutage => "Partial outage",
            Overall::MajorOutage => "Major outage",
            Overall::NoData => "No data yet",
        }
    }

    /// The CSS class (and the state a test reads): `up`, `degraded`, `down`, `pending`.
    pub fn class(self) -> &'static str {
        match self {
            Overall::Operational => "up",
            Overall::Degraded => "degraded",
            Overall::PartialOutage | Overall::MajorOutage => "down",
            Overall::NoData => "pending",
        }
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
pub(crate) mod tests;
