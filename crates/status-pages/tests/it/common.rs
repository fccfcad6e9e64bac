//! `spawn`: a real status-pages service over a fresh database, refreshing
//! often; tests wait for its refreshes (never fixed sleeps).
#![allow(dead_code)]

use diesel_async::RunQueryDsl;
use status_pages::refresh::Shared;
use status_pages::settings::StatusPagesSettings;
use status_pages::StatusPages;
use tokio_util::sync::CancellationToken;
use uptime_testkit::TestDb;

pub struct Service {
    pub base: String,
    pub shared: Shared,
    /// The database of services spawned with their own.
    pub db: Option<TestDb>,
    pub client: reqwest::Client,
    shutdown: CancellationToken,
}

impl Drop for Service {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

pub async fn spawn() -> Service {
    spawn_with(|_| {}).await
}

pub async fn spawn_with(tweak: impl FnOnce(&mut StatusPagesSettings)) -> Service {
    let db = TestDb::create().await;
    let database = db.settings();
    spawn_on(Some(db), database, tweak).await
}

/// A service over a database someone else holds (a `TestEnv`'s).
pub async fn spawn_with_database(
    database: uptime_config::DatabaseSettings,
    tweak: impl FnOnce(&mut StatusPagesSettings),
) -> Service {
    spawn_on(None, database, tweak).await
}

async fn spawn_on(
    db: Option<TestDb>,
    database: uptime_config::DatabaseSettings,
    tweak: impl FnOnce(&mut StatusPagesSettings),
) -> Service {
    let mut settings = StatusPagesSettings {
        database,
        ..Default::default()
    };
    settings.ops.listen = "127.0.0.1:0".into();
    settings.status_pages.listen = "127.0.0.1:0".into();
    settings.status_pages.workers = 2;
    settings.status_pages.refresh_ms = 100;
    settings.status_pages.rate_limit_per_second = 0;
    tweak(&mut settings);
    let service = StatusPages::build(settings).await.expect("build service");
    let base = format!("http://{}", service.addr());
    let shared = service.shared();
    let shutdown = CancellationToken::new();
    tokio::spawn(service.run_until(shutdown.clone()));
    Service {
        base,
        shared,
        db,
        client: reqwest::Client::builder()
            .no_gzip()
            .no_brotli()
            .build()
            .unwrap(),
        shutdown,
    }
}

impl Service {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.base, path)
    }

    /// Returns after a refresh that started after this call (so it saw
    /// every write made before it).
    pub async fn refreshed(&self) {
        let next = self.shared.generation() + 2;
        tokio::time::timeout(
            std::time::Duration::from_secs(20),
            self.shared.wait_for_generation(next),
        )
        .await
        .expect("the snapshot refreshes");
    }

    pub async fn sql(&self, statement: &str) {
        let mut conn = uptime_db::pool::conn(&self.db.as_ref().unwrap().pool)
            .await
            .unwrap();
        diesel::sql_query(statement)
            .execute(&mut conn)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }

    /// A new organisation; its id.
    pub async fn organisation(&self, name: &str) -> i64 {
        let mut conn = uptime_db::pool::conn(&self.db.as_ref().unwrap().pool)
            .await
            .unwrap();
        let (_, org) = uptime_db::organisations::create_user_with_organisation(&mut conn, name)
            .await
            .unwrap();
        org.id
    }

    /// A new http monitor of `org_id` in `status`; its id.
    pub async fn monitor(&self, org_id: i64, name: &str, status: &str, labels: &str) -> i64 {
        let mut conn = uptime_db::pool::conn(&self.db.as_ref().unwrap().pool)
            .await
            .unwrap();
        let mut definition =
            uptime_testkit::fixtures::monitor_definition(uptime_contracts::MonitorKind::Http);
        definition.name = name.into();
        let monitor = uptime_testkit::fixtures::insert_monitor(&mut conn, org_id, definition).await;
        drop(conn);
        self.sql(&format!(
            "UPDATE monitors SET status = '{status}', status_since = now(), labels = '{labels}' WHERE id = {}",
            monitor.id
        ))
        .await;
        monitor.id
    }

    /// A public page of `org_id` at `slug` with these groups (JSON).
    pub async fn page(&self, org_id: i64, slug: &str, groups: &str) {
        self.sql(&format!(
            "INSERT INTO status_pages (org_id, slug, title, groups) VALUES ({org_id}, '{slug}', 'Acme status', '{groups}')"
        ))
        .await;
    }

    pub async fn get(&self, path: &str) -> reqwest::Response {
        self.client.get(self.url(path)).send().await.unwrap()
    }
}

/// Hex SHA-256, as tokens are stored.
pub fn sha256(text: &str) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(text.as_bytes()))
}
