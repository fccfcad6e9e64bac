//! Scheduled maintenance as a page shows it: the windows (of the page's
//! organisation) that cover a monitor shown on the page, open now or
//! starting within the horizon. Only a window's name and its times are
//! shown: its effect, its monitors and its rule are internal. Pure: the
//! rows of a refresh and the clock in, views out.

use crate::model::GroupView;
use chrono::{DateTime, Duration, Utc};
use uptime_db::maintenance::MaintenanceWindow;
use uptime_db::status_pages::StatusPage;

/// At most this many maintenance entries on a page (the soonest).
pub const MAX_SHOWN: usize = 20;

/// One occurrence of a window, as shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MaintenanceView {
    pub name: String,
    pub starts_at: DateTime<Utc>,
    pub ends_at: DateTime<Utc>,
    /// Open at the refresh's time (else upcoming).
    pub active: bool,
}

/// The next (or current) occurrence of each window of `page`'s
/// organisation that covers one of the monitors in `groups`, soonest first.
pub fn page_maintenance(
    page: &StatusPage,
    groups: &[GroupView],
    windows: &[MaintenanceWindow],
    now: DateTime<Utc>,
    horizon: Duration,
) -> Vec<MaintenanceView> {
    let shown: Vec<_> = groups.iter().flat_map(|g| g.monitors.iter()).collect();
    if shown.is_empty() {
        return Vec::new();
    }
    let mut out: Vec<MaintenanceView> = windows
        .iter()
        .filter(|w| w.org_id == page.org_id)
        .filter(|w| {
            let selector = w
                .label_selector
                .as_ref()
                .map(|s| uptime_labels::Selector(uptime_labels::Labels::from_json(s)));
            shown.iter().any(|m| {
                w.monitor_ids.contains(&m.id)
                    || selector.as_ref().is_some_and(|s| s.matches(&m.labels))
            })
        })
        .filter_map(|w| {
            let schedule = uptime_maintenance::Schedule::from_parts(
                w.starts_at,
                w.ends_at,
                w.rrule.as_deref(),
                w.timezone.as_deref(),
                w.duration_secs.map(i64::from),
            )
            .ok()?;
            let span = schedule.upcoming(now, 1).into_iter().next()?;
            (span.start <= now + horizon).then(|| MaintenanceView {
                name: w.name.clone(),
                starts_at: span.start,
                ends_at: span.end,
                active: span.start <= now,
            })
        })
        .collect();
    out.sort_by(|a, b| (a.starts_at, &a.name).cmp(&(b.starts_at, &b.name)));
    out.truncate(MAX_SHOWN);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{monitor_views, AggregateRows, StateRows};
    use chrono::TimeZone;
    use serde_json::json;

    fn window(
        id: i64,
        org_id: i64,
        name: &str,
        ids: Vec<i64>,
        selector: Option<serde_json::Value>,
        starts_at: DateTime<Utc>,
        ends_at: DateTime<Utc>,
    ) -> MaintenanceWindow {
        MaintenanceWindow {
            id,
            org_id,
            name: name.into(),
            monitor_ids: ids,
            label_selector: selector,
            effect: "silence".into(),
            starts_at,
            ends_at: Some(ends_at),
            rrule: None,
            timezone: None,
            duration_secs: None,
            last_ends_at: Some(ends_at),
            created_at: starts_at,
            updated_at: starts_at,
        }
    }

    #[test]
    fn covering_windows_open_or_soon_are_shown_soonest_first() {
        let now = Utc.with_ymd_and_hms(2026, 11, 28, 12, 0, 0).unwrap();
        let hours = |h: i64| now + Duration::hours(h);
        let state = StateRows {
            monitors: vec![
                crate::model::tests::monitor(1, "web", "up", json!({})),
                crate::model::tests::monitor(2, "db", "up", json!({"team": "core"})),
                crate::model::tests::monitor(3, "hidden", "up", json!({})),
            ],
            ..Default::default()
        };
        let views = monitor_views(&state, &AggregateRows::default(), now);
        let page = crate::model::tests::page(json!([
            {"name": "All", "monitor_ids": [1, 2]}
        ]));
        let groups = crate::model::page_groups(&page, &views);
        let windows = vec![
            window(
                1,
                1,
                "Database upgrade",
                vec![],
                Some(json!({"team": "core"})),
                hours(48),
                hours(50),
            ),
            window(2, 1, "Web deploy", vec![1], None, hours(-1), hours(1)),
            window(3, 1, "Not on this page", vec![3], None, hours(1), hours(2)),
            window(
                4,
                2,
                "Another organisation",
                vec![1],
                None,
                hours(1),
                hours(2),
            ),
            window(
                5,
                1,
                "Too far ahead",
                vec![1],
                None,
                hours(24 * 30),
                hours(24 * 30 + 1),
            ),
            window(6, 1, "Over", vec![1], None, hours(-3), hours(-2)),
        ];
        let shown = page_maintenance(&page, &groups, &windows, now, Duration::days(14));
        assert_eq!(
            shown,
            vec![
                MaintenanceView {
                    name: "Web deploy".into(),
                    starts_at: hours(-1),
                    ends_at: hours(1),
                    active: true
                },
                MaintenanceView {
                    name: "Database upgrade".into(),
                    starts_at: hours(48),
                    ends_at: hours(50),
                    active: false
                },
            ]
        );
    }
}
