//! `check_results` partitions against real PostgreSQL, with explicit dates:
//! maintenance runs for a chosen `today`, far from the real one, so nothing
//! waits for a day to pass.

use chrono::{DateTime, Days, NaiveDate, TimeZone, Utc};
use diesel::sql_types::{BigInt, Text};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_db::recording::{insert_results, NewCheckResult};
use uptime_db::results::partitions::{self as db, partition_name};
use uptime_retention::partitions::{maintain, PartitionReport, AHEAD_DAYS};
use uptime_retention::RetentionSettings;
use uptime_testkit::TestDb;
use uuid::Uuid;

fn d(text: &str) -> NaiveDate {
    text.parse().unwrap()
}

fn at(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text).unwrap().to_utc()
}

fn days(from: &str, to: &str) -> Vec<NaiveDate> {
    d(from).iter_days().take_while(|x| *x <= d(to)).collect()
}

async fn connect(db: &TestDb) -> AsyncPgConnection {
    AsyncPgConnection::establish(&db.url).await.unwrap()
}

async fn run(conn: &mut AsyncPgConnection, today: NaiveDate, results_days: u32) -> PartitionReport {
    let settings = RetentionSettings {
        results_days,
        ..RetentionSettings::default()
    };
    maintain(conn, &settings, today).await.expect("maintenance")
}

/// A scheduled result of `monitor_id` for the slot `due_at`, run at `checked_at`.
fn scheduled(
    check_id: Uuid,
    monitor_id: i64,
    due_at: Option<DateTime<Utc>>,
    checked_at: DateTime<Utc>,
) -> NewCheckResult {
    NewCheckResult {
        check_id,
        monitor_id,
        trigger: if due_at.is_some() {
            "scheduled"
        } else {
            "heartbeat"
        }
        .into(),
        status: "up".into(),
        checked_at,
        due_at,
        latency_ms: Some(12),
        http_status: Some(200),
        error: None,
        ssl_expires_at: None,
        reporter: "test".into(),
        definition_version: Some(1),
    }
}

#[derive(diesel::QueryableByName, Debug, PartialEq, Eq)]
struct Placed {
    #[diesel(sql_type = Text)]
    partition: String,
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// Rows of `check_id`, by the partition that holds them.
async fn placement(conn: &mut AsyncPgConnection, check_id: Uuid) -> Vec<Placed> {
    diesel::sql_query(
        "SELECT tableoid::regclass::text AS partition, count(*) AS n FROM check_results \
         WHERE check_id = $1 GROUP BY 1 ORDER BY 1",
    )
    .bind::<diesel::sql_types::Uuid, _>(check_id)
    .load(conn)
    .await
    .unwrap()
}

fn placed(partition: &str) -> Vec<Placed> {
    vec![Placed {
        partition: partition.into(),
        n: 1,
    }]
}

#[tokio::test]
async fn partitions_are_created_ahead_and_dropped_past_retention() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;

    // The template's partitions are around the real today; 2031 is far past
    // them, so the first round drops them all and makes its own.
    let report = run(&mut conn, d("2031-03-10"), 90).await;
    assert_eq!(report.created, days("2031-03-09", "2031-03-17"));
    assert!(!report.dropped.is_empty(), "the template's partitions go");
    assert!(report.dropped.iter().all(|day| *day < d("2031-03-09")));
    let layout = db::layout(&mut conn).await.unwrap();
    assert_eq!(layout.days, days("2031-03-09", "2031-03-17"));
    assert!(layout.has_default);

    // A result on each of two days.
    let (first, second) = (Uuid::new_v4(), Uuid::new_v4());
    let rows = [
        scheduled(
            first,
            1,
            Some(at("2031-03-09T12:00:00Z")),
            at("2031-03-09T12:00:01Z"),
        ),
        scheduled(
            second,
            1,
            Some(at("2031-03-10T12:00:00Z")),
            at("2031-03-10T12:00:01Z"),
        ),
    ];
    assert_eq!(insert_results(&mut conn, &rows).await.unwrap().len(), 2);
    assert_eq!(
        placement(&mut conn, first).await,
        placed("check_results_p20310309")
    );
    assert_eq!(
        placement(&mut conn, second).await,
        placed("check_results_p20310310")
    );

