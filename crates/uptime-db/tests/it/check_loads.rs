//! Each user's check load (what the checks-per-minute budget is compared
//! with) is kept by the database on every insert, update and delete, however
//! many rows a statement touches: it must always equal the sum of
//! `check_load_millis` over the user's active monitors. And migration 000014
//! fills it in for the monitors that were there before it.

use crate::history::{empty_database, folders, run_migrations_of, subset};
use diesel::prelude::*;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl, SimpleAsyncConnection};
use uptime_contracts::MonitorKind;
use uptime_db::models::NewMonitor;
use uptime_db::quotas::{self, check_load_millis};
use uptime_db::schema::monitors;
use uptime_testkit::fixtures::{insert_monitor, monitor_definition};
use uptime_testkit::TestDb;

/// `(kept, recomputed)`: `organisations.check_load_millis` beside the sum over the
/// user's active monitors.
async fn kept_and_recomputed(conn: &mut AsyncPgConnection, org_id: i64) -> (i64, i64) {
    let kept = quotas::usage(conn, org_id)
        .await
        .unwrap()
        .map_or(0, |u| u.check_load_millis);
    let recomputed: Option<i64> = monitors::table
        .filter(monitors::org_id.eq(org_id))
        .filter(monitors::active)
        .select(diesel::dsl::sum(monitors::check_load_millis))
        .first(conn)
        .await
        .unwrap();
    (kept, recomputed.unwrap_or(0))
}

async fn assert_kept(conn: &mut AsyncPgConnection, users: &[i64], after: &str) {
    for &user in users {
        let (kept, recomputed) = kept_and_recomputed(conn, user).await;
        assert_eq!(kept, recomputed, "user {user}, after {after}");
    }
}

#[test]
fn a_monitor_costs_its_regions_checks_per_interval_rounded_up_to_a_thousandth() {
    assert_eq!(check_load_millis(MonitorKind::Http, 60, 1), 1000);
    assert_eq!(check_load_millis(MonitorKind::Http, 300, 1), 200);
    assert_eq!(check_load_millis(MonitorKind::Tcp, 10, 16), 96_000);
    // 3 × 60 / 70 = 2.571428…
    assert_eq!(check_load_millis(MonitorKind::Dns, 70, 3), 2572);
    assert_eq!(check_load_millis(MonitorKind::Icmp, 86_400, 1), 1);
    assert_eq!(check_load_millis(MonitorKind::Heartbeat, 10, 1), 0);
}

