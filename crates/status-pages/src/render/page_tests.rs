use super::*;
use crate::model::{DayBar, GroupView, MonitorView, BAR_DAYS};
use chrono::NaiveDate;
use std::sync::Arc;

fn monitor(latency: Vec<Option<f64>>) -> MonitorView {
    let first = NaiveDate::from_ymd_opt(2026, 9, 3).unwrap();
    MonitorView {
        id: 7,
        org_id: 1,
        name: "API".into(),
        state: State::Up,
        state_since: None,
        bars: (0..BAR_DAYS as i64)
            .map(|i| DayBar {
                day: first + chrono::Duration::days(i),
                total: 100,
                up: if i == 10 { 90 } else { 100 },
            })
            .collect(),
        response_24h: latency.iter().flatten().next().copied(),
        latency,
        uptime_24h: None,
        uptime_7d: None,
        uptime_30d: Some(100.0),
        uptime_90d: Some(99.89),
        response_7d: None,
        labels: Default::default(),
        incident_since: None,
    }
}

fn page_of(m: MonitorView, subscribe: bool) -> String {
    render(
        &PageHead {
            title: "Acme",
            description: None,
            logo_url: None,
            feed_path: "/status/acme/feed.atom",
            subscribe_path: subscribe.then_some("/status/acme/subscriptions"),
        },
        &[GroupView {
            name: "Core".into(),
            monitors: vec![Arc::new(m)],
        }],
        &[],
        &[],
    )
}

/// The `points` of every polyline of the response-time line.
fn lines(html: &str) -> Vec<Vec<(f64, f64)>> {
    let svg = &html[html.find("<svg class=\"latency\"").expect("a line")..];
    let svg = &svg[..svg.find("</svg>").unwrap()];
    svg.split("<polyline points=\"")
        .skip(1)
        .map(|rest| {
            rest[..rest.find('"').unwrap()]
                .split(' ')
                .map(|p| {
                    let (x, y) = p.split_once(',').unwrap();
                    (x.parse().unwrap(), y.parse().unwrap())
                })
                .collect()
        })
        .collect()
}

#[test]
fn an_hour_without_neighbours_still_draws_a_visible_mark() {
    // A new monitor: one hour of results, the last.
    let mut new = vec![None; LATENCY_HOURS];
    new[LATENCY_HOURS - 1] = Some(120.0);
    let drawn = lines(&page_of(monitor(new), false));
    assert_eq!(drawn.len(), 1, "{drawn:?}");
    assert!(drawn[0].len() >= 2, "one point draws nothing: {drawn:?}");
    assert_ne!(drawn[0][0], drawn[0][1], "a mark of no length: {drawn:?}");
    // Checked every two hours: every other hour has results.
    let every_other: Vec<Option<f64>> = (0..LATENCY_HOURS)
        .map(|h| (h % 2 == 0).then_some(100.0 + h as f64))
        .collect();
    let drawn = lines(&page_of(monitor(every_other), false));
    assert_eq!(drawn.len(), LATENCY_HOURS / 2, "{drawn:?}");
    assert!(
        drawn.iter().all(|l| l.len() >= 2 && l[0] != l[1]),
        "{drawn:?}"
    );
    // Neighbours still make one line.
    let drawn = lines(&page_of(monitor(vec![Some(100.0); LATENCY_HOURS]), false));
    assert_eq!(drawn.len(), 1);
    assert_eq!(drawn[0].len(), LATENCY_HOURS);
}

#[test]
fn the_bars_are_no_tab_stops_and_their_figures_are_text() {
    let html = page_of(monitor(vec![None; LATENCY_HOURS]), true);
    assert!(!html.contains("tabindex=\"0\""), "a focusable bar");
    assert_eq!(html.matches("<li class=").count(), BAR_DAYS);
    // Every day's figure is text (in a disclosure, one tab stop), newest first.
    let days = &html[html
        .find("<details class=\"days\">")
        .expect("the figures as text")..];
    let days = &days[..days.find("</details>").unwrap()];
    assert!(days.contains("<summary>"));
    assert_eq!(days.matches("<li>").count(), BAR_DAYS);
    assert!(
        days.find("2026-12-01: 100% up").unwrap() < days.find("2026-09-13: 90.00% up").unwrap()
    );
}

#[test]
fn a_skip_link_leads_past_the_header_to_the_monitors() {
    let html = page_of(monitor(vec![None; LATENCY_HOURS]), true);
    let body = &html[html.find("<body>").unwrap() + "<body>".len()..];
    assert!(
        body.starts_with("<a class=\"skip\" href=\"#monitors\">"),
        "{body}"
    );
    assert!(html.contains("id=\"monitors\""));
}

#[test]
fn the_scale_names_the_days_the_bars_shown_cover() {
    let html = page_of(monitor(vec![None; LATENCY_HOURS]), false);
    // Wide screens show 90 bars, narrow ones the last 30 (STYLE).
    assert!(html.contains(
        "<span class=\"wide\">90 days ago</span><span class=\"narrow\">30 days ago</span>"
    ));
    assert!(
        html.contains(
            "<span class=\"wide\">99.89% uptime</span><span class=\"narrow\">100% uptime</span>"
        ),
        "{html}"
    );
    assert!(STYLE.contains("li:nth-child(-n+60){display:none}"));
}
