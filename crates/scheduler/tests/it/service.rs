//! The service entry point: ops endpoints and graceful shutdown.

use crate::common::*;
use scheduler::settings::SchedulerSettings;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_service_reports_ready_and_leading_and_stops_on_the_token() {
    let env = env().await;
    let user = insert_user(&env).await;
    let monitor = insert_monitor(&env, http_monitor(user, 60)).await;
    let feed = due_feed(&env).await;
    let port = free_port();
    let mut settings = SchedulerSettings::default();
    settings.database = env.db.settings();
    settings.nats = env.nats.settings();
    settings.ops.listen = format!("127.0.0.1:{port}");
    settings.scheduler = fast_config();
    let shutdown = CancellationToken::new();
    let service = tokio::spawn(scheduler::run(settings, shutdown.clone()));

    feed.wait_for(1, Duration::from_secs(20), |d| d.monitor_id == monitor.id)
        .await;
    let client = reqwest::Client::new();
    let ready = client
        .get(format!("http://127.0.0.1:{port}/readyz"))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let body: serde_json::Value = ready.json().await.unwrap();
    assert_eq!(body["checks"]["postgres"], "ok");
    assert_eq!(body["checks"]["nats"], "ok");
    assert_eq!(body["checks"]["progress"], "ok", "its loops are watched");
    let metrics = client
        .get(format!("http://127.0.0.1:{port}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(metrics.contains("scheduler_is_leader 1"), "{metrics}");
    assert!(metrics.contains("scheduler_published_total"), "{metrics}");
    assert!(
        metrics.contains("scheduler_publish_lateness_seconds"),
        "{metrics}"
    );
    // The never-checked monitor was overdue at the start: a catch-up,
    // released at once, or superseded when its first regular slot happened
    // to come within a second of the start (one run in sixty or so).
    let counter = |name: &str| {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(name)?.trim().parse::<f64>().ok())
            .unwrap_or_else(|| panic!("{name} missing: {metrics}"))
    };
    assert_eq!(
        counter("scheduler_catchup_released_total ")
            + counter("scheduler_catchup_superseded_total "),
        1.0,
        "{metrics}"
    );
    assert!(metrics.contains("scheduler_catchup_waiting 0"), "{metrics}");
    // Set after every round; counted from the first read on.
    for gauge in [
        "scheduler_config_cache_entries",
        "scheduler_config_cache_bytes",
    ] {
        assert!(metrics.contains(gauge), "{gauge}: {metrics}");
    }

    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(20), service)
        .await
        .expect("stops within 20 s")
        .unwrap()
        .unwrap();
}