#[tokio::test]
async fn the_check_load_follows_every_insert_update_and_delete() {
    let db = TestDb::create().await;
    let mut pooled = uptime_db::pool::conn(&db.pool).await.unwrap();
    let conn: &mut AsyncPgConnection = &mut pooled;
    let alice = uptime_db::users::create(conn, "alice").await.unwrap().id;
    let bob = uptime_db::users::create(conn, "bob").await.unwrap().id;
    let users = [alice, bob];

    let one = insert_monitor(conn, alice, monitor_definition(MonitorKind::Http)).await;
    assert_eq!(kept_and_recomputed(conn, alice).await, (1000, 1000));

    // 1,500 in one call (more than one INSERT statement inside), of
    // different loads, every third paused: paused ones cost nothing.
    let news: Vec<NewMonitor> = (0..1500)
        .map(|i| {
            let mut definition = monitor_definition(MonitorKind::Http);
            definition.check_load_millis = 1 + i % 7;
            definition.active = i % 3 != 0;
            NewMonitor {
                org_id: if i % 5 == 0 { bob } else { alice },
                definition,
            }
        })
        .collect();
    let links = vec![Vec::new(); news.len()];
    uptime_db::monitors::create_many(conn, news, &links)
        .await
        .unwrap();
    assert_kept(conn, &users, "a bulk insert").await;

    // Each statement below changes many rows of both users at once.
    let updates = [
        (
            "pausing some",
            "UPDATE monitors SET active = false WHERE id % 4 = 0",
        ),
        (
            "changing the load of some, paused or not",
            "UPDATE monitors SET check_load_millis = check_load_millis * 2 + 1 WHERE id % 3 = 1",
        ),
        (
            "resuming some while changing their load",
            "UPDATE monitors SET active = true, check_load_millis = 50 WHERE id % 8 = 0",
        ),
        (
            "a runtime-state update (the recorder's)",
            "UPDATE monitors SET status = 'down', consecutive_failures = 1",
        ),
        (
            "writing the same values again",
            "UPDATE monitors SET active = active, check_load_millis = check_load_millis",
        ),
    ];
    for (what, sql) in updates {
        diesel::sql_query(sql).execute(conn).await.unwrap();
        assert_kept(conn, &users, what).await;
    }

    diesel::delete(monitors::table.filter(monitors::id.eq(one.id)))
        .execute(conn)
        .await
        .unwrap();
    // Some of each user's, active and paused.
    diesel::sql_query("DELETE FROM monitors WHERE id % 10 < 3")
        .execute(conn)
        .await
        .unwrap();
    assert_kept(conn, &users, "deletes").await;
    let (kept, _) = kept_and_recomputed(conn, alice).await;
    assert!(kept > 0, "something is left to count");

    // An organisation's deletion cascades to the monitors; the load goes
    // with the row.
    diesel::delete(uptime_db::schema::organisations::table.find(alice))
        .execute(conn)
        .await
        .unwrap();
    assert_kept(conn, &users, "deleting an organisation").await;
}

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Load {
    #[diesel(sql_type = diesel::sql_types::Text)]
    name: String,
    #[diesel(sql_type = diesel::sql_types::Int4)]
    check_load_millis: i32,
}

#[tokio::test]
async fn migration_000014_fills_in_the_load_of_existing_monitors() {
    let url = empty_database().await;
    let before: Vec<String> = folders()
        .into_keys()
        .filter(|name| name.as_str() < "2026-11-22-000014")
        .collect();
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    let old = subset(&before, |_, _| {});
    run_migrations_of(&url, old.path()).await;
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();
    conn.batch_execute(
        "INSERT INTO users (id, name) VALUES (1, 'alice'), (2, 'bob'); \
         INSERT INTO monitors (user_id, name, type, target, interval_secs, timeout_secs, \
                               expected_status, confirmation_count, ssl_warn_days, \
                               heartbeat_token, active, regions) VALUES \
         (1, 'default regions', 'http', 'https://e.com/', 60, 10, 200, 1, 30, NULL, true, NULL), \
         (1, 'three regions', 'tcp', 'e.com:443', 70, 10, 200, 1, 30, NULL, true, '{ap,eu,us}'), \
         (1, 'paused', 'http', 'https://e.com/', 10, 5, 200, 1, 30, NULL, false, NULL), \
         (1, 'heartbeat', 'heartbeat', NULL, 10, 5, 200, 1, 30, 'hb_x', true, NULL), \
         (2, 'daily', 'icmp', 'e.com', 86400, 10, 200, 1, 30, NULL, true, NULL)",
    )
    .await
    .unwrap();

    uptime_db::migrate(&url).await.expect("upgrades");
    let loads: Vec<Load> =
        diesel::sql_query("SELECT name, check_load_millis FROM monitors ORDER BY id")
            .load(&mut conn)
            .await
            .unwrap();
    let loads: Vec<(&str, i32)> = loads
        .iter()
        .map(|l| (l.name.as_str(), l.check_load_millis))
        .collect();
    assert_eq!(
        loads,
        [
            // NULL regions count as one: the database cannot know the
            // deployment's default regions.
            ("default regions", 1000),
            ("three regions", 2572),
            // Paused monitors keep their cost (resuming adds it back).
            ("paused", 6000),
            ("heartbeat", 0),
            ("daily", 1),
        ]
    );
    assert_eq!(kept_and_recomputed(&mut conn, 1).await, (3572, 3572));
    assert_eq!(kept_and_recomputed(&mut conn, 2).await, (1, 1));
}
