//! Badges over a real database: well-formed SVG whose text says the state
//! and the figure, the shields endpoint JSON, cacheable, unknown tokens 404.

use crate::common::{sha256, spawn};
use reqwest::StatusCode;

/// The text of an SVG's `<title>` (it must parse as XML).
fn title_of(svg: &str) -> String {
    let doc = roxmltree::Document::parse(svg).unwrap_or_else(|e| panic!("not XML ({e}): {svg}"));
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .find(|n| n.has_tag_name("title"))
        .and_then(|n| n.text())
        .unwrap_or_default()
        .to_string()
}

#[tokio::test]
async fn every_badge_is_well_formed_svg_saying_the_state_and_figure() {
    let service = spawn().await;
    let org = service.organisation("acme").await;
    let api = service.monitor(org, "API", "up", "{}").await;
    service
        .sql(&format!(
            "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) VALUES ({api}, current_date, 1000, 999)"
        ))
        .await;
    service
        .sql(&format!(
            "INSERT INTO monitor_badges (monitor_id, org_id, token_sha256) VALUES ({api}, {org}, '{}')",
            sha256("bdg_token")
        ))
        .await;
    service.refreshed().await;

    let expected = [
        ("status.svg", "status: up"),
        ("uptime-24h.svg", "uptime 24h: no data"),
        ("uptime-7d.svg", "uptime 7d: no data"),
        ("uptime-30d.svg", "uptime 30d: 99.90%"),
        ("uptime-90d.svg", "uptime 90d: 99.90%"),
        ("response-time-24h.svg", "response time 24h: no data"),
        ("response-time-7d.svg", "response time 7d: no data"),
    ];
    for (file, title) in expected {
        let res = service.get(&format!("/badge/bdg_token/{file}")).await;
        assert_eq!(res.status(), StatusCode::OK, "{file}");
        assert_eq!(res.headers()["content-type"], "image/svg+xml");
        assert_eq!(res.headers()["cache-control"], "public, max-age=60");
        let etag = res.headers()["etag"].clone();
        assert_eq!(title_of(&res.text().await.unwrap()), title, "{file}");
        let again = service
            .client
            .get(service.url(&format!("/badge/bdg_token/{file}")))
            .header("if-none-match", etag)
            .send()
            .await
            .unwrap();
        assert_eq!(again.status(), StatusCode::NOT_MODIFIED, "{file}");
    }
    let shields: serde_json::Value = service
        .get("/badge/bdg_token/shields.json")
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(
        shields,
        serde_json::json!({"schemaVersion": 1, "label": "status", "message": "up", "color": "brightgreen"})
    );

    service
        .sql(&format!(
            "UPDATE monitors SET status = 'down' WHERE id = {api}"
        ))
        .await;
    service.refreshed().await;
    let svg = service
        .get("/badge/bdg_token/status.svg")
        .await
        .text()
        .await
        .unwrap();
    assert_eq!(title_of(&svg), "status: down");
    assert!(svg.contains("#e05d44"));

    // Unknown tokens and the monitor's id are not badges.
    for path in [
        "/badge/bdg_other/status.svg",
        &format!("/badge/{api}/status.svg"),
    ] {
        let res = service.get(path).await;
        assert_eq!(res.status(), StatusCode::NOT_FOUND, "{path}");
        assert_eq!(title_of(&res.text().await.unwrap()), "status: not found");
    }
}
