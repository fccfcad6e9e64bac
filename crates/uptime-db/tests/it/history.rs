//! Databases with a migration history of their own, for the tests of
//! migrations: an empty database, copies of some migrations, and running
//! them as the services do.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub fn migrations_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations")
}

/// The migration folders, by name.
pub fn folders() -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(migrations_dir())
        .expect("read migrations/")
        .map(|entry| entry.expect("migrations/ entry").path())
        .filter(|path| path.is_dir())
        .map(|path| {
            (
                path.file_name().unwrap().to_string_lossy().into_owned(),
                path,
            )
        })
        .collect()
}

/// A new, empty database on the test server.
pub async fn empty_database() -> String {
    let admin_url = std::env::var("UPTIME_TEST_DATABASE_URL")
        .expect("UPTIME_TEST_DATABASE_URL is not set: run the tests with `just test`");
    let name = format!("t_mig_{}", uuid::Uuid::new_v4().simple());
    let mut admin = AsyncPgConnection::establish(&admin_url)
        .await
        .expect("connect to the test server");
    diesel::sql_query(format!("CREATE DATABASE {name}"))
        .execute(&mut admin)
        .await
        .unwrap();
    let (base, query) = admin_url
        .split_once('?')
        .map_or((admin_url.as_str(), String::new()), |(b, q)| {
            (b, format!("?{q}"))
        });
    let host_end = base.find("://").map_or(0, |i| i + 3);
    let base = match base[host_end..].find('/') {
        Some(i) => &base[..host_end + i],
        None => base,
    };
    format!("{base}/{name}{query}")
}

/// Runs the migrations of `dir` (a folder of migration folders) as the
/// services do, through diesel's harness.
pub async fn run_migrations_of(url: &str, dir: &Path) {
    let (url, dir) = (url.to_string(), dir.to_path_buf());
    tokio::task::spawn_blocking(move || {
        use diesel::Connection;
        use diesel_async::async_connection_wrapper::AsyncConnectionWrapper;
        use diesel_migrations::{FileBasedMigrations, MigrationHarness};
        let mut conn =
            <AsyncConnectionWrapper<AsyncPgConnection> as Connection>::establish(&url).unwrap();
        let source = FileBasedMigrations::from_path(&dir).unwrap();
        conn.run_pending_migrations(source).unwrap();
    })
    .await
    .unwrap();
}

/// A folder with copies of the named migrations; `tweak` may edit a copy.
pub fn subset(names: &[&str], tweak: impl Fn(&str, &Path)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let found = folders();
    for name in names {
        let from = found
            .get(*name)
            .unwrap_or_else(|| panic!("no migration {name}"));
        let to = dir.path().join(name);
        std::fs::create_dir(&to).unwrap();
        for file in std::fs::read_dir(from).unwrap() {
            let file = file.unwrap().path();
            std::fs::copy(&file, to.join(file.file_name().unwrap())).unwrap();
        }
        tweak(name, &to);
    }
    dir
}
