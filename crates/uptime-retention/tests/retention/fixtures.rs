//! What every retention test stands on: a fixed clock reading and dates
//! relative to it, a connection of the test's own, and rows seeded with
//! the dates a service never would write.

use chrono::{DateTime, NaiveDate, TimeDelta, TimeZone, Utc};
use diesel::sql_types::{BigInt, Date, Nullable, Text, Timestamptz, Uuid as SqlUuid};
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use uptime_testkit::TestDb;
use uuid::Uuid;

/// The clock reading every test prunes for.
pub fn now() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap()
}

pub fn days_ago(days: i64) -> DateTime<Utc> {
    now() - TimeDelta::days(days)
}

pub fn hours_ago(hours: i64) -> DateTime<Utc> {
    now() - TimeDelta::hours(hours)
}

pub fn day(days_before_today: u64) -> NaiveDate {
    now()
        .date_naive()
        .checked_sub_days(chrono::Days::new(days_before_today))
        .unwrap()
}

/// A connection of the test's own (not the pool's).
pub async fn connect(db: &TestDb) -> AsyncPgConnection {
    AsyncPgConnection::establish(&db.url).await.unwrap()
}

/// Rows in the database, for fixtures and assertions. Tests write SQL of
/// their own: they set the dates a service never would.
pub mod seed {
    use super::*;

    #[derive(diesel::QueryableByName)]
    struct Id {
        #[diesel(sql_type = BigInt)]
        id: i64,
    }

    #[derive(diesel::QueryableByName)]
    struct DeliveryId {
        #[diesel(sql_type = SqlUuid)]
        id: Uuid,
    }

    #[derive(diesel::QueryableByName)]
    struct Count {
        #[diesel(sql_type = BigInt)]
        n: i64,
    }

    pub async fn count(conn: &mut AsyncPgConnection, sql: &str) -> i64 {
        diesel::sql_query(format!("SELECT count(*) AS n FROM {sql}"))
            .get_result::<Count>(conn)
            .await
            .unwrap_or_else(|e| panic!("count {sql}: {e}"))
            .n
    }

    /// A user, owner of an organisation of the same id.
    pub async fn user(conn: &mut AsyncPgConnection) -> i64 {
        uptime_db::users::create(conn, "owner").await.unwrap().id
    }

