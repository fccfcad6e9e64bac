//! The runner: a round prunes and reports, and only the holder of the lease
//! runs one.

use crate::fixtures::{connect, days_ago, now, seed};
use diesel::sql_types::{BigInt, Bool};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_db::retention::RETENTION_LOCK;
use uptime_retention::runner::{run_once, run_round, Round};
use uptime_retention::RetentionSettings;
use uptime_testkit::TestDb;

#[derive(diesel::QueryableByName)]
struct Flag {
    #[diesel(sql_type = Bool)]
    ok: bool,
}

async fn try_lock(conn: &mut AsyncPgConnection) -> bool {
    diesel::sql_query("SELECT pg_try_advisory_lock($1) AS ok")
        .bind::<BigInt, _>(RETENTION_LOCK)
        .get_result::<Flag>(conn)
        .await
        .unwrap()
        .ok
}

/// Old rows of every kind a round prunes: 1 delivery with 2 attempts, 1
/// outbox row, 1 verification token, 1 revoked API key.
async fn seed_old_rows(db: &TestDb) {
    let mut conn = connect(db).await;
    let user = seed::user(&mut conn).await;
    let contact = seed::contact(&mut conn, user, Some("d4"), days_ago(60)).await;
    seed::delivery(&mut conn, contact, "failed", days_ago(60), 2).await;
    seed::outbox(&mut conn, days_ago(60), Some(days_ago(60))).await;
    seed::api_key(&mut conn, user, Some(days_ago(60))).await;
}

async fn old_rows_left(db: &TestDb) -> i64 {
    let mut conn = connect(db).await;
    seed::count(&mut conn, "alert_deliveries").await
        + seed::count(&mut conn, "outbox_events").await
        + seed::count(&mut conn, "api_keys").await
        + seed::count(
            &mut conn,
            "alert_contacts WHERE verification_token_sha256 IS NOT NULL",
        )
        .await
}

#[tokio::test]
async fn a_round_prunes_every_table_and_reports_what_it_removed() {
    let db = TestDb::create().await;
    seed_old_rows(&db).await;

    let report = run_once(&db.pool, &RetentionSettings::default(), now())
        .await
        .unwrap()
        .done()
        .expect("nobody else holds the lease");

    assert!(report.succeeded(), "{report:?}");
    let removed: Vec<(&str, u64)> = report
        .pruned
        .by_table()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .collect();
    assert_eq!(
        removed,
        [
            ("alert_deliveries", 1),
            ("alert_delivery_attempts", 2),
            ("outbox_events", 1),
            ("verification_tokens", 1),
            ("api_keys", 1),
        ]
    );
    assert_eq!(old_rows_left(&db).await, 0);
}

#[tokio::test]
async fn while_another_replica_holds_the_lease_a_round_does_nothing() {
    let db = TestDb::create().await;
    seed_old_rows(&db).await;
    // The test's own session plays the other replica, mid-round.
    let mut other = connect(&db).await;
    assert!(try_lock(&mut other).await);

    let round = run_once(&db.pool, &RetentionSettings::default(), now())
        .await
        .unwrap();

    assert!(matches!(round, Round::Skipped), "{round:?}");
    assert_eq!(old_rows_left(&db).await, 4, "nothing was pruned");

    // The holder dies: its session ends and the lease is free, with no expiry
    // to wait out (the server notices the closed socket within moments).
    drop(other);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let report = loop {
        match run_once(&db.pool, &RetentionSettings::default(), now())
            .await
            .unwrap()
        {
            Round::Done(report) => break report,
            Round::Skipped => {
                assert!(
                    tokio::time::Instant::now() < deadline,
                    "the lease stayed taken after its holder's session ended"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    assert!(report.succeeded(), "{report:?}");
    assert_eq!(old_rows_left(&db).await, 0);
}

#[tokio::test]
async fn a_round_lets_the_lease_go_when_it_ends() {
    let db = TestDb::create().await;
    seed_old_rows(&db).await;

    let first = run_once(&db.pool, &RetentionSettings::default(), now())
        .await
        .unwrap();
    assert!(matches!(first, Round::Done(_)), "{first:?}");

    // Another replica may take it right away: no pooled session kept it.
    let mut other = connect(&db).await;
    assert!(try_lock(&mut other).await, "the lease is still held");
    // And while that one holds it, this replica's next round is skipped.
    let second = run_once(&db.pool, &RetentionSettings::default(), now())
        .await
        .unwrap();
    assert!(matches!(second, Round::Skipped), "{second:?}");
}

#[tokio::test]
async fn a_round_stopped_by_shutdown_removes_nothing_more_and_is_no_success() {
    let db = TestDb::create().await;
    seed_old_rows(&db).await;
    let stop = CancellationToken::new();
    stop.cancel();

    let report = run_round(&db.pool, &RetentionSettings::default(), now(), &stop)
        .await
        .unwrap()
        .done()
        .expect("the lease is free");

    assert!(report.interrupted);
    assert!(!report.succeeded());
    assert_eq!(old_rows_left(&db).await, 4);
}

#[tokio::test]
async fn a_round_maintains_the_result_partitions_first() {
    let db = TestDb::create().await;
    // A day far from the real one: its partition can only come from this round.
    let today = chrono::NaiveDate::from_ymd_opt(2030, 1, 10).unwrap();
    let at = today.and_hms_opt(3, 0, 0).unwrap().and_utc();

    let report = run_once(&db.pool, &RetentionSettings::default(), at)
        .await
        .unwrap()
        .done()
        .expect("the lease is free");

    assert!(report.succeeded(), "{report:?}");
    let partitions = report.partitions.expect("partition maintenance ran");
    assert!(partitions.created.contains(&today), "{partitions:?}");
    let mut conn = connect(&db).await;
    assert_eq!(
        seed::count(
            &mut conn,
            "pg_class WHERE relname = 'check_results_p20300110' AND relispartition"
        )
        .await,
        1
    );
}