    // Run again the same day: nothing to do.
    let again = run(&mut conn, d("2031-03-10"), 90).await;
    assert_eq!(again, PartitionReport::default());

    // 90 days on, 2031-03-09 is wholly older than 90 days and goes with its
    // results; 2031-03-10 is kept (its results are not all 90 days old yet).
    let later = d("2031-03-10") + Days::new(90);
    let report = run(&mut conn, later, 90).await;
    assert_eq!(report.dropped, [d("2031-03-09")]);
    assert_eq!(
        report.created,
        days("2031-06-07", "2031-06-15"),
        "yesterday to {AHEAD_DAYS} days ahead"
    );
    assert!(placement(&mut conn, first).await.is_empty());
    assert_eq!(
        placement(&mut conn, second).await,
        placed("check_results_p20310310")
    );

    // A shorter retention drops more; results_days is the setting.
    let report = run(&mut conn, later, 30).await;
    assert_eq!(report.dropped, days("2031-03-10", "2031-03-17"));
    assert!(placement(&mut conn, second).await.is_empty());
}

#[tokio::test]
async fn a_redelivered_and_a_rerun_result_are_each_stored_once_across_midnight() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    run(&mut conn, d("2031-03-10"), 90).await;

    // The slot is just before midnight; the check ran just after it, and was
    // run again after its checker died (same check_id, a later checked_at).
    let check_id = Uuid::new_v4();
    let slot = at("2031-03-09T23:59:50Z");
    let first_run = scheduled(check_id, 1, Some(slot), at("2031-03-10T00:00:02Z"));
    let rerun = NewCheckResult {
        checked_at: at("2031-03-10T00:00:40Z"),
        status: "down".into(),
        ..first_run.clone()
    };
    assert_eq!(
        insert_results(&mut conn, std::slice::from_ref(&first_run))
            .await
            .unwrap(),
        [check_id]
    );
    assert!(
        insert_results(&mut conn, &[first_run])
            .await
            .unwrap()
            .is_empty(),
        "redelivered"
    );
    assert!(
        insert_results(&mut conn, &[rerun])
            .await
            .unwrap()
            .is_empty(),
        "re-run"
    );
    assert_eq!(
        placement(&mut conn, check_id).await,
        placed("check_results_p20310309")
    );

    // A ping has no due time: published once with its checked_at, which a
    // redelivery carries unchanged.
    let ping_id = Uuid::new_v4();
    let ping = scheduled(ping_id, 1, None, at("2031-03-09T23:59:59.999Z"));
    assert_eq!(
        insert_results(&mut conn, std::slice::from_ref(&ping))
            .await
            .unwrap(),
        [ping_id]
    );
    assert!(insert_results(&mut conn, &[ping]).await.unwrap().is_empty());
    assert_eq!(
        placement(&mut conn, ping_id).await,
        placed("check_results_p20310309")
    );

    // The same holds where no day partition exists (the default partition).
    let far = Uuid::new_v4();
    let ahead = scheduled(
        far,
        1,
        Some(at("2031-04-30T23:59:59Z")),
        at("2031-05-01T00:00:01Z"),
    );
    let ahead_rerun = NewCheckResult {
        checked_at: at("2031-05-01T00:00:30Z"),
        ..ahead.clone()
    };
    assert_eq!(insert_results(&mut conn, &[ahead]).await.unwrap(), [far]);
    assert!(insert_results(&mut conn, &[ahead_rerun])
        .await
        .unwrap()
        .is_empty());
    assert_eq!(
        placement(&mut conn, far).await,
        placed("check_results_default")
    );
}