    /// An email contact; `token`: an outstanding verification token.
    pub async fn contact(
        conn: &mut AsyncPgConnection,
        user_id: i64,
        token: Option<&str>,
        updated_at: DateTime<Utc>,
    ) -> i64 {
        diesel::sql_query(
            "INSERT INTO alert_contacts (org_id, type, name, value, verified,
                                         verification_token_sha256, created_at, updated_at)
             VALUES ($1, 'email', 'ops', 'ops@example.com', $2 IS NULL, $2, $3, $3)
             RETURNING id",
        )
        .bind::<BigInt, _>(user_id)
        .bind::<Nullable<Text>, _>(token)
        .bind::<Timestamptz, _>(updated_at)
        .get_result::<Id>(conn)
        .await
        .unwrap()
        .id
    }

    /// A delivery in `status` created at `created_at`, with `attempts` attempts.
    pub async fn delivery(
        conn: &mut AsyncPgConnection,
        contact_id: i64,
        status: &str,
        created_at: DateTime<Utc>,
        attempts: usize,
    ) -> Uuid {
        let id = diesel::sql_query(
            "INSERT INTO alert_deliveries (event_id, contact_id, monitor_id, kind, event_type,
                                           payload, status, attempts, next_attempt_at, created_at,
                                           delivered_at)
             VALUES (gen_random_uuid(), $1, 1, 'alert', 'monitor.down', '{}', $2, $3, $4, $4,
                     CASE WHEN $2 = 'delivered' THEN $4 END)
             RETURNING id",
        )
        .bind::<BigInt, _>(contact_id)
        .bind::<Text, _>(status)
        .bind::<diesel::sql_types::Integer, _>(attempts as i32)
        .bind::<Timestamptz, _>(created_at)
        .get_result::<DeliveryId>(conn)
        .await
        .unwrap()
        .id;
        for _ in 0..attempts {
            diesel::sql_query(
                "INSERT INTO alert_delivery_attempts (delivery_id, attempted_at, outcome, duration_ms)
                 VALUES ($1, $2, 'retry', 10)",
            )
            .bind::<SqlUuid, _>(id)
            .bind::<Timestamptz, _>(created_at)
            .execute(conn)
            .await
            .unwrap();
        }
        id
    }

    pub async fn outbox(
        conn: &mut AsyncPgConnection,
        created_at: DateTime<Utc>,
        published_at: Option<DateTime<Utc>>,
    ) -> Uuid {
        let id = Uuid::new_v4();
        diesel::sql_query(
            "INSERT INTO outbox_events (id, monitor_id, subject, payload, created_at, published_at)
             VALUES ($1, 1, 'uptime.events.state_changed.v3', '{}', $2, $3)",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<Timestamptz, _>(created_at)
        .bind::<Nullable<Timestamptz>, _>(published_at)
        .execute(conn)
        .await
        .unwrap();
        id
    }

    pub async fn monitor(conn: &mut AsyncPgConnection, user_id: i64) -> i64 {
        diesel::sql_query(
            "INSERT INTO monitors (org_id, name, type, target, interval_secs, timeout_secs,
                                   expected_status, confirmation_count, ssl_warn_days)
             VALUES ($1, 'site', 'http', 'https://example.com', 60, 10, 200, 1, 14)
             RETURNING id",
        )
        .bind::<BigInt, _>(user_id)
        .get_result::<Id>(conn)
        .await
        .unwrap()
        .id
    }

    /// A round of three regions created at `created_at`, decided at `decided_at`.
    pub async fn round(
        conn: &mut AsyncPgConnection,
        monitor_id: i64,
        created_at: DateTime<Utc>,
        decided_at: Option<DateTime<Utc>>,
    ) -> Uuid {
        let id = Uuid::new_v4();
        diesel::sql_query(
            "INSERT INTO check_rounds (round_id, monitor_id, definition_version, trigger, due_at,
                                       deadline_at, regions, quorum, created_at, decided_at, verdict)
             VALUES ($1, $2, 1, 'scheduled', $3, $3 + interval '15 seconds', '{eu,us,ap}', 2,
                     $3, $4, CASE WHEN $4 IS NULL THEN NULL ELSE 'up' END)",
        )
        .bind::<SqlUuid, _>(id)
        .bind::<BigInt, _>(monitor_id)
        .bind::<Timestamptz, _>(created_at)
        .bind::<Nullable<Timestamptz>, _>(decided_at)
        .execute(conn)
        .await
        .unwrap();
        id
    }

    pub async fn rollup(conn: &mut AsyncPgConnection, monitor_id: i64, day: NaiveDate) {
        diesel::sql_query(
            "INSERT INTO daily_uptime (monitor_id, day, total_checks, up_checks)
             VALUES ($1, $2, 1440, 1439)",
        )
        .bind::<BigInt, _>(monitor_id)
        .bind::<Date, _>(day)
        .execute(conn)
        .await
        .unwrap();
    }

    /// An audit entry of organisation `org_id` recorded at `at`.
    pub async fn audit_entry(conn: &mut AsyncPgConnection, org_id: i64, at: DateTime<Utc>) -> i64 {
        diesel::sql_query(
            "INSERT INTO audit_log (org_id, actor_user_id, key_prefix, at, action, resource_kind)
             VALUES ($1, $1, 'upt_abcd', $2, 'create', 'monitor') RETURNING id",
        )
        .bind::<BigInt, _>(org_id)
        .bind::<Timestamptz, _>(at)
        .get_result::<Id>(conn)
        .await
        .unwrap()
        .id
    }

    /// An invitation to `org_id` that expires at `expires_at`, accepted at
    /// `accepted_at` if given.
    pub async fn invitation(
        conn: &mut AsyncPgConnection,
        org_id: i64,
        expires_at: DateTime<Utc>,
        accepted_at: Option<DateTime<Utc>>,
    ) -> i64 {
        diesel::sql_query(
            "INSERT INTO invitations (org_id, email, role, token_sha256, invited_by, created_at,
                                      expires_at, accepted_at)
             VALUES ($1, md5(random()::text) || '@example.com', 'viewer', md5(random()::text),
                     $1, $2 - interval '7 days', $2, $3)
             RETURNING id",
        )
        .bind::<BigInt, _>(org_id)
        .bind::<Timestamptz, _>(expires_at)
        .bind::<Nullable<Timestamptz>, _>(accepted_at)
        .get_result::<Id>(conn)
        .await
        .unwrap()
        .id
    }

    pub async fn api_key(
        conn: &mut AsyncPgConnection,
        user_id: i64,
        revoked_at: Option<DateTime<Utc>>,
    ) -> i64 {
        diesel::sql_query(
            "INSERT INTO api_keys (user_id, org_id, scope, name, prefix, key_sha256, created_at,
                                   revoked_at)
             VALUES ($1, $1, 'admin', 'ci', 'upt_abcd', md5(random()::text), $2, $3)
             RETURNING id",
        )
        .bind::<BigInt, _>(user_id)
        .bind::<Timestamptz, _>(days_ago(400))
        .bind::<Nullable<Timestamptz>, _>(revoked_at)
        .get_result::<Id>(conn)
        .await
        .unwrap()
        .id
    }
}
