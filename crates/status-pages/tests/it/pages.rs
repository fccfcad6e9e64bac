//! Pages over a real database: what they show (names and states, 90 bars,
//! never targets), how they follow a state change, private pages, custom
//! domains, 404s, ETags and compression.

use crate::common::{sha256, spawn, spawn_with};
use reqwest::StatusCode;
use std::io::Read;

#[tokio::test]
async fn a_page_shows_its_monitors_states_and_ninety_bars_and_follows_a_change() {
    let service = spawn().await;
    let org = service.organisation("acme").await;
    let api = service
        .monitor(org, "Public API", "up", r#"{"team": "core"}"#)
        .await;
    let web = service.monitor(org, "Website", "up", "{}").await;
    let other_org = service.organisation("other").await;
    let foreign = service
        .monitor(other_org, "Foreign", "down", r#"{"team": "core"}"#)
        .await;
    // The rollup first: the aggregates of a monitor are read when it first
    // shows (then every `aggregate_refresh_secs`).
    service
        .sql(&format!(
            "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) VALUES ({api}, current_date, 100, 99)"
        ))
        .await;
    service
        .page(
            org,
            "acme",
            &format!(r#"[{{"name": "Site", "monitor_ids": [{web}, {foreign}]}}, {{"name": "Core", "selector": {{"team": "core"}}}}]"#),
        )
        .await;
    service.refreshed().await;

    let res = service.get("/status/acme").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["cache-control"], "public, no-cache");
    assert!(res.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
    let html = res.text().await.unwrap();
    assert!(html.contains("All systems operational"), "{html}");
    assert!(html.contains("Public API") && html.contains("Website"));
    // Another organisation's monitor is never shown, nor any target.
    assert!(!html.contains("Foreign"));
    assert!(!html.contains("example.com"), "a target leaked");
    assert_eq!(html.matches("<li class=").count(), 2 * 90);
    assert!(html.contains(": 99.00% up\""), "{html}");

    service
        .sql(&format!(
            "UPDATE monitors SET status = 'down' WHERE id = {api}"
        ))
        .await;
    service
        .sql(&format!(
            "INSERT INTO incidents (id, org_id, monitor_id, started_at) VALUES (gen_random_uuid(), {org}, {api}, now())"
        ))
        .await;
    service.refreshed().await;
    let html = service.get("/status/acme").await.text().await.unwrap();
    assert!(html.contains("Partial outage"), "{html}");
    assert!(html.contains(&format!("data-monitor-id=\"{api}\" data-state=\"down\"")));
    assert!(html.contains("Active incidents"));
}

#[tokio::test]
async fn unknown_and_private_pages_are_404_pages_and_custom_domains_route_by_host() {
    let service = spawn().await;
    let org = service.organisation("acme").await;
    service.page(org, "open", "[]").await;
    service
        .sql(&format!(
            "INSERT INTO status_pages (org_id, slug, title, custom_domain, access_token_sha256) \
             VALUES ({org}, 'closed', 'Closed', 'status.acme.example', '{}')",
            sha256("sp_secret")
        ))
        .await;
    service.refreshed().await;

    let res = service.get("/status/nope").await;
    assert_eq!(res.status(), StatusCode::NOT_FOUND);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    assert!(res.text().await.unwrap().contains("Status page not found"));
    for path in ["/status/closed", "/status/closed?access_token=sp_wrong"] {
        assert_eq!(
            service.get(path).await.status(),
            StatusCode::NOT_FOUND,
            "{path}"
        );
    }
    let res = service.get("/status/closed?access_token=sp_secret").await;
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(res.headers()["cache-control"], "private, no-cache");
    let by_host = service
        .client
        .get(service.url("/?access_token=sp_secret"))
        .header("host", "Status.Acme.Example:443")
        .send()
        .await
        .unwrap();
    assert_eq!(by_host.status(), StatusCode::OK);
    assert!(by_host.text().await.unwrap().contains("<h1>Closed</h1>"));
    let unknown_host = service
        .client
        .get(service.url("/"))
        .header("host", "elsewhere.example")
        .send()
        .await
        .unwrap();
    assert_eq!(unknown_host.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn pages_are_revalidated_by_etag_and_compressed_as_asked() {
    let service = spawn().await;
    let org = service.organisation("acme").await;
    service.page(org, "acme", "[]").await;
    service.refreshed().await;
    let plain = service.get("/status/acme").await;
    let etag = plain.headers()["etag"].clone();
    let body = plain.text().await.unwrap();
    let again = service
        .client
        .get(service.url("/status/acme"))
        .header("if-none-match", etag.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);
    assert!(again.bytes().await.unwrap().is_empty());

    let gzipped = service
        .client
        .get(service.url("/status/acme"))
        .header("accept-encoding", "gzip")
        .send()
        .await
        .unwrap();
    assert_eq!(gzipped.headers()["content-encoding"], "gzip");
    // Other bytes, another representation: its own tag (tests/it/methods.rs).
    assert_ne!(gzipped.headers()["etag"], etag);
    let bytes = gzipped.bytes().await.unwrap();
    let mut unzipped = String::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_string(&mut unzipped)
        .unwrap();
    assert_eq!(unzipped, body);
    let brotli = service
        .client
        .get(service.url("/status/acme"))
        .header("accept-encoding", "gzip, deflate, br")
        .send()
        .await
        .unwrap();
    assert_eq!(brotli.headers()["content-encoding"], "br");
    assert!(brotli.bytes().await.unwrap().len() < body.len() / 2);
}

#[tokio::test]
async fn a_client_past_its_rate_gets_429_with_retry_after() {
    let service = spawn_with(|s| {
        s.status_pages.rate_limit_per_second = 1;
        s.status_pages.rate_limit_burst = 3;
    })
    .await;
    service.refreshed().await;
    for _ in 0..3 {
        assert_eq!(
            service.get("/status/any").await.status(),
            StatusCode::NOT_FOUND
        );
    }
    let refused = service.get("/status/any").await;
    assert_eq!(refused.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(refused.headers().contains_key("retry-after"));
}