#[tokio::test]
async fn results_no_partition_covers_are_kept_then_moved_or_expired() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    run(&mut conn, d("2031-03-10"), 90).await;

    // Too far ahead (a checker with a wrong clock), in a past gap within
    // retention, and past retention: all accepted, into the default partition.
    let (ahead, gap, old) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
    let rows = [
        scheduled(
            ahead,
            1,
            Some(at("2031-05-01T08:00:00Z")),
            at("2031-05-01T08:00:00Z"),
        ),
        scheduled(
            gap,
            1,
            Some(at("2031-02-01T08:00:00Z")),
            at("2031-02-01T08:00:00Z"),
        ),
        scheduled(
            old,
            1,
            Some(at("2030-01-01T08:00:00Z")),
            at("2030-01-01T08:00:00Z"),
        ),
    ];
    assert_eq!(insert_results(&mut conn, &rows).await.unwrap().len(), 3);
    for id in [ahead, gap, old] {
        assert_eq!(
            placement(&mut conn, id).await,
            placed("check_results_default")
        );
    }

    // The next round gives the gap its day, deletes what is past retention and
    // leaves the result ahead where it is.
    let report = run(&mut conn, d("2031-03-10"), 90).await;
    assert_eq!(report.created, [d("2031-02-01")]);
    assert_eq!(
        (
            report.moved_from_default,
            report.expired_from_default,
            report.left_in_default
        ),
        (1, 1, 1)
    );
    assert_eq!(
        placement(&mut conn, gap).await,
        placed("check_results_p20310201")
    );
    assert!(placement(&mut conn, old).await.is_empty());
    assert_eq!(
        placement(&mut conn, ahead).await,
        placed("check_results_default")
    );

    // Once its day is within a week, it moves into its partition.
    let report = run(&mut conn, d("2031-04-25"), 90).await;
    assert!(report.created.contains(&d("2031-05-01")), "{report:?}");
    assert_eq!((report.moved_from_default, report.left_in_default), (1, 0));
    assert_eq!(
        placement(&mut conn, ahead).await,
        placed(&partition_name(d("2031-05-01")))
    );
    // Still one row per check_id in its new home.
    let again = scheduled(
        ahead,
        1,
        Some(at("2031-05-01T08:00:00Z")),
        at("2031-05-01T08:00:09Z"),
    );
    assert!(insert_results(&mut conn, &[again])
        .await
        .unwrap()
        .is_empty());
}

#[tokio::test]
async fn a_round_waits_at_most_a_second_for_a_lock_and_the_next_one_catches_up() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    run(&mut conn, d("2031-03-10"), 90).await;

    // A long transaction reading check_results (a report, say) holds a lock
    // that dropping a partition must wait for.
    let mut reader = connect(&db).await;
    diesel::sql_query("BEGIN")
        .execute(&mut reader)
        .await
        .unwrap();
    diesel::sql_query("SELECT count(*) FROM check_results")
        .execute(&mut reader)
        .await
        .unwrap();
    let settings = RetentionSettings::default();
    let later = d("2031-03-10") + Days::new(91);
    // A deadline, not a timing: without a lock timeout the round would wait
    // for the reader for as long as it runs (here, for ever).
    let err = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        maintain(&mut conn, &settings, later),
    )
    .await
    .expect("the round ends while the reader still holds its lock")
    .expect_err("a step gives up instead of queueing every writer behind it");
    assert!(err.to_string().contains("lock timeout"), "{err}");

    diesel::sql_query("COMMIT")
        .execute(&mut reader)
        .await
        .unwrap();
    let report = maintain(&mut conn, &settings, later).await.unwrap();
    assert!(report.dropped.contains(&d("2031-03-09")), "{report:?}");
    let layout = db::layout(&mut conn).await.unwrap();
    assert!(
        layout.days.iter().all(|day| *day >= d("2031-03-10")),
        "{layout:?}"
    );
}

#[test]
fn dates_in_these_tests_are_far_from_the_template() {
    // The template's partitions are made for the real today; these tests
    // assume their dates never meet them.
    assert!(Utc::now() < Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap());
}
