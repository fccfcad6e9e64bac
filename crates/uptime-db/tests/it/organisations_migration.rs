//! Migration 000017 on a database with data in it: every user becomes the
//! owner of an organisation with the user's id, every resource keeps its id
//! and moves to that organisation, quotas and the kept counts move with it,
//! and a key issued before still authenticates.

use crate::history::{empty_database, folders, run_migrations_of, subset};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use uptime_db::organisations::Role;
use uptime_db::quotas::{self, Owned};

const ORGANISATIONS: &str = "2026-11-22-000017";

/// A database migrated up to, not including, `version` (a migration folder
/// name's prefix).
async fn migrated_before(version: &str) -> String {
    let url = empty_database().await;
    let before: Vec<String> = folders()
        .into_keys()
        .filter(|name| name.as_str() < version)
        .collect();
    assert!(!before.is_empty());
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let old = subset(&before, |_, _| {});
    run_migrations_of(&url, old.path()).await;
    url
}

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    line: String,
}

async fn lines(conn: &mut AsyncPgConnection, sql: &str) -> Vec<String> {
    diesel::sql_query(sql)
        .load::<Row>(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .into_iter()
        .map(|r| r.line)
        .collect()
}

#[tokio::test]
async fn every_user_becomes_the_owner_of_an_organisation_with_their_id_and_keeps_everything() {
    let url = migrated_before(ORGANISATIONS).await;
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    // Users 1 and 3 (2 was deleted: ids have gaps), each with a key, a
    // contact and monitors (one of 3's paused), 3 with quota overrides and
    // a verification mail logged.
    conn.batch_execute(
        "INSERT INTO users (name) VALUES ('alice'), ('gone'), ('carol'); \
         DELETE FROM users WHERE name = 'gone'; \
         INSERT INTO api_keys (user_id, name, prefix, key_sha256) VALUES \
             (1, 'alice key', 'upt_aaaa', 'digest-of-alice'), \
             (3, 'carol key', 'upt_cccc', 'digest-of-carol'); \
         INSERT INTO alert_contacts (user_id, type, name, value, verified) VALUES \
             (3, 'email', 'ops', 'ops@example.com', true), \
             (1, 'slack', 'chat', 'https://hooks.slack.com/x', true); \
         INSERT INTO monitors (user_id, name, type, target, interval_secs, timeout_secs, \
                               expected_status, confirmation_count, ssl_warn_days, \
                               active, check_load_millis) VALUES \
             (3, 'api', 'http', 'https://e.com/', 60, 10, 200, 1, 30, true, 1000), \
             (1, 'site', 'http', 'https://e.com/', 300, 10, 200, 1, 30, true, 200), \
             (3, 'paused', 'http', 'https://e.com/', 30, 10, 200, 1, 30, false, 2000); \
         INSERT INTO monitor_alert_contacts (monitor_id, contact_id) VALUES (1, 1); \
         INSERT INTO user_quotas (user_id, monitors, api_keys) VALUES (3, 7, 2); \
         INSERT INTO verification_mail_log (user_id, contact_id) VALUES (3, 1);",
    )
    .await
    .unwrap();

    let applied = uptime_db::migrate(&url).await.expect("upgrades");
    assert!(
        applied.iter().any(|v| v.starts_with("20261122000017")),
        "{applied:?}"
    );

    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s %s', id, name, monitor_count, check_load_millis) AS line \
             FROM organisations ORDER BY id"
        )
        .await,
        ["1 alice 1 200", "3 carol 2 1000"],
        "one organisation per user, with the user's id and name and the kept counts"
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s', org_id, user_id, role) AS line FROM memberships \
             ORDER BY org_id"
        )
        .await,
        ["1 1 owner", "3 3 owner"]
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s', id, org_id, name) AS line FROM monitors ORDER BY id"
        )
        .await,
        ["1 3 api", "2 1 site", "3 3 paused"],
        "monitors keep their ids and belong to their user's organisation"
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s', id, org_id, name) AS line FROM alert_contacts \
             ORDER BY id"
        )
        .await,
        ["1 3 ops", "2 1 chat"]
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s', monitor_id, contact_id) AS line FROM monitor_alert_contacts"
        )
        .await,
        ["1 1"]
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s', id, org_id, user_id) AS line FROM api_keys ORDER BY id"
        )
        .await,
        ["1 1 1", "2 3 3"]
    );
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s', org_id, contact_id) AS line FROM verification_mail_log"
        )
        .await,
        ["3 1"]
    );

    // The old key authenticates, as the owner of its user's organisation.
    let carol = uptime_db::api_keys::find_active_by_digest(&mut conn, "digest-of-carol")
        .await
        .unwrap()
        .expect("carol's key still works");
    assert_eq!(
        (
            carol.key.id,
            carol.key.org_id,
            carol.key.user_id,
            carol.role
        ),
        (2, 3, 3, Role::Owner)
    );
    // Every key from before is a full (admin) key of its owner.
    assert_eq!(carol.scope, uptime_db::organisations::Scope::Admin);
    // What it reaches is what its user owned, by the same ids.
    let api = uptime_db::monitors::get(&mut conn, carol.key.org_id, 1)
        .await
        .unwrap();
    assert_eq!(api.map(|m| m.name).as_deref(), Some("api"));
    assert!(uptime_db::monitors::get(&mut conn, carol.key.org_id, 2)
        .await
        .unwrap()
        .is_none());
    assert!(uptime_db::contacts::get(&mut conn, carol.key.org_id, 1)
        .await
        .unwrap()
        .is_some());
    let keys = uptime_db::api_keys::list(&mut conn, 3).await.unwrap();
    assert_eq!(keys.iter().map(|k| k.id).collect::<Vec<_>>(), [2]);

    // Quotas moved with the organisation.
    let usage = quotas::usage(&mut conn, 3).await.unwrap().unwrap();
    assert_eq!(usage.overrides.monitors, Some(7));
    assert_eq!(usage.overrides.api_keys, Some(2));
    assert_eq!(
        (
            usage.monitors,
            usage.check_load_millis,
            usage.alert_contacts,
            usage.api_keys
        ),
        (2, 1000, 1, 1)
    );
    assert_eq!(
        quotas::count(&mut conn, 1, Owned::Monitors).await.unwrap(),
        1
    );

    // The kept counts follow new writes through the new triggers.
    conn.batch_execute(
        "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs, \
                               expected_status, confirmation_count, ssl_warn_days, \
                               check_load_millis) \
         VALUES (1, 'new', 'http', 'https://e.com/', 60, 10, 200, 1, 30, 1000); \
         UPDATE monitors SET active = true WHERE name = 'paused'; \
         DELETE FROM monitors WHERE name = 'api';",
    )
    .await
    .unwrap();
    assert_eq!(
        lines(
            &mut conn,
            "SELECT format('%s %s %s', id, monitor_count, check_load_millis) AS line \
             FROM organisations ORDER BY id"
        )
        .await,
        ["1 2 1200", "3 1 2000"]
    );

    // A user created afterwards gets an organisation of the same id, past
    // every migrated one.
    let dave = uptime_db::users::create(&mut conn, "dave").await.unwrap();
    assert_eq!(dave.id, 4);
    assert_eq!(
        uptime_db::organisations::role_of(&mut conn, 4, 4)
            .await
            .unwrap(),
        Some(Role::Owner)
    );
}
