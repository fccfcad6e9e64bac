//! Migration 000008 turns an existing, unpartitioned `check_results` with
//! rows in it into the table partitioned by day: every row survives with its
//! id, lands in the partition of its day, ids keep growing from the same
//! sequence and one row per `check_id` still holds.

use crate::history::{empty_database, folders, run_migrations_of, subset};
use chrono::{DateTime, Days, TimeDelta, Utc};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel::QueryableByName;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_db::recording::{insert_results, NewCheckResult};
use uptime_db::results::partitions::{partition_name, start_of, DEFAULT_PARTITION};
use uuid::Uuid;

const CONVERSION: &str = "2026-11-22-000008_partitioned_results";

/// Copies of the migrations that sort before `CONVERSION`: a database as it
/// was before this version.
fn migrations_before_conversion() -> tempfile::TempDir {
    let names: Vec<String> = folders()
        .into_keys()
        .filter(|name| name.as_str() < CONVERSION)
        .collect();
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    subset(&names, |_, _| {})
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// What a row says, as text, to compare before and after.
#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Row {
    #[diesel(sql_type = Text)]
    row: String,
}

const ROWS: &str = "SELECT format('%s %s %s %s %s %s %s %s %s %s', id, check_id, monitor_id, \
     trigger, status, checked_at, due_at, reporter, recorded_at, definition_version) AS row \
     FROM check_results ORDER BY id";

#[derive(QueryableByName, Debug, PartialEq, Eq)]
struct Placed {
    #[diesel(sql_type = SqlUuid)]
    check_id: Uuid,
    #[diesel(sql_type = Text)]
    partition: String,
    #[diesel(sql_type = Timestamptz)]
    slot_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    due_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Timestamptz)]
    checked_at: DateTime<Utc>,
}

async fn insert_old_row(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    due_at: Option<DateTime<Utc>>,
    checked_at: DateTime<Utc>,
    version: Option<i64>,
) -> Uuid {
    let check_id = Uuid::new_v4();
    diesel::sql_query(
        "INSERT INTO check_results (check_id, monitor_id, trigger, status, checked_at, due_at, \
             latency_ms, http_status, reporter, definition_version) \
         VALUES ($1, $2, CASE WHEN $3::timestamptz IS NULL THEN 'heartbeat' ELSE 'scheduled' END, \
             'up', $4, $3, 15, 200, 'checker-1', $5)",
    )
    .bind::<SqlUuid, _>(check_id)
    .bind::<BigInt, _>(monitor_id)
    .bind::<Nullable<Timestamptz>, _>(due_at)
    .bind::<Timestamptz, _>(checked_at)
    .bind::<Nullable<BigInt>, _>(version)
    .execute(conn)
    .await
    .unwrap();
    check_id
}

