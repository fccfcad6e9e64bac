//! Pruning against real PostgreSQL, with explicit dates: every row is dated
//! relative to a fixed clock reading, and pruning is run for that reading.

use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel_async::RunQueryDsl;
use tokio_util::sync::CancellationToken;
use uptime_retention::pruning::{prune, PruneOutcome, PruneReport};
use uptime_retention::RetentionSettings;
use uptime_testkit::TestDb;
use uuid::Uuid;

use crate::fixtures::{connect, day, days_ago, hours_ago, now, seed};

async fn prune_now(db: &TestDb, settings: &RetentionSettings) -> PruneOutcome {
    let mut conn = connect(db).await;
    let out = prune(&mut conn, settings, now(), &CancellationToken::new()).await;
    assert!(out.failures.is_empty(), "{:?}", out.failures);
    assert!(!out.interrupted);
    out
}

use seed::count;

#[tokio::test]
async fn settled_deliveries_go_with_their_attempts_pending_and_recent_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let contact = seed::contact(&mut conn, user, None, days_ago(400)).await;
    // Past the default 30 days: these two go, with their 2 + 1 attempts.
    let old_delivered = seed::delivery(&mut conn, contact, "delivered", days_ago(31), 2).await;
    let old_failed = seed::delivery(&mut conn, contact, "failed", days_ago(45), 1).await;
    // Pending is never pruned, however old; recent settled ones stay.
    let old_pending = seed::delivery(&mut conn, contact, "pending", days_ago(90), 3).await;
    let recent = seed::delivery(&mut conn, contact, "delivered", days_ago(29), 1).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.alert_deliveries, 2, "{:?}", out.report);
    assert_eq!(out.report.alert_delivery_attempts, 3, "{:?}", out.report);
    for (id, kept) in [
        (old_delivered, false),
        (old_failed, false),
        (old_pending, true),
        (recent, true),
    ] {
        let rows = count(&mut conn, &format!("alert_deliveries WHERE id = '{id}'")).await;
        assert_eq!(rows == 1, kept, "delivery {id} kept: {}", rows == 1);
    }
    // The survivors keep all their attempts; nothing else is left.
    assert_eq!(count(&mut conn, "alert_delivery_attempts").await, 4);
    assert_eq!(
        count(
            &mut conn,
            &format!(
                "alert_delivery_attempts WHERE delivery_id NOT IN ('{old_pending}', '{recent}')"
            )
        )
        .await,
        0
    );
}

#[tokio::test]
async fn published_outbox_rows_go_after_a_day_and_unpublished_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let gone = seed::outbox(&mut conn, hours_ago(26), Some(hours_ago(25))).await;
    let young = seed::outbox(&mut conn, hours_ago(30), Some(hours_ago(23))).await;
    // Never published (the relay's work): kept whatever its age.
    let stranded = seed::outbox(&mut conn, days_ago(10), None).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.outbox_events, 1, "{:?}", out.report);
    let left = |id: Uuid| format!("outbox_events WHERE id = '{id}'");
    assert_eq!(count(&mut conn, &left(gone)).await, 0);
    assert_eq!(count(&mut conn, &left(young)).await, 1);
    assert_eq!(count(&mut conn, &left(stranded)).await, 1);
}

#[tokio::test]
async fn expired_verification_tokens_are_cleared_and_their_contacts_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    // Default: a link works for 7 days.
    let expired = seed::contact(&mut conn, user, Some("a1"), days_ago(8)).await;
    let fresh = seed::contact(&mut conn, user, Some("b2"), days_ago(6)).await;
    let verified = seed::contact(&mut conn, user, None, days_ago(300)).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.verification_tokens, 1, "{:?}", out.report);
    let with = |id: i64, cond: &str| format!("alert_contacts WHERE id = {id} AND {cond}");
    assert_eq!(
        count(
            &mut conn,
            &with(
                expired,
                "verification_token_sha256 IS NULL AND NOT verified"
            )
        )
        .await,
        1,
        "the expired token is cleared, the contact stays unverified"
    );
    assert_eq!(
        count(&mut conn, &with(fresh, "verification_token_sha256 = 'b2'")).await,
        1
    );
    assert_eq!(count(&mut conn, &with(verified, "verified")).await, 1);
    assert_eq!(count(&mut conn, "alert_contacts").await, 3);
}

