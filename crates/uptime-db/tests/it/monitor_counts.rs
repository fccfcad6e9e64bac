//! Each user's monitor count (what the monitor quota is compared with) is
//! kept by the database on every insert and delete, however they happen:
//! one at a time, a bulk create of many, a delete of some, or the cascade
//! when a user goes. It must always equal counting the rows.

use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use uptime_contracts::MonitorKind;
use uptime_db::models::NewMonitor;
use uptime_db::quotas::{self, Owned};
use uptime_db::schema::monitors;
use uptime_db::PooledConn;
use uptime_testkit::fixtures::{insert_monitor, monitor_definition};
use uptime_testkit::TestDb;

async fn counted_and_stored(conn: &mut PooledConn, org_id: i64) -> (i64, i64) {
    let stored: i64 = monitors::table
        .filter(monitors::org_id.eq(org_id))
        .count()
        .get_result(&mut **conn)
        .await
        .unwrap();
    let counted = quotas::count(conn, org_id, Owned::Monitors).await.unwrap();
    (counted, stored)
}

#[tokio::test]
async fn the_monitor_count_follows_every_insert_and_delete() {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let alice = uptime_db::users::create(&mut conn, "alice")
        .await
        .unwrap()
        .id;
    let bob = uptime_db::users::create(&mut conn, "bob").await.unwrap().id;

    let one = insert_monitor(&mut conn, alice, monitor_definition(MonitorKind::Http)).await;
    assert_eq!(counted_and_stored(&mut conn, alice).await, (1, 1));

    // 1,500 in one call: more than one INSERT statement inside.
    let news: Vec<NewMonitor> = (0..1500)
        .map(|_| NewMonitor {
            org_id: alice,
            definition: monitor_definition(MonitorKind::Http),
        })
        .collect();
    let links = vec![Vec::new(); news.len()];
    uptime_db::monitors::create_many(&mut conn, news, &links)
        .await
        .unwrap();
    insert_monitor(&mut conn, bob, monitor_definition(MonitorKind::Http)).await;
    assert_eq!(counted_and_stored(&mut conn, alice).await, (1501, 1501));
    assert_eq!(counted_and_stored(&mut conn, bob).await, (1, 1));

    diesel::delete(monitors::table.filter(monitors::id.eq(one.id)))
        .execute(&mut *conn)
        .await
        .unwrap();
    // Deleting many of two users at once moves each user's own count.
    let some: Vec<i64> = monitors::table
        .select(monitors::id)
        .order(monitors::id.desc())
        .limit(101)
        .load(&mut *conn)
        .await
        .unwrap();
    diesel::delete(monitors::table.filter(monitors::id.eq_any(&some)))
        .execute(&mut *conn)
        .await
        .unwrap();
    assert_eq!(counted_and_stored(&mut conn, alice).await, (1400, 1400));
    assert_eq!(counted_and_stored(&mut conn, bob).await, (0, 0));

    // An organisation's deletion cascades to the monitors; the count goes
    // with the row.
    diesel::delete(uptime_db::schema::organisations::table.find(alice))
        .execute(&mut *conn)
        .await
        .unwrap();
    assert_eq!(counted_and_stored(&mut conn, alice).await, (0, 0));
}