#[tokio::test]
async fn converting_a_table_with_rows_keeps_every_row_in_its_days_partition() {
    let url = empty_database().await;
    let old = migrations_before_conversion();
    run_migrations_of(&url, old.path()).await;
    let mut conn = AsyncPgConnection::establish(&url).await.unwrap();

    diesel::sql_query("INSERT INTO users (name) VALUES ('owner')")
        .execute(&mut conn)
        .await
        .unwrap();
    let monitors: Vec<Id> = diesel::sql_query(
        "INSERT INTO monitors (user_id, name, type, target, interval_secs, timeout_secs, \
             expected_status, confirmation_count, ssl_warn_days) \
         SELECT 1, 'm' || g, 'http', 'https://example.com', 60, 5, 200, 1, 14 \
         FROM generate_series(1, 2) AS g RETURNING id",
    )
    .load(&mut conn)
    .await
    .unwrap();
    let (a, b) = (monitors[0].id, monitors[1].id);

    let today = start_of(Utc::now().date_naive());
    let day = |n: i64| today + TimeDelta::days(n);
    let long_ago = insert_old_row(&mut conn, a, Some(day(-40)), day(-40), Some(1)).await;
    // The slot just before midnight, run just after it: slotted the day before.
    let at_midnight = insert_old_row(
        &mut conn,
        a,
        Some(day(0) - TimeDelta::seconds(10)),
        day(0) + TimeDelta::seconds(2),
        Some(2),
    )
    .await;
    // A ping (no due time), from before definition versions (NULL).
    let ping = insert_old_row(&mut conn, b, None, day(-2) + TimeDelta::hours(5), None).await;
    // A checker whose clock was a month ahead.
    let ahead = insert_old_row(&mut conn, b, Some(day(30)), day(30), Some(1)).await;
    // More rows, so the copy is not a handful.
    diesel::sql_query(
        "INSERT INTO check_results (check_id, monitor_id, trigger, status, checked_at, due_at, \
             reporter, definition_version) \
         SELECT gen_random_uuid(), $1, 'scheduled', 'down', s + interval '1 second', s, \
             'checker-2', 1 \
         FROM generate_series(now() - interval '3 days', now(), interval '1 minute') AS s",
    )
    .bind::<BigInt, _>(a)
    .execute(&mut conn)
    .await
    .unwrap();

    let before: Vec<Row> = diesel::sql_query(ROWS).load(&mut conn).await.unwrap();
    let last_id: Id = diesel::sql_query("SELECT max(id) AS id FROM check_results")
        .get_result(&mut conn)
        .await
        .unwrap();

    let applied = uptime_db::migrate(&url).await.expect("the conversion runs");
    assert!(applied.iter().any(|v| v == "20261122000008"), "{applied:?}");

    // Every row, unchanged.
    let after: Vec<Row> = diesel::sql_query(ROWS).load(&mut conn).await.unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after, before);

    // Each in the partition of its slot's UTC day; the one a month ahead in
    // the default partition (partitions exist up to a week ahead).
    let placed: Vec<Placed> = diesel::sql_query(
        "SELECT check_id, tableoid::regclass::text AS partition, slot_at, due_at, checked_at \
         FROM check_results",
    )
    .load(&mut conn)
    .await
    .unwrap();
    for row in &placed {
        assert_eq!(row.slot_at, row.due_at.unwrap_or(row.checked_at), "{row:?}");
        let expected = if row.check_id == ahead {
            DEFAULT_PARTITION.to_string()
        } else {
            partition_name(row.slot_at.date_naive())
        };
        assert_eq!(row.partition, expected, "{row:?}");
    }
    let partition_of = |id: Uuid| {
        placed
            .iter()
            .find(|r| r.check_id == id)
            .map(|r| r.partition.clone())
            .unwrap()
    };
    let yesterday = today.date_naive() - Days::new(1);
    assert_eq!(partition_of(at_midnight), partition_name(yesterday));
    assert_eq!(
        partition_of(long_ago),
        partition_name(day(-40).date_naive())
    );
    assert_eq!(partition_of(ping), partition_name(day(-2).date_naive()));

    // Ids keep growing from the same sequence, and a check_id stays single:
    // recording the long-ago result again stores nothing.
    let fresh = NewCheckResult {
        check_id: Uuid::new_v4(),
        monitor_id: a,
        trigger: "scheduled".into(),
        status: "up".into(),
        checked_at: Utc::now(),
        due_at: Some(Utc::now()),
        latency_ms: None,
        http_status: None,
        error: None,
        ssl_expires_at: None,
        reporter: "checker-3".into(),
        definition_version: Some(2),
    };
    let again = NewCheckResult {
        check_id: long_ago,
        due_at: Some(day(-40)),
        ..fresh.clone()
    };
    let stored = insert_results(&mut conn, &[fresh.clone(), again])
        .await
        .unwrap();
    assert_eq!(stored, [fresh.check_id]);
    let new_id: Id = diesel::sql_query("SELECT id FROM check_results WHERE check_id = $1")
        .bind::<SqlUuid, _>(fresh.check_id)
        .get_result(&mut conn)
        .await
        .unwrap();
    assert!(new_id.id > last_id.id, "{} after {}", new_id.id, last_id.id);

    // No cascade from monitors any more: deleting one leaves its results to
    // expire with their partitions.
    diesel::sql_query("DELETE FROM monitors WHERE id = $1")
        .bind::<BigInt, _>(a)
        .execute(&mut conn)
        .await
        .unwrap();
    let left: Id =
        diesel::sql_query("SELECT count(*) AS id FROM check_results WHERE monitor_id = $1")
            .bind::<BigInt, _>(a)
            .get_result(&mut conn)
            .await
            .unwrap();
    assert!(left.id > 4000, "{}", left.id);
}
