//! Issue 19: the scheduler passes a monitor's basic-auth password on sealed,
//! as stored (check-due.v5), holding no key; a password still in the legacy
//! plain-text column is never published, and its slots are skipped until
//! the api-gateway has sealed it.

use crate::common::*;
use diesel::sql_types::{BigInt, Text};
use diesel_async::RunQueryDsl;
use scheduler::Clock;
use std::time::Duration;
use uptime_contracts::{BasicAuth, CheckOptions, HttpRequest};
use uptime_db::models::{NewMonitor, SealedText};

const SEALED: &str = "v1.k1.q83vEjRWeJC7ze8S0Ykg3eP0mVoKsqMBp6b0KcJMDd3oLVU";

fn with_basic_auth(user: i64, sealed: Option<&str>) -> NewMonitor {
    let mut monitor = http_monitor(user, 10);
    monitor.definition.check_options = uptime_db::monitors::options_column(&CheckOptions {
        http: Some(HttpRequest {
            basic_auth: Some(BasicAuth {
                username: "probe".into(),
                password_sealed: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    });
    monitor.definition.http_password_sealed = sealed.map(|s| SealedText::new(s.into()));
    monitor
}

async fn set_columns(env: &uptime_testkit::TestEnv, id: i64, sql: &str, value: &str) {
    let mut conn = uptime_db::pool::conn(&env.db.pool).await.unwrap();
    diesel::sql_query(sql)
        .bind::<BigInt, _>(id)
        .bind::<Text, _>(value)
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn passwords_go_out_sealed_and_plain_text_never() {
    let env = env().await;
    let user = insert_user(&env).await;
    let sealed = insert_monitor(&env, with_basic_auth(user, Some(SEALED))).await;
    let legacy = insert_monitor(&env, with_basic_auth(user, None)).await;
    set_columns(
        &env,
        legacy.id,
        "UPDATE monitors SET http_password = $2 WHERE id = $1",
        "plain-pw",
    )
    .await;
    let clock = Clock::system();
    let feed = due_feed_on(&env, &clock).await;
    let scheduler = start_scheduler_on(&env, &clock).await;

    // Two slots of the sealed monitor: the legacy one's slots pass meanwhile.
    for n in 1..=2 {
        let dues = feed
            .wait_for(n, Duration::from_secs(10), |d| d.monitor_id == sealed.id)
            .await;
        let json = &dues[n - 1].json;
        assert_eq!(
            json["spec"]["options"]["http"]["basic_auth"],
            serde_json::json!({"username": "probe", "password_sealed": SEALED}),
            "{json}"
        );
        assert!(dues[n - 1].subject.starts_with("uptime.checks.due.v5."));
        clock.advance(Duration::from_secs(10));
    }
    let published: Vec<String> = feed.all().iter().map(|d| d.json.to_string()).collect();
    assert!(
        !published.iter().any(|json| json.contains("plain-pw")),
        "{published:?}"
    );
    assert!(
        !feed.all().iter().any(|d| d.message.monitor_id == legacy.id),
        "a check of the unsealed monitor went out"
    );

    // Sealed (as the api-gateway's start does), it is checked at its next slot.
    set_columns(
        &env,
        legacy.id,
        "UPDATE monitors SET http_password = NULL, http_password_sealed = $2 WHERE id = $1",
        SEALED,
    )
    .await;
    clock.advance(Duration::from_secs(10));
    let dues = feed
        .wait_for(1, Duration::from_secs(10), |d| d.monitor_id == legacy.id)
        .await;
    assert_eq!(dues[0].message.spec.password_sealed(), Some(SEALED));
    scheduler.stop().await;
}