#[tokio::test]
async fn rollups_past_their_retention_go() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let monitor = seed::monitor(&mut conn, user).await;
    let settings = RetentionSettings {
        rollups_days: 1830,
        ..RetentionSettings::default()
    };
    for back in [2000, 1831, 1830, 1829, 1, 0] {
        seed::rollup(&mut conn, monitor, day(back)).await;
    }

    let out = prune_now(&db, &settings).await;

    assert_eq!(out.report.daily_uptime, 2, "{:?}", out.report);
    let first_kept = day(1830);
    assert_eq!(
        count(
            &mut conn,
            &format!("daily_uptime WHERE day < '{first_kept}'")
        )
        .await,
        0
    );
    assert_eq!(count(&mut conn, "daily_uptime").await, 4);
}

#[tokio::test]
async fn revoked_api_keys_go_after_their_retention_and_live_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let long_revoked = seed::api_key(&mut conn, user, Some(days_ago(31))).await;
    let just_revoked = seed::api_key(&mut conn, user, Some(days_ago(29))).await;
    let live = seed::api_key(&mut conn, user, None).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.api_keys, 1, "{:?}", out.report);
    let left = |id: i64| format!("api_keys WHERE id = {id}");
    assert_eq!(count(&mut conn, &left(long_revoked)).await, 0);
    assert_eq!(count(&mut conn, &left(just_revoked)).await, 1);
    assert_eq!(count(&mut conn, &left(live)).await, 1);
}

#[tokio::test]
async fn audit_entries_go_after_their_retention_and_recent_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let old = seed::audit_entry(&mut conn, org, days_ago(366)).await;
    let kept = seed::audit_entry(&mut conn, org, days_ago(364)).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.audit_log, 1, "{:?}", out.report);
    let left = |id: i64| format!("audit_log WHERE id = {id}");
    assert_eq!(count(&mut conn, &left(old)).await, 0);
    assert_eq!(count(&mut conn, &left(kept)).await, 1);
}

#[tokio::test]
async fn ended_invitations_go_after_their_retention_and_open_or_recent_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let expired_long_ago = seed::invitation(&mut conn, org, days_ago(31), None).await;
    let accepted_long_ago = seed::invitation(&mut conn, org, days_ago(1), Some(days_ago(31))).await;
    let expired_lately = seed::invitation(&mut conn, org, days_ago(29), None).await;
    let open = seed::invitation(&mut conn, org, days_ago(-7), None).await;

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.invitations, 2, "{:?}", out.report);
    let left = |id: i64| format!("invitations WHERE id = {id}");
    for gone in [expired_long_ago, accepted_long_ago] {
        assert_eq!(count(&mut conn, &left(gone)).await, 0, "{gone}");
    }
    for kept in [expired_lately, open] {
        assert_eq!(count(&mut conn, &left(kept)).await, 1, "{kept}");
    }
}

#[tokio::test]
async fn resolved_incidents_go_after_their_retention_and_open_ones_stay() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let monitor = seed::monitor(&mut conn, org).await;
    let incident = |started: i64, resolved: Option<i64>| uptime_db::incidents::NewIncident {
        id: uuid::Uuid::new_v4(),
        org_id: org,
        monitor_id: monitor,
        started_at: days_ago(started),
        resolved_at: resolved.map(days_ago),
        cause: None,
        alerts: Vec::new(),
    };
    let old = incident(400, Some(366));
    let kept = incident(370, Some(364));
    // Open for over a year: never pruned.
    let open = incident(500, None);
    uptime_db::incidents::open(&mut conn, &[old.clone(), kept.clone(), open.clone()])
        .await
        .unwrap();

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.incidents, 1, "{:?}", out.report);
    let left = |id: uuid::Uuid| format!("incidents WHERE id = '{id}'");
    assert_eq!(count(&mut conn, &left(old.id)).await, 0);
    assert_eq!(count(&mut conn, &left(kept.id)).await, 1);
    assert_eq!(count(&mut conn, &left(open.id)).await, 1);
    let never = RetentionSettings {
        incidents_days: 0,
        ..RetentionSettings::default()
    };
    assert_eq!(prune_now(&db, &never).await.report.incidents, 0);
}

