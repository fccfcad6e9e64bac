//! `GET /api/v1/metrics`: an organisation's monitors as OpenMetrics, read by
//! a real OpenMetrics parser (openmetrics-parser, which the OpenMetrics
//! test cases were written against), built by one query and kept per
//! organisation for `tenant_metrics.cache_secs`.

use crate::check_support::{insert_daily, insert_monitor};
use crate::common::{spawn_app, spawn_app_with, TestApp};
use chrono::{Duration, TimeZone, Utc};
use diesel_async::RunQueryDsl;
use openmetrics_parser::{MetricNumber, OpenMetricsValue};
use reqwest::StatusCode;

async fn scrape(app: &TestApp, key: &str) -> (StatusCode, String, String) {
    let res = app
        .client
        .get(app.url("/api/v1/metrics"))
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let content_type = res
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, content_type, res.text().await.unwrap())
}

/// The gauge value of `family` for the sample whose labels include all of
/// `labels`.
fn value(text: &str, family: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let exposition = openmetrics_parser::openmetrics::parse_openmetrics(text)
        .unwrap_or_else(|e| panic!("not valid OpenMetrics ({e:?}):\n{text}"));
    let family = exposition.families.get(family)?;
    let found = family
        .iter_samples()
        .find(|sample| {
            let set = sample
                .get_labelset()
                .expect("a parsed sample has its names");
            labels
                .iter()
                .all(|(k, v)| set.get_label_value(k).map(unescape).as_deref() == Some(*v))
        })
        .and_then(|sample| match &sample.value {
            OpenMetricsValue::Gauge(MetricNumber::Float(f)) => Some(*f),
            OpenMetricsValue::Gauge(MetricNumber::Int(i)) => Some(*i as f64),
            _ => None,
        });
    found
}

/// A label value as written (the parser keeps the escapes) back to its text.
fn unescape(written: &str) -> String {
    let mut out = String::new();
    let mut chars = written.chars();
    while let Some(c) = chars.next() {
        match (c, c == '\\') {
            (_, true) => match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            },
            (c, false) => out.push(c),
        }
    }
    out
}

