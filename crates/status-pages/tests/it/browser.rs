//! A real headless Chromium drives a status page made through the API: the
//! states shown are the API's, each monitor has 90 uptime bars, a monitor
//! that goes down shows down within seconds, and the page logs no console
//! error. It also takes the screenshot in docs/ (written there when
//! `UPTIME_UPDATE_SCREENSHOT=1`; always under the target dir).

mod cdp;
mod layout;

use crate::common::spawn_with_database;
use api_gateway::settings::GatewaySettings;
use api_gateway::startup::Application;
use serde_json::{json, Value};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestEnv;

struct Gateway {
    base: String,
    client: reqwest::Client,
    shutdown: CancellationToken,
}

impl Drop for Gateway {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Gateway {
    async fn start(env: &TestEnv, pages_base: &str) -> Gateway {
        let mut settings = GatewaySettings::default();
        settings.http.listen = "127.0.0.1:0".into();
        settings.http.workers = 1;
        settings.database = env.db.settings();
        settings.nats = env.nats.settings();
        settings.rate_limit.per_second = 0;
        settings.status_pages.public_base_url = pages_base.into();
        let app = Application::build(settings)
            .await
            .expect("build the gateway");
        let base = format!("http://{}", app.addr());
        let shutdown = CancellationToken::new();
        tokio::spawn(app.run_until(shutdown.clone()));
        Gateway {
            base,
            client: reqwest::Client::new(),
            shutdown,
        }
    }

    async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        key: &str,
        body: Option<Value>,
    ) -> Value {
        let mut req = self
            .client
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(key);
        if let Some(body) = body {
            req = req.json(&body);
        }
        let res = req.send().await.unwrap();
        assert!(res.status().is_success(), "{path}: {}", res.status());
        res.json().await.unwrap()
    }
}

/// The page's monitors as `[id, state, bars]`, in page order.
const MONITORS_JS: &str = "[...document.querySelectorAll('.monitor')].map(m => \
    [Number(m.dataset.monitorId), m.dataset.state, m.querySelectorAll('ol.bars li').length])";

#[tokio::test]
async fn a_real_browser_shows_the_apis_states_ninety_bars_and_a_state_change_without_errors() {
    let env = TestEnv::start().await;
    let pages = spawn_with_database(env.db.settings(), |s| s.status_pages.refresh_ms = 250).await;
    let gateway = Gateway::start(&env, &pages.base).await;
    let (_, key) = api_gateway::keys::create_user_with_key(&env.db.pool, "acme")
        .await
        .unwrap();
    let post = |path: &'static str, body: Value| {
        gateway.call(reqwest::Method::POST, path, &key, Some(body))
    };
    let mut ids = Vec::new();
    for (name, labels) in [
        ("Website", json!({"tier": "edge"})),
        ("Public API", json!({"tier": "core"})),
        ("Payments", json!({"tier": "core"})),
        ("Login", json!({"tier": "core"})),
    ] {
        let created = post(
            "/api/v1/monitors",
            json!({"name": name, "type": "http", "target": "https://example.com", "labels": labels}),
        )
        .await;
        ids.push(created["id"].as_i64().unwrap());
    }
    // The recorder's work, written as it writes it: states and rollups.
    let sql = |statement: String| {
        let pool = env.db.pool.clone();
        async move {
            let mut conn = uptime_db::pool::conn(&pool).await.unwrap();
            diesel_async::RunQueryDsl::execute(diesel::sql_query(statement), &mut conn)
                .await
                .unwrap();
        }
    };
    sql(format!(
        "UPDATE monitors SET status = 'up', status_since = now() - interval '3 days' WHERE id = ANY(ARRAY{ids:?})"
    ))
    .await;
    sql(format!(
        "UPDATE monitors SET status = 'degraded' WHERE id = {}",
        ids[3]
    ))
    .await;
    sql(format!(
        "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks) \
         SELECT m, current_date - d, 1440, CASE WHEN (m + d) % 23 = 0 THEN 1380 WHEN (m * d) % 41 = 0 THEN 1436 ELSE 1440 END \
         FROM unnest(ARRAY{ids:?}) m, generate_series(0, 74) d"
    ))
    .await;
    sql(format!(
        "INSERT INTO check_results (check_id, monitor_id, trigger, status, checked_at, latency_ms, reporter, recorded_at, slot_at) \
         SELECT gen_random_uuid(), m, 'scheduled', 'up', t, 80 + (m * 37) % 60 + (40 * sin(extract(epoch FROM t) / 5000))::int, 'test', t, t \
         FROM unnest(ARRAY{ids:?}) m, generate_series(now() - interval '23 hours', now(), interval '10 minutes') t"
    ))
    .await;
    let page = post(
        "/api/v1/status-pages",
        json!({"slug": "acme", "title": "Acme status", "description": "Live status of Acme's public services.",
               "groups": [{"name": "Website", "monitor_ids": [ids[0]]},
                          {"name": "Core services", "selector": {"tier": "core"}}]}),
    )
    .await;
    let url = page["url"].as_str().unwrap().to_string();
    assert_eq!(url, format!("{}/status/acme", pages.base));
    pages.refreshed().await;

    let mut browser = cdp::Browser::launch(1000, 900).await;
    browser.open(&url).await;
    let shown = browser.eval(MONITORS_JS).await;
    let shown = shown.as_array().unwrap();
    assert_eq!(shown.len(), 4, "{shown:?}");
    for row in shown {
        let id = row[0].as_i64().unwrap();
        let api = gateway
            .call(
                reqwest::Method::GET,
                &format!("/api/v1/monitors/{id}"),
                &key,
                None,
            )
            .await;
        assert_eq!(
            row[1], api["status"],
            "monitor {id}: page {row} vs API {api}"
        );
        assert_eq!(row[2], 90, "monitor {id}'s bars");
    }
    assert_eq!(
        browser
            .eval("document.getElementById('overall').dataset.state")
            .await,
        "degraded"
    );
    let tip = browser
        .eval("document.querySelector('ol.bars li:last-child').dataset.tip")
        .await;
    assert!(tip.as_str().unwrap().ends_with("% up"), "{tip}");

    let shot = browser.screenshot().await;
    assert!(shot.starts_with(b"\x89PNG"));
    let target_dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    std::fs::write(target_dir.join("status-page.png"), &shot).unwrap();
    if std::env::var("UPTIME_UPDATE_SCREENSHOT").as_deref() == Ok("1") {
        let docs =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/status-page.png");
        std::fs::write(docs, &shot).unwrap();
    }

    // A monitor goes down (as the recorder records it): reloads show it
    // within seconds.
    let changed_at = Instant::now();
    sql(format!(
        "UPDATE monitors SET status = 'down', status_since = now() WHERE id = {}",
        ids[1]
    ))
    .await;
    let down_js = format!(
        "document.querySelector('[data-monitor-id=\"{}\"]').dataset.state",
        ids[1]
    );
    loop {
        browser.open(&url).await;
        if browser.eval(&down_js).await == "down" {
            break;
        }
        assert!(
            changed_at.elapsed() < Duration::from_secs(5),
            "the page still does not show the monitor down"
        );
    }
    let api = gateway
        .call(
            reqwest::Method::GET,
            &format!("/api/v1/monitors/{}", ids[1]),
            &key,
            None,
        )
        .await;
    assert_eq!(api["status"], "down");
    assert_eq!(
        browser
            .eval("document.getElementById('overall').dataset.state")
            .await,
        "down"
    );
    assert!(
        browser.errors().is_empty(),
        "console errors: {:?}",
        browser.errors()
    );
}
