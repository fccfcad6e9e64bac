//! The test harness every crate's integration tests share. Real parts only:
//!
//! - [`TestDb`]: a PostgreSQL database of its own for each test, cloned from a
//!   template that was migrated once. The server is the one `just test` starts;
//!   its admin URL comes from `UPTIME_TEST_DATABASE_URL`.
//! - [`TestNats`]: a `nats-server` with JetStream of its own for each test, on a
//!   port the server picks itself, with its store in a temporary directory.
//!   The binary is `UPTIME_TEST_NATS_SERVER` or `nats-server` on `PATH`.

mod db;
mod nats;

pub use db::TestDb;
pub use nats::TestNats;

/// Database and broker for one test.
pub struct TestEnv {
    pub db: TestDb,
    pub nats: TestNats,
}

impl TestEnv {
    pub async fn start() -> Self {
        let (db, nats) = tokio::join!(TestDb::create(), TestNats::start());
        Self { db, nats }
    }
}