#[tokio::test]
async fn idempotency_keys_go_after_their_replay_window() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    for (key, created) in [("old", hours_ago(25)), ("recent", hours_ago(23))] {
        diesel::sql_query(
            "INSERT INTO idempotency_keys (org_id, idempotency_key, request_sha256, created_at)
             VALUES ($1, $2, '\\x00', $3)",
        )
        .bind::<BigInt, _>(org)
        .bind::<Text, _>(key)
        .bind::<Timestamptz, _>(created)
        .execute(&mut conn)
        .await
        .unwrap();
    }

    let out = prune_now(&db, &RetentionSettings::default()).await;

    assert_eq!(out.report.idempotency_keys, 1, "{:?}", out.report);
    let left = |key: &str| format!("idempotency_keys WHERE idempotency_key = '{key}'");
    assert_eq!(count(&mut conn, &left("old")).await, 0);
    assert_eq!(count(&mut conn, &left("recent")).await, 1);
}

#[tokio::test]
async fn decided_rounds_go_with_the_results_and_abandoned_open_ones_after_a_day() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let monitor = seed::monitor(&mut conn, user).await;
    for _ in 0..5 {
        seed::round(&mut conn, monitor, days_ago(95), Some(days_ago(91))).await;
    }
    let kept_decided = seed::round(&mut conn, monitor, days_ago(89), Some(days_ago(89))).await;
    seed::round(&mut conn, monitor, hours_ago(30), None).await;
    let kept_open = seed::round(&mut conn, monitor, hours_ago(1), None).await;
    let settings = RetentionSettings {
        batch_size: 2,
        ..RetentionSettings::default()
    };

    let out = prune_now(&db, &settings).await;

    assert_eq!(
        out.report,
        PruneReport {
            check_rounds: 6,
            ..PruneReport::default()
        }
    );
    let left = seed::count(&mut conn, "check_rounds").await;
    assert_eq!(left, 2);
    for kept in [kept_decided, kept_open] {
        let sql = format!("check_rounds WHERE round_id = '{kept}'");
        assert_eq!(seed::count(&mut conn, &sql).await, 1, "{kept}");
    }
    // A zero age keeps open rounds forever.
    seed::round(&mut conn, monitor, days_ago(30), None).await;
    let settings = RetentionSettings {
        open_rounds_hours: 0,
        ..RetentionSettings::default()
    };
    assert_eq!(prune_now(&db, &settings).await.report.check_rounds, 0);
}

#[tokio::test]
async fn more_rows_than_one_batch_all_go() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let contact = seed::contact(&mut conn, user, None, days_ago(400)).await;
    let monitor = seed::monitor(&mut conn, user).await;
    for _ in 0..23 {
        seed::delivery(&mut conn, contact, "delivered", days_ago(40), 2).await;
    }
    for _ in 0..50 {
        seed::outbox(&mut conn, days_ago(3), Some(days_ago(3))).await;
    }
    for back in 0..30 {
        seed::rollup(&mut conn, monitor, day(3000 + back)).await;
    }
    let settings = RetentionSettings {
        batch_size: 7,
        ..RetentionSettings::default()
    };

    let out = prune_now(&db, &settings).await;

    assert_eq!(
        out.report,
        PruneReport {
            alert_deliveries: 23,
            alert_delivery_attempts: 46,
            outbox_events: 50,
            daily_uptime: 30,
            ..PruneReport::default()
        }
    );
    assert_eq!(count(&mut conn, "alert_deliveries").await, 0);
    assert_eq!(count(&mut conn, "alert_delivery_attempts").await, 0);
    assert_eq!(count(&mut conn, "outbox_events").await, 0);
    assert_eq!(count(&mut conn, "daily_uptime").await, 0);
}

