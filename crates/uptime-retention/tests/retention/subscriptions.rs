//! Status page subscriptions: a pending one goes `pending_subscription_hours`
//! after it was made (with its confirmation mail), a confirmed one stays
//! whatever its age; settled subscriber mails go `status_page_mails_days`
//! after they were written, pending ones stay.

use crate::fixtures::{connect, days_ago, hours_ago, now, seed};
use diesel::sql_types::{BigInt, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use tokio_util::sync::CancellationToken;
use uptime_retention::pruning::prune;
use uptime_retention::RetentionSettings;
use uptime_testkit::TestDb;

#[derive(diesel::QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

async fn page(conn: &mut AsyncPgConnection, org: i64) -> i64 {
    diesel::sql_query(
        "INSERT INTO status_pages (org_id, slug, title) VALUES ($1, 'acme-' || $1, 'Acme') RETURNING id",
    )
    .bind::<BigInt, _>(org)
    .get_result::<Id>(conn)
    .await
    .unwrap()
    .id
}

/// A subscriber made at `created_at`, confirmed at `confirmed_at` if given.
async fn subscriber(
    conn: &mut AsyncPgConnection,
    page_id: i64,
    org: i64,
    created_at: chrono::DateTime<chrono::Utc>,
    confirmed_at: Option<chrono::DateTime<chrono::Utc>>,
) -> i64 {
    diesel::sql_query(
        "INSERT INTO status_page_subscribers
             (page_id, org_id, email, confirm_token_sha256, unsubscribe_token, created_at, confirmed_at)
         VALUES ($1, $2, md5(random()::text) || '@example.com',
                 CASE WHEN $4::timestamptz IS NULL THEN md5(random()::text) END,
                 md5(random()::text), $3, $4)
         RETURNING id",
    )
    .bind::<BigInt, _>(page_id)
    .bind::<BigInt, _>(org)
    .bind::<Timestamptz, _>(created_at)
    .bind::<Nullable<Timestamptz>, _>(confirmed_at)
    .get_result::<Id>(conn)
    .await
    .unwrap()
    .id
}

async fn mail(
    conn: &mut AsyncPgConnection,
    subscriber_id: i64,
    status: &str,
    created_at: chrono::DateTime<chrono::Utc>,
) {
    diesel::sql_query(
        "INSERT INTO status_page_mails (subscriber_id, kind, payload, status, created_at)
         VALUES ($1, 'confirmation', '{}', $2, $3)",
    )
    .bind::<BigInt, _>(subscriber_id)
    .bind::<Text, _>(status)
    .bind::<Timestamptz, _>(created_at)
    .execute(conn)
    .await
    .unwrap();
}

#[tokio::test]
async fn unconfirmed_subscriptions_expire_and_settled_mails_go_after_their_retention() {
    let db = TestDb::create().await;
    let mut conn = connect(&db).await;
    let org = seed::user(&mut conn).await;
    let page_id = page(&mut conn, org).await;
    let expired = subscriber(&mut conn, page_id, org, hours_ago(49), None).await;
    mail(&mut conn, expired, "sent", hours_ago(49)).await;
    let pending = subscriber(&mut conn, page_id, org, hours_ago(47), None).await;
    let confirmed = subscriber(&mut conn, page_id, org, days_ago(400), Some(days_ago(400))).await;
    mail(&mut conn, confirmed, "sent", days_ago(31)).await;
    mail(&mut conn, confirmed, "failed", days_ago(31)).await;
    mail(&mut conn, confirmed, "sent", days_ago(29)).await;
    mail(&mut conn, confirmed, "pending", days_ago(31)).await;

    let out = prune(
        &mut conn,
        &RetentionSettings::default(),
        now(),
        &CancellationToken::new(),
    )
    .await;
    assert!(out.failures.is_empty(), "{:?}", out.failures);

    assert_eq!(out.report.status_page_subscribers, 1, "{:?}", out.report);
    assert_eq!(out.report.status_page_mails, 2, "{:?}", out.report);
    let left = |id: i64| format!("status_page_subscribers WHERE id = {id}");
    assert_eq!(seed::count(&mut conn, &left(expired)).await, 0);
    assert_eq!(seed::count(&mut conn, &left(pending)).await, 1);
    assert_eq!(seed::count(&mut conn, &left(confirmed)).await, 1);
    // The expired subscription's mail went with it; of the confirmed
    // one's, the recent and the pending mail stay.
    assert_eq!(
        seed::count(
            &mut conn,
            &format!("status_page_mails WHERE subscriber_id = {expired}")
        )
        .await,
        0
    );
    assert_eq!(
        seed::count(
            &mut conn,
            &format!("status_page_mails WHERE subscriber_id = {confirmed}")
        )
        .await,
        2
    );
}