async fn set_runtime(app: &TestApp, id: i64, sql_set: &str) {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(format!("UPDATE monitors SET {sql_set} WHERE id = $1"))
        .bind::<diesel::sql_types::BigInt, _>(id)
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn the_page_shows_each_monitor_of_the_organisation_and_parses_as_openmetrics() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let (other_user, other_key) = app.new_user("someone else").await;
    let down = insert_monitor(&app.state.pool, user, |d| {
        d.name = "shop \"eu\"\\1\nforged_metric 1".into()
    })
    .await;
    let up = insert_monitor(&app.state.pool, user, |d| d.name = "api".into()).await;
    let paused = insert_monitor(&app.state.pool, user, |d| {
        d.name = "old".into();
        d.active = false;
    })
    .await;
    let theirs = insert_monitor(&app.state.pool, other_user, |d| d.name = "theirs".into()).await;

    let checked = Utc.with_ymd_and_hms(2026, 11, 27, 10, 0, 0).unwrap();
    set_runtime(
        &app,
        down.id,
        &format!(
            "status = 'down', consecutive_failures = 3, last_latency_ms = 1500, \
         last_checked_at = '{}', ssl_expires_at = '2027-01-01T00:00:00Z'",
            checked.to_rfc3339()
        ),
    )
    .await;
    set_runtime(&app, up.id, "status = 'up', last_latency_ms = 42").await;
    let today = Utc::now().date_naive();
    insert_daily(&app.state.pool, up.id, today, 10, 9).await;
    insert_daily(&app.state.pool, up.id, today - Duration::days(3), 10, 10).await;
    insert_daily(&app.state.pool, up.id, today - Duration::days(20), 20, 10).await;
    // Outside every window: not counted.
    insert_daily(&app.state.pool, up.id, today - Duration::days(40), 100, 0).await;

    let (status, content_type, text) = scrape(&app, &key).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert!(
        content_type.starts_with("application/openmetrics-text"),
        "{content_type}"
    );
    assert!(text.ends_with("# EOF\n"), "{text}");

    let id = |m: &uptime_db::models::Monitor| m.id.to_string();
    let (down_id, up_id, paused_id) = (id(&down), id(&up), id(&paused));
    assert_eq!(
        value(&text, "uptime_monitor_up", &[("monitor_id", &down_id)]),
        Some(0.0)
    );
    assert_eq!(
        value(&text, "uptime_monitor_up", &[("monitor_id", &up_id)]),
        Some(1.0)
    );
    assert_eq!(
        value(&text, "uptime_monitor_up", &[("monitor_id", &paused_id)]),
        None
    );
    assert_eq!(
        value(
            &text,
            "uptime_monitor_status",
            &[("monitor_id", &paused_id), ("status", "paused")]
        ),
        Some(1.0)
    );
    // The name, quotes, backslash and newline included, survives the
    // escaping, and forges no sample.
    assert_eq!(
        value(
            &text,
            "uptime_monitor_status",
            &[
                ("monitor", "shop \"eu\"\\1\nforged_metric 1"),
                ("status", "down")
            ]
        ),
        Some(1.0)
    );
    assert_eq!(
        value(
            &text,
            "uptime_monitor_latency_seconds",
            &[("monitor_id", &down_id)]
        ),
        Some(1.5)
    );
    assert_eq!(
        value(
            &text,
            "uptime_monitor_last_check_timestamp_seconds",
            &[("monitor_id", &down_id)]
        ),
        Some(checked.timestamp() as f64)
    );
    assert_eq!(
        value(
            &text,
            "uptime_monitor_consecutive_failures",
            &[("monitor_id", &down_id)]
        ),
        Some(3.0)
    );
    assert_eq!(
        value(
            &text,
            "uptime_monitor_certificate_expiry_timestamp_seconds",
            &[("monitor_id", &down_id)]
        ),
        Some(
            Utc.with_ymd_and_hms(2027, 1, 1, 0, 0, 0)
                .unwrap()
                .timestamp() as f64
        )
    );
    let ratio = |window| {
        value(
            &text,
            "uptime_monitor_uptime_ratio",
            &[("monitor_id", &up_id), ("window", window)],
        )
    };
    assert_eq!(ratio("1d"), Some(0.9));
    assert_eq!(ratio("7d"), Some(19.0 / 20.0));
    assert_eq!(ratio("30d"), Some(29.0 / 40.0));
    // No checks in a window: no ratio rather than a made-up one.
    assert_eq!(
        value(
            &text,
            "uptime_monitor_uptime_ratio",
            &[("monitor_id", &down_id), ("window", "30d")]
        ),
        None
    );
    assert_eq!(
        value(&text, "uptime_metrics_monitors_truncated", &[]),
        Some(0.0)
    );
    // Another organisation's monitor is not on this page, nor this one's on theirs.
    assert!(!text.contains("theirs"), "{text}");
    let (_, _, their_text) = scrape(&app, &other_key).await;
    assert!(
        their_text.contains(&format!("monitor_id=\"{}\"", theirs.id)),
        "{their_text}"
    );
    assert!(!their_text.contains("\"api\""), "{their_text}");

    // Without a key: the JSON 401 like every route.
    let res = app
        .client
        .get(app.url("/api/v1/metrics"))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn a_page_is_kept_for_the_cache_time_and_truncated_past_the_bound() {
    let app = spawn_app_with(|s| {
        s.tenant_metrics.cache_secs = 3600;
        s.tenant_metrics.max_monitors = 2;
    })
    .await;
    let (user, key) = app.new_user("ops").await;
    let mut ids = Vec::new();
    for name in ["a", "b", "c"] {
        ids.push(
            insert_monitor(&app.state.pool, user, |d| d.name = name.into())
                .await
                .id,
        );
    }
    set_runtime(&app, ids[0], "status = 'up'").await;

    let (_, _, first) = scrape(&app, &key).await;
    assert_eq!(
        value(&first, "uptime_metrics_monitors_truncated", &[]),
        Some(1.0)
    );
    assert!(
        first.contains(&format!("monitor_id=\"{}\"", ids[1])),
        "{first}"
    );
    assert!(
        !first.contains(&format!("monitor_id=\"{}\"", ids[2])),
        "{first}"
    );
    assert_eq!(
        value(
            &first,
            "uptime_monitor_up",
            &[("monitor_id", &ids[0].to_string())]
        ),
        Some(1.0)
    );

    // A change within the cache time is not seen: the page was not built again.
    set_runtime(&app, ids[0], "status = 'down'").await;
    let (_, _, second) = scrape(&app, &key).await;
    assert_eq!(second, first);
}
