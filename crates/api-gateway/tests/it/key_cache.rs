//! The cache of valid API keys (`auth_cache::KnownKeys`): a known key costs
//! no database query, and a revoked one is refused at once, by the replica
//! that revoked it and by every other replica (`uptime.keys.revoked.v1`).

use crate::common::{spawn_app, TestApp};
use api_gateway::startup::Application;
use api_gateway::state::AppState;
use reqwest::StatusCode;
use serde_json::json;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Another gateway replica beside `app`: same database, same NATS server.
struct Replica {
    base: String,
    state: actix_web::web::Data<AppState>,
    shutdown: CancellationToken,
}

impl Drop for Replica {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

impl Replica {
    async fn beside(app: &TestApp) -> Self {
        // The settings `app` was built with: its database, its NATS, free ports.
        let settings = app.state.settings.clone();
        let replica = Application::build(settings).await.expect("build replica");
        let base = format!("http://{}", replica.addr());
        let state = replica.state();
        let shutdown = CancellationToken::new();
        tokio::spawn(replica.run_until(shutdown.clone()));
        Self {
            base,
            state,
            shutdown,
        }
    }
}

/// The status of an authenticated request that needs no `api_keys` row of
/// its own (listing monitors).
async fn status_at(client: &reqwest::Client, base: &str, key: &str) -> StatusCode {
    client
        .get(format!("{base}/api/v1/monitors"))
        .bearer_auth(key)
        .send()
        .await
        .expect("request sent")
        .status()
}

/// A second key of a new user, and its id (the first key revokes it).
async fn user_with_spare_key(app: &TestApp) -> (String, String, i64) {
    let (_, admin) = app.new_user("ops").await;
    let (status, created) = app
        .post("/api/v1/api-keys", &admin, json!({"name": "spare"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let spare = created["key"].as_str().unwrap().to_string();
    (admin, spare, created["id"].as_i64().unwrap())
}

async fn sql(app: &TestApp, statement: &str) {
    use diesel_async::RunQueryDsl;
    let mut conn = uptime_db::pool::conn(&app.env.db.pool).await.unwrap();
    diesel::sql_query(statement)
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

/// Polls `status` until it is `want` or 10 s have passed; returns the last one.
async fn wait_for_status<F, Fut>(want: StatusCode, mut status: F) -> StatusCode
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = StatusCode>,
{
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let got = status().await;
        if got == want || Instant::now() > deadline {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_key_revoked_on_one_replica_is_refused_by_another_at_once() {
    let a = spawn_app().await;
    let b = Replica::beside(&a).await;
    let (admin, spare, spare_id) = user_with_spare_key(&a).await;
    let digest = api_gateway::keys::digest(&spare);

    // Both replicas have accepted the key and remember it.
    assert_eq!(status_at(&a.client, &a.base, &spare).await, StatusCode::OK);
    assert_eq!(status_at(&a.client, &b.base, &spare).await, StatusCode::OK);
    assert!(a.state.known_keys.contains(&digest), "cached on A");
    assert!(b.state.known_keys.contains(&digest), "cached on B");

    let (status, body) = a
        .delete(&format!("/api/v1/api-keys/{spare_id}"), &admin)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");

    // B heard of it: well within its cache's 60 s time to live.
    let on_b = wait_for_status(StatusCode::UNAUTHORIZED, || {
        status_at(&a.client, &b.base, &spare)
    })
    .await;
    assert_eq!(on_b, StatusCode::UNAUTHORIZED, "B still accepts the key");
    assert!(!b.state.known_keys.contains(&digest), "B forgot it");
    // The key that revoked keeps working on both.
    assert_eq!(status_at(&a.client, &b.base, &admin).await, StatusCode::OK);
}

#[tokio::test]
async fn a_revoked_key_is_refused_by_the_replica_that_revoked_it_at_once() {
    let app = spawn_app().await;
    let (admin, spare, spare_id) = user_with_spare_key(&app).await;
    assert_eq!(
        status_at(&app.client, &app.base, &spare).await,
        StatusCode::OK
    );
    assert!(app
        .state
        .known_keys
        .contains(&api_gateway::keys::digest(&spare)));

    let (status, _) = app
        .delete(&format!("/api/v1/api-keys/{spare_id}"), &admin)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // No polling: refused by the very next request.
    assert_eq!(
        status_at(&app.client, &app.base, &spare).await,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn a_cached_key_is_accepted_without_a_database_query() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("cached").await;
    let (_, unused) = app.new_user("not cached").await;
    assert_eq!(
        status_at(&app.client, &app.base, &key).await,
        StatusCode::OK
    );

    // Any lookup of a key now fails: the table is not there.
    sql(&app, "ALTER TABLE api_keys RENAME TO api_keys_away").await;
    for _ in 0..3 {
        assert_eq!(
            status_at(&app.client, &app.base, &key).await,
            StatusCode::OK,
            "the cached key needed the database"
        );
    }
    assert_eq!(
        status_at(&app.client, &app.base, &unused).await,
        StatusCode::INTERNAL_SERVER_ERROR,
        "a key not cached is looked up (and the lookup fails)"
    );

    let metrics = app
        .client
        .get(format!("http://{}/metrics", app.ops_addr))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let count = |result: &str| {
        let series = format!("api_key_cache_lookups_total{{result=\"{result}\"}} ");
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(&series))
            .map(|v| v.trim().parse::<u64>().unwrap())
            .unwrap_or(0)
    };
    assert_eq!(count("hit"), 3, "{metrics}");
    assert_eq!(count("miss"), 2, "{metrics}");
}

#[tokio::test]
async fn a_reconnect_to_nats_forgets_every_cached_key() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let digest = api_gateway::keys::digest(&key);
    assert_eq!(
        status_at(&app.client, &app.base, &key).await,
        StatusCode::OK
    );

    // A revocation this replica never hears of, as if its message was sent
    // while it was disconnected: the cache still has the key.
    sql(
        &app,
        &format!("UPDATE api_keys SET revoked_at = now() WHERE key_sha256 = '{digest}'"),
    )
    .await;
    assert_eq!(
        status_at(&app.client, &app.base, &key).await,
        StatusCode::OK
    );

    let nats = &app.state.nats;
    let connects = || {
        nats.statistics()
            .connects
            .load(std::sync::atomic::Ordering::Relaxed)
    };
    let before = connects();
    nats.force_reconnect().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while connects() == before
        || nats.connection_state() != async_nats::connection::State::Connected
    {
        assert!(Instant::now() < deadline, "no reconnect within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    assert_eq!(
        status_at(&app.client, &app.base, &key).await,
        StatusCode::UNAUTHORIZED,
        "a key cached before the reconnect was still trusted"
    );
    assert!(!app.state.known_keys.contains(&digest));
}

#[tokio::test]
async fn a_key_accepted_from_the_cache_still_records_its_last_use() {
    use api_gateway::auth_cache::{KnownKey, Link};
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let digest = api_gateway::keys::digest(&key);
    let (status, list) = app.get("/api/v1/api-keys", &key).await;
    assert_eq!(status, StatusCode::OK);
    let key_id = list["api_keys"][0]["id"].as_i64().unwrap();

    // The cache last wrote its use two minutes ago (as if cached then), and
    // the row says it was never used.
    let two_minutes_ago = chrono::Utc::now() - chrono::Duration::seconds(120);
    let keys = &app.state.known_keys;
    keys.remember(
        keys.ticket(),
        digest.clone(),
        KnownKey::new(
            api_gateway::auth::AuthUser {
                user_id,
                org_id: user_id,
                role: uptime_db::organisations::Role::Owner,
                scope: uptime_db::organisations::Scope::Admin,
                key_id,
                key_prefix: api_gateway::auth::KeyPrefix::of(&key),
                address: None,
                label_selector: None,
            },
            Some(two_minutes_ago),
        ),
        Link::of(&app.state.nats),
    );
    sql(
        &app,
        &format!("UPDATE api_keys SET last_used_at = NULL WHERE id = {key_id}"),
    )
    .await;

    assert_eq!(
        status_at(&app.client, &app.base, &key).await,
        StatusCode::OK
    );
    // Written in the background, not by the request itself.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let list = uptime_db::api_keys::list(
            &mut uptime_db::pool::conn(&app.env.db.pool).await.unwrap(),
            user_id,
        )
        .await
        .unwrap();
        if list[0].last_used_at.is_some() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "last_used_at not written within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
