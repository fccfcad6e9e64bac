//! Connection pool and migrations.

use crate::{DbError, DbResult};
use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
use diesel_async::pooled_connection::deadpool::{Object, Pool as DeadPool};
use diesel_async::pooled_connection::AsyncDieselConnectionManager;
use diesel_async::AsyncPgConnection;
use diesel_migrations::{embed_migrations, EmbeddedMigrations, MigrationHarness};
use uptime_config::DatabaseSettings;

/// The migrations of `migrations/`, compiled into every binary that needs them.
pub const MIGRATIONS: EmbeddedMigrations = embed_migrations!("../../migrations");

/// A digest of the migrations embedded in [`MIGRATIONS`] (computed by the
/// build script from the same files), for naming a migrated template
/// database after exactly these migrations.
pub const MIGRATIONS_DIGEST: &str = env!("UPTIME_MIGRATIONS_DIGEST");

pub type Pool = DeadPool<AsyncPgConnection>;
pub type PooledConn = Object<AsyncPgConnection>;

/// Builds a pool. Connections are opened lazily, so this succeeds even while
/// the database is down; `/readyz` reports it.
///
/// Taking a connection waits at most `pool_wait_timeout_ms` for a free one
/// (and as long again for a new one to open): an exhausted pool or an
/// unreachable database then fails fast with [`DbError::PoolTimeout`] instead
/// of holding the caller forever.
pub fn connect(settings: &DatabaseSettings) -> DbResult<Pool> {
    let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new(settings.url.clone());
    let wait = std::time::Duration::from_millis(settings.pool_wait_timeout_ms.max(1));
    DeadPool::builder(manager)
        .max_size(settings.max_connections.max(1))
        .runtime(deadpool::Runtime::Tokio1)
        .wait_timeout(Some(wait))
        .create_timeout(Some(wait))
        .build()
        .map_err(|e| DbError::Pool(e.to_string()))
}

/// Takes a connection from the pool.
pub async fn conn(pool: &Pool) -> DbResult<PooledConn> {
    use deadpool::managed::PoolError;
    pool.get().await.map_err(|e| match e {
        PoolError::Timeout(kind) => DbError::PoolTimeout(format!("{kind:?}")),
        other => DbError::Pool(other.to_string()),
    })
}

/// Runs every pending migration against `database_url`. Returns the versions applied.
pub async fn migrate(database_url: &str) -> DbResult<Vec<String>> {
    let url = database_url.to_string();
    // The migration harness is synchronous; it drives an async connection
    // through a blocking wrapper, which must not run on a runtime worker.
    tokio::task::spawn_blocking(move || {
        use diesel::Connection;
        let mut conn = AsyncConnectionWrapper::<AsyncPgConnection>::establish(&url)
            .map_err(|e| DbError::Migration(e.to_string()))?;
        let applied = conn
            .run_pending_migrations(MIGRATIONS)
            .map_err(|e| DbError::Migration(e.to_string()))?;
        Ok(applied.iter().map(|v| v.to_string()).collect())
    })
    .await
    .map_err(|e| DbError::Migration(e.to_string()))?
}

/// `SELECT 1`, for readiness probes.
pub async fn ping(pool: &Pool) -> DbResult<()> {
    use diesel_async::RunQueryDsl;
    let mut conn = conn(pool).await?;
    diesel::sql_query("SELECT 1").execute(&mut conn).await?;
    Ok(())
}

/// A readiness check for `uptime_ops::Readiness::with_check("postgres", ..)`:
/// ready when [`ping`] succeeds. It lives here, not in `uptime-ops`, so that
/// a service without a database (the checker) links no database driver.
pub fn readiness_check(
    pool: &Pool,
) -> impl Fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<(), String>> + Send>>
       + Send
       + Sync
       + 'static {
    let pool = pool.clone();
    move || {
        let pool = pool.clone();
        Box::pin(async move { ping(&pool).await.map_err(|e| e.to_string()) })
    }
}
