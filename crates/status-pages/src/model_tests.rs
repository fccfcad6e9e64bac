use super::*;
use chrono::TimeZone;
use serde_json::json;

pub(crate) fn monitor(
    id: i64,
    name: &str,
    status: &str,
    labels: serde_json::Value,
) -> ShownMonitor {
    ShownMonitor {
        id,
        org_id: 1,
        name: name.into(),
        status: status.into(),
        status_since: None,
        active: true,
        labels,
        last_latency_ms: None,
    }
}

pub(crate) fn page(groups: serde_json::Value) -> StatusPage {
    let at = Utc.with_ymd_and_hms(2026, 11, 1, 0, 0, 0).unwrap();
    StatusPage {
        id: 1,
        org_id: 1,
        slug: "s".into(),
        title: "t".into(),
        description: None,
        logo_url: None,
        custom_domain: None,
        groups,
        access_token_sha256: None,
        created_at: at,
        updated_at: at,
    }
}

#[test]
fn bars_cover_ninety_days_ending_today_and_windows_add_up() {
    let now = Utc.with_ymd_and_hms(2026, 11, 27, 10, 30, 0).unwrap();
    let state = StateRows {
        monitors: vec![monitor(7, "api", "up", json!({}))],
        ..Default::default()
    };
    let day = |d: u32, total, up| DayCounts {
        monitor_id: 7,
        day: NaiveDate::from_ymd_opt(2026, 11, d).unwrap(),
        total_checks: total,
        up_checks: up,
    };
    let hour = |h: u32, total, up, ms| HourStats {
        monitor_id: 7,
        hour: Utc.with_ymd_and_hms(2026, 11, 27, h, 0, 0).unwrap(),
        total,
        up,
        mean_latency_ms: Some(ms),
    };
    let aggregates = AggregateRows {
        days: vec![day(27, 100, 100), day(26, 100, 50), day(1, 10, 10)],
        hours: vec![hour(10, 10, 10, 100.0), hour(9, 30, 20, 200.0)],
    };
    let views = monitor_views(&state, &aggregates, now);
    let view = &views[&7];
    assert_eq!(view.bars.len(), BAR_DAYS);
    assert_eq!(view.bars[BAR_DAYS - 1].day, now.date_naive());
    assert_eq!(view.bars[BAR_DAYS - 1].percent(), Some(100.0));
    assert_eq!(view.bars[BAR_DAYS - 2].percent(), Some(50.0));
    assert_eq!(view.bars[0].percent(), None);
    assert_eq!(view.uptime_30d, Some(100.0 * 160.0 / 210.0));
    assert_eq!(view.uptime_24h, Some(75.0));
    assert_eq!(
        view.response_24h,
        Some((100.0 * 10.0 + 200.0 * 30.0) / 40.0)
    );
    assert_eq!(view.latency.len(), LATENCY_HOURS);
    assert_eq!(view.latency[LATENCY_HOURS - 1], Some(100.0));
    assert_eq!(view.latency[LATENCY_HOURS - 2], Some(200.0));
    assert_eq!(view.state, State::Up);
}

#[test]
fn groups_list_ids_in_order_then_selected_by_name_and_overall_follows_states() {
    let now = Utc.with_ymd_and_hms(2026, 11, 27, 10, 30, 0).unwrap();
    let mut foreign = monitor(9, "foreign", "down", json!({"team": "core"}));
    foreign.org_id = 2;
    let state = StateRows {
        monitors: vec![
            monitor(1, "web", "up", json!({})),
            monitor(2, "zeta", "down", json!({"team": "core"})),
            monitor(3, "alpha", "degraded", json!({"team": "core"})),
            foreign,
        ],
        ..Default::default()
    };
    let views = monitor_views(&state, &AggregateRows::default(), now);
    let groups = page_groups(
        &page(json!([
            {"name": "Site", "monitor_ids": [1, 9]},
            {"name": "Core", "monitor_ids": [2], "selector": {"team": "core"}}
        ])),
        &views,
    );
    let names: Vec<Vec<&str>> = groups
        .iter()
        .map(|g| g.monitors.iter().map(|m| m.name.as_str()).collect())
        .collect();
    assert_eq!(names, vec![vec!["web"], vec!["zeta", "alpha"]]);
    assert_eq!(Overall::of(&groups), Overall::PartialOutage);
    assert_eq!(Overall::of(&groups[..1]), Overall::Operational);
    assert_eq!(Overall::of(&[]), Overall::NoData);
}
