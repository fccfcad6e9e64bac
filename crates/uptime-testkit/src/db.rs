//! A fresh database per test, cloned from a migrated template.

use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_config::DatabaseSettings;

/// The admin URL of the test server (a database-less URL is fine too).
pub const TEST_DATABASE_URL_ENV: &str = "UPTIME_TEST_DATABASE_URL";

/// A database of its own, migrated, for one test. It is left behind when the
/// test ends (so a failure can be inspected) and dropped by a later test
/// once the process that made it is gone ([`drop_orphans`]): a long-lived
/// development server would otherwise gain ten megabytes per test run
/// forever. `just test` starts each run with an empty server anyway.
pub struct TestDb {
    pub name: String,
    pub url: String,
    pub pool: uptime_db::Pool,
}

impl TestDb {
    pub async fn create() -> Self {
        crate::init_test_logging();
        let admin_url = std::env::var(TEST_DATABASE_URL_ENV).unwrap_or_else(|_| {
            panic!("{TEST_DATABASE_URL_ENV} is not set: run the tests with `just test`")
        });
        let template = template_name();
        // The creating process's id in the name: what `drop_orphans` judges by.
        let name = format!("t_{}_{}", std::process::id(), uuid::Uuid::new_v4().simple());

        let mut admin = AsyncPgConnection::establish(&admin_url)
            .await
            .unwrap_or_else(|e| panic!("connect to the test PostgreSQL at {admin_url}: {e}"));
        // Tests run in many processes at once; one builds the template while
        // the others wait, and clones are serialised because PostgreSQL refuses
        // to copy a template that another session is copying.
        exec(&mut admin, "SELECT pg_advisory_lock(7263541)").await;
        let exists: i64 = count(
            &mut admin,
            &format!("SELECT count(*) AS n FROM pg_database WHERE datname = '{template}'"),
        )
        .await;
        if exists == 0 {
            exec(&mut admin, &format!("CREATE DATABASE {template}")).await;
            uptime_db::migrate(&with_database(&admin_url, &template))
                .await
                .expect("migrate the template database");
        }
        exec(
            &mut admin,
            &format!("CREATE DATABASE {name} TEMPLATE {template}"),
        )
        .await;
        exec(&mut admin, "SELECT pg_advisory_unlock(7263541)").await;
        drop_orphans(&mut admin).await;

        let url = with_database(&admin_url, &name);
        let pool = uptime_db::connect(&DatabaseSettings {
            url: url.clone(),
            max_connections: 8,
            ..DatabaseSettings::default()
        })
        .expect("build pool");
        Self { name, url, pool }
    }

    pub fn settings(&self) -> DatabaseSettings {
        DatabaseSettings {
            url: self.url.clone(),
            max_connections: 8,
            ..DatabaseSettings::default()
        }
    }
}

/// Most databases dropped per test: a backlog is worked off over the
/// next tests instead of stalling one.
const ORPHANS_PER_TEST: usize = 8;

#[derive(diesel::QueryableByName)]
struct Named {
    #[diesel(sql_type = diesel::sql_types::Text)]
    datname: String,
}

/// Drops a few test databases whose creating process no longer runs on
/// this machine (its pid is in the name; `/proc/<pid>` is gone) and that no
/// session uses. Databases named before pids were (`t_<uuid>`) count as
/// orphans too. Best effort: a database another test process drops first,
/// or one that gains a session meanwhile, is simply skipped.
async fn drop_orphans(admin: &mut AsyncPgConnection) {
    let Ok(names) = diesel::sql_query(
        "SELECT datname FROM pg_database d WHERE datname LIKE 't\\_%' AND NOT EXISTS \
         (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)",
    )
    .load::<Named>(admin)
    .await
    else {
        return;
    };
    let orphans = names
        .into_iter()
        .map(|n| n.datname)
        .filter(|name| match orphan_test_name(name) {
            Some(Some(pid)) => !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            Some(None) => true,
            None => false,
        })
        .take(ORPHANS_PER_TEST);
    for name in orphans {
        let _ = diesel::sql_query(format!("DROP DATABASE IF EXISTS \"{name}\""))
            .execute(admin)
            .await;
    }
}

/// Whether `name` is one [`TestDb::create`] makes: `Some(Some(pid))` for
/// `t_<pid>_<32 hex>`, `Some(None)` for the older `t_<32 hex>` (no pid to
/// judge by: an orphan), `None` for anything else (another harness's
/// databases, such as the migration tests' `t_mig_…`, are never touched).
fn orphan_test_name(name: &str) -> Option<Option<u32>> {
    let is_uuid = |s: &str| s.len() == 32 && s.bytes().all(|b| b.is_ascii_hexdigit());
    let rest = name.strip_prefix("t_")?;
    if is_uuid(rest) {
        return Some(None);
    }
    let (pid, uuid) = rest.split_once('_')?;
    let pid = pid.parse().ok().filter(|_| is_uuid(uuid))?;
    Some(Some(pid))
}

/// The template's name carries a digest of the migrations this build
/// embeds, so a changed migration gets a new template instead of a stale one,
/// and a binary built before a migration was added never creates a template
/// under the new migrations' name.
fn template_name() -> String {
    format!("uptime_tpl_{}", uptime_db::pool::MIGRATIONS_DIGEST)
}

/// `url` with its database name replaced by `database`.
fn with_database(url: &str, database: &str) -> String {
    let (base, query) = match url.split_once('?') {
        Some((b, q)) => (b, format!("?{q}")),
        None => (url, String::new()),
    };
    // postgres://user@host:port[/db]
    let after_scheme = base.find("://").map(|i| i + 3).unwrap_or(0);
    let base = match base[after_scheme..].find('/') {
        Some(i) => &base[..after_scheme + i],
        None => base,
    };
    format!("{base}/{database}{query}")
}

async fn exec(conn: &mut AsyncPgConnection, sql: &str) {
    diesel::sql_query(sql)
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[derive(diesel::QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
    diesel::sql_query(sql)
        .get_result::<Count>(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .n
}

#[cfg(test)]
mod tests {
    use super::{orphan_test_name, with_database};

    #[test]
    fn only_this_harness_names_are_judged_and_the_creating_pid_is_read() {
        let uuid = "0123456789abcdef0123456789abcdef";
        assert_eq!(
            orphan_test_name(&format!("t_4242_{uuid}")),
            Some(Some(4242))
        );
        assert_eq!(orphan_test_name(&format!("t_{uuid}")), Some(None));
        assert_eq!(orphan_test_name(&format!("t_mig_{uuid}")), None);
        assert_eq!(orphan_test_name("t_4242_short"), None);
        assert_eq!(orphan_test_name("uptime_tpl_x"), None);
    }

    #[test]
    fn replaces_or_adds_the_database_name() {
        assert_eq!(
            with_database("postgres://u@h:1/postgres", "x"),
            "postgres://u@h:1/x"
        );
        assert_eq!(with_database("postgres://u@h:1", "x"), "postgres://u@h:1/x");
        assert_eq!(
            with_database("postgres://u@h:1/a?sslmode=disable", "x"),
            "postgres://u@h:1/x?sslmode=disable"
        );
    }
}