#[tokio::test]
async fn a_zero_setting_keeps_its_rows_forever() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let user = seed::user(&mut conn).await;
    let contact = seed::contact(&mut conn, user, Some("c3"), days_ago(900)).await;
    let monitor = seed::monitor(&mut conn, user).await;
    seed::delivery(&mut conn, contact, "delivered", days_ago(900), 1).await;
    seed::outbox(&mut conn, days_ago(900), Some(days_ago(900))).await;
    seed::rollup(&mut conn, monitor, day(9000)).await;
    seed::api_key(&mut conn, user, Some(days_ago(900))).await;
    seed::audit_entry(&mut conn, user, days_ago(900)).await;
    seed::invitation(&mut conn, user, days_ago(900), None).await;
    let settings = RetentionSettings {
        rollups_days: 0,
        deliveries_days: 0,
        outbox_hours: 0,
        verification_token_hours: 0,
        revoked_api_keys_days: 0,
        audit_log_days: 0,
        invitations_days: 0,
        ..RetentionSettings::default()
    };

    let out = prune_now(&db, &settings).await;

    assert_eq!(out.report, PruneReport::default());
    assert_eq!(count(&mut conn, "alert_delivery_attempts").await, 1);
    assert_eq!(count(&mut conn, "outbox_events").await, 1);
    assert_eq!(count(&mut conn, "daily_uptime").await, 1);
    assert_eq!(count(&mut conn, "api_keys").await, 1);
    assert_eq!(count(&mut conn, "audit_log").await, 1);
    assert_eq!(
        count(
            &mut conn,
            "alert_contacts WHERE verification_token_sha256 IS NOT NULL"
        )
        .await,
        1
    );
}

#[tokio::test]
async fn closed_maintenance_spans_and_windows_that_cannot_open_again_go_after_their_retention() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let window = |last_end: Option<i64>| {
        diesel::sql_query(
            "INSERT INTO maintenance_windows (org_id, name, effect, starts_at, ends_at, rrule,
                 timezone, duration_secs, last_ends_at)
             VALUES ($1, 'w', 'silence', now() - interval '500 days', now(),
                 CASE WHEN $2::timestamptz IS NULL THEN 'FREQ=WEEKLY' END,
                 CASE WHEN $2::timestamptz IS NULL THEN 'UTC' END,
                 CASE WHEN $2::timestamptz IS NULL THEN 3600 END, $2)",
        )
        .bind::<BigInt, _>(org)
        .bind::<Nullable<Timestamptz>, _>(last_end.map(days_ago))
    };
    window(Some(31)).execute(&mut conn).await.unwrap();
    window(Some(29)).execute(&mut conn).await.unwrap();
    // An endless rule: never pruned.
    window(None).execute(&mut conn).await.unwrap();
    let span = |closed: Option<i64>| {
        diesel::sql_query(
            "INSERT INTO maintenance_spans (org_id, effect, monitor_ids, starts_at, ends_at, closed_at)
             VALUES ($1, 'silence', '{}', now() - interval '600 days', now(), $2)",
        )
        .bind::<BigInt, _>(org)
        .bind::<Nullable<Timestamptz>, _>(closed.map(days_ago))
    };
    span(Some(401)).execute(&mut conn).await.unwrap();
    span(Some(399)).execute(&mut conn).await.unwrap();
    // Still open: never pruned.
    span(None).execute(&mut conn).await.unwrap();

    let out = prune_now(&db, &RetentionSettings::default()).await;
    assert_eq!(out.report.maintenance_windows, 1, "{:?}", out.report);
    assert_eq!(out.report.maintenance_spans, 1, "{:?}", out.report);
    assert_eq!(count(&mut conn, "maintenance_windows").await, 2);
    assert_eq!(count(&mut conn, "maintenance_spans").await, 2);
    let never = RetentionSettings {
        maintenance_spans_days: 0,
        maintenance_windows_days: 0,
        ..RetentionSettings::default()
    };
    let out = prune_now(&db, &never).await;
    assert_eq!(
        (out.report.maintenance_spans, out.report.maintenance_windows),
        (0, 0)
    );
}
