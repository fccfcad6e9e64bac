//! A monitor's type and status go through PostgreSQL as the contracts' enums
//! and are stored as exactly the strings the columns' CHECK constraints
//! admit; a string that is none of them reads as a clear error, not a panic
//! or a guess. And the one row-to-spec function gives the same spec from
//! either row type the services read.

use diesel::sql_types::{BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uptime_contracts::{
    BasicAuth, CheckOptions, CheckSpec, HttpMethod, HttpRequest, KeywordType, MonitorKind,
    MonitorStatus,
};
use uptime_db::models::{MonitorDefinition, NewMonitor};
use uptime_db::monitors::{self, DefinitionChange};
use uptime_db::{DbError, PooledConn};
use uptime_testkit::TestDb;

fn definition(kind: MonitorKind) -> MonitorDefinition {
    MonitorDefinition {
        name: "site".into(),
        kind,
        target: Some("https://example.com/health".into()),
        interval_secs: 60,
        timeout_secs: 7,
        keyword: (kind == MonitorKind::Keyword).then(|| "ok".into()),
        keyword_type: (kind == MonitorKind::Keyword).then(|| "not_contains".into()),
        expected_status: 204,
        confirmation_count: 1,
        ssl_warn_days: 30,
        latency_warn_ms: None,
        heartbeat_token: (kind == MonitorKind::Heartbeat)
            .then(|| format!("hb_{}", uuid::Uuid::new_v4().simple())),
        active: true,
        check_options: None,
        http_password_sealed: None,
        heartbeat_schedule: None,
        heartbeat_timezone: None,
        regions: None,
        quorum: None,
        check_load_millis: 0,
    }
}

async fn setup() -> (TestDb, PooledConn, i64) {
    let db = TestDb::create().await;
    let mut conn = uptime_db::pool::conn(&db.pool).await.unwrap();
    let user = uptime_db::users::create(&mut conn, "columns")
        .await
        .unwrap()
        .id;
    (db, conn, user)
}

#[derive(QueryableByName)]
struct Stored {
    #[diesel(sql_type = Text)]
    kind: String,
    #[diesel(sql_type = Text)]
    status: String,
}

/// The raw strings in the row.
async fn stored(conn: &mut AsyncPgConnection, id: i64) -> (String, String) {
    let row: Stored = diesel::sql_query("SELECT type AS kind, status FROM monitors WHERE id = $1")
        .bind::<BigInt, _>(id)
        .get_result(conn)
        .await
        .unwrap();
    (row.kind, row.status)
}

async fn set_column(conn: &mut AsyncPgConnection, id: i64, column: &str, value: &str) {
    diesel::sql_query(format!("UPDATE monitors SET {column} = $1 WHERE id = $2"))
        .bind::<Text, _>(value)
        .bind::<BigInt, _>(id)
        .execute(conn)
        .await
        .unwrap();
}

#[tokio::test]
async fn kinds_and_statuses_round_trip_as_the_same_strings() {
    let (_db, mut conn, user) = setup().await;
    for kind in [
        MonitorKind::Http,
        MonitorKind::Keyword,
        MonitorKind::Heartbeat,
    ] {
        let new = NewMonitor {
            org_id: user,
            definition: definition(kind),
        };
        let created = monitors::create(&mut conn, new).await.unwrap();
        assert_eq!(created.kind, kind);
        assert_eq!(created.status, MonitorStatus::Pending);
        assert_eq!(
            stored(&mut conn, created.id).await,
            (kind.as_str().to_string(), "pending".to_string())
        );

        for status in [
            MonitorStatus::Up,
            MonitorStatus::Degraded,
            MonitorStatus::Down,
            MonitorStatus::Pending,
        ] {
            set_column(&mut conn, created.id, "status", status.as_str()).await;
            let read = monitors::get(&mut conn, user, created.id)
                .await
                .unwrap()
                .unwrap();
            assert_eq!((read.kind, read.status), (kind, status));
        }
    }
}

#[tokio::test]
async fn a_definition_written_back_keeps_its_strings_and_a_reset_writes_pending() {
    let (_db, mut conn, user) = setup().await;
    let new = NewMonitor {
        org_id: user,
        definition: definition(MonitorKind::Http),
    };
    let created = monitors::create(&mut conn, new).await.unwrap();
    set_column(&mut conn, created.id, "status", "down").await;

    let row = monitors::update_definition(
        &mut conn,
        created.id,
        definition(MonitorKind::Keyword),
        DefinitionChange {
            check_changed: true,
            reset_runtime_at: Some(chrono::Utc::now()),
        },
    )
    .await
    .unwrap();
    assert_eq!(
        (row.kind, row.status),
        (MonitorKind::Keyword, MonitorStatus::Pending)
    );
    assert_eq!(
        stored(&mut conn, created.id).await,
        ("keyword".to_string(), "pending".to_string())
    );
}

/// The error a read of the row gives, as text.
fn query_error(result: Result<impl std::fmt::Debug, DbError>) -> String {
    match result {
        Err(error @ DbError::Query(diesel::result::Error::DeserializationError(_))) => {
            error.to_string()
        }
        other => panic!("expected a deserialisation error, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unknown_string_in_a_column_is_a_clear_error() {
    let (_db, mut conn, user) = setup().await;
    let new = NewMonitor {
        org_id: user,
        definition: definition(MonitorKind::Http),
    };
    let id = monitors::create(&mut conn, new).await.unwrap().id;
    // Only a row the constraints would refuse can hold one.
    for constraint in ["monitors_type_check", "monitors_status_check"] {
        diesel::sql_query(format!("ALTER TABLE monitors DROP CONSTRAINT {constraint}"))
            .execute(&mut conn)
            .await
            .unwrap();
    }

    set_column(&mut conn, id, "type", "ftp").await;
    let error = query_error(monitors::get(&mut conn, user, id).await);
    assert!(
        error
            .contains(r#"monitors.type holds "ftp", which is not one of http, keyword, heartbeat"#),
        "{error}"
    );
    // The scheduler's reads of the column fail the same way.
    let error = query_error(uptime_db::schedule::active_check_configs(&mut conn, &[id]).await);
    assert!(error.contains(r#"monitors.type holds "ftp""#), "{error}");
    let error = query_error(uptime_db::schedule::active_timings_by_ids(&mut conn, &[id]).await);
    assert!(error.contains(r#"monitors.type holds "ftp""#), "{error}");

    set_column(&mut conn, id, "type", "http").await;
    set_column(&mut conn, id, "status", "UP").await;
    let error = query_error(monitors::get(&mut conn, user, id).await);
    assert!(
        error.contains(
            r#"monitors.status holds "UP", which is not one of pending, up, degraded, down"#
        ),
        "{error}"
    );
}

#[tokio::test]
async fn both_row_types_give_the_same_spec() {
    let (_db, mut conn, user) = setup().await;
    let options = CheckOptions {
        http: Some(HttpRequest {
            method: HttpMethod::Put,
            basic_auth: Some(BasicAuth {
                username: "probe".into(),
                password_sealed: None,
            }),
            ..Default::default()
        }),
        ..Default::default()
    };
    let new = NewMonitor {
        org_id: user,
        definition: MonitorDefinition {
            check_options: monitors::options_column(&options),
            http_password_sealed: Some(uptime_db::models::SealedText::new("v1.k1.c2VhbGVk".into())),
            ..definition(MonitorKind::Keyword)
        },
    };
    let monitor = monitors::create(&mut conn, new).await.unwrap();
    let configs = uptime_db::schedule::active_check_configs(&mut conn, &[monitor.id])
        .await
        .unwrap();

    let expected = CheckSpec {
        kind: MonitorKind::Keyword,
        target: "https://example.com/health".into(),
        timeout_secs: uptime_contracts::TimeoutSecs::of(7),
        expected_status: uptime_contracts::ExpectedStatus::of(204),
        keyword: Some("ok".into()),
        keyword_type: Some(KeywordType::NotContains),
        options,
    }
    .sealed(Some("v1.k1.c2VhbGVk".into()));
    assert_eq!(monitors::check_spec_sealed(&monitor), Ok(expected.clone()));
    assert_eq!(monitors::check_spec_sealed(&configs[0]), Ok(expected));
}
