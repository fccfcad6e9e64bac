//! Results published while PostgreSQL is down wait in JetStream: the
//! recorder hands them back with a delay (never dead-letters them) and
//! stores each once the database answers again.

use crate::common::*;
use chrono::Utc;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_contracts::{streams, CheckOutcome};

/// Refuses (or allows again) every new connection to the test's database and
/// ends the open ones: the database is down as far as the recorder can tell.
async fn set_database_up(h: &Harness, up: bool) {
    let admin_url = std::env::var("UPTIME_TEST_DATABASE_URL").unwrap();
    let mut admin = AsyncPgConnection::establish(&admin_url).await.unwrap();
    let name = &h.env.db.name;
    diesel::sql_query(format!("ALTER DATABASE \"{name}\" ALLOW_CONNECTIONS {up}"))
        .execute(&mut admin)
        .await
        .unwrap();
    if !up {
        diesel::sql_query(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}'"
        ))
        .execute(&mut admin)
        .await
        .unwrap();
    }
}

#[tokio::test]
async fn a_result_published_while_the_database_is_down_is_stored_once_it_is_back() {
    let mut h = Harness::new().await;
    let id = h.monitor(|_| {}).await;
    h.start_recorder().await;
    let first = result(id, Utc::now(), CheckOutcome::Pass);
    h.record(std::slice::from_ref(&first)).await;

    set_database_up(&h, false).await;
    let during = result(id, Utc::now(), CheckOutcome::Fail);
    h.publish(&during).await;
    // Taken, not written, handed back: at least one redelivery.
    let hr = &h;
    eventually("the result was handed back for a retry", || async move {
        hr.recorder_consumer().await.num_redelivered >= 1
    })
    .await;

    set_database_up(&h, true).await;
    h.wait_drained().await;
    let stored = h.results_of(id).await;
    assert_eq!(stored.len(), 2, "{stored:?}");
    let mut dead = h.js.get_stream(streams::DEAD_STREAM).await.unwrap();
    assert_eq!(
        dead.info().await.unwrap().state.messages,
        0,
        "nothing dead-lettered"
    );
    h.stop_recorder().await;
}
