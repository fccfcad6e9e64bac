//! "Logins by key": a key's first use, and its first after an hour without
//! any, leave one `use` entry in the audit log (with the key's prefix and
//! the caller's address); uses in between leave none.

use crate::common::{spawn_app, TestApp};
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use uptime_db::schema::api_keys;

async fn uses(app: &TestApp, key: &str) -> Vec<serde_json::Value> {
    let (status, page) = app.get("/api/v1/audit-log?action=use", key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    page["entries"].as_array().unwrap().clone()
}

/// Sets the key's `last_used_at` as if it was last used `ago`.
async fn last_used(app: &TestApp, raw: &str, ago: Duration) {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::update(api_keys::table.filter(api_keys::prefix.eq(&raw[..8])))
        .set(api_keys::last_used_at.eq(Utc::now() - ago))
        .execute(&mut conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn a_keys_first_use_and_its_first_after_an_idle_hour_are_audited_once() {
    let app = spawn_app().await;
    let (org, key) = app.new_user("acme").await;

    // The first use, then more within the minute: one entry.
    for _ in 0..3 {
        app.get("/api/v1/monitors", &key).await;
    }
    let seen = uses(&app, &key).await;
    assert_eq!(seen.len(), 1, "{seen:#?}");
    assert_eq!(seen[0]["actor_user_id"], org);
    assert_eq!(seen[0]["key_prefix"], &key[..8]);
    assert_eq!(seen[0]["resource_kind"], "api_key");
    assert!(seen[0]["address"]
        .as_str()
        .is_some_and(|a| a.starts_with("127.")));
    assert!(seen[0]["changes"]["last_used_at"]["before"].is_null());

    // Keys of the same holder that this gateway has not seen yet: one idle
    // for two hours is audited, one used ten minutes ago is not.
    let idle = app
        .key_for(org, org, uptime_db::organisations::Scope::Read)
        .await;
    last_used(&app, &idle, Duration::hours(2)).await;
    let recent = app
        .key_for(org, org, uptime_db::organisations::Scope::Read)
        .await;
    last_used(&app, &recent, Duration::minutes(10)).await;
    for k in [&idle, &recent] {
        let (status, _) = app.get("/api/v1/monitors", k).await;
        assert_eq!(status, StatusCode::OK);
    }
    let seen = uses(&app, &key).await;
    let prefixes: Vec<&str> = seen
        .iter()
        .map(|e| e["key_prefix"].as_str().unwrap())
        .collect();
    assert_eq!(prefixes, [&idle[..8], &key[..8]], "newest first");
}
