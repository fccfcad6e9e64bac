//! A page's email subscribers through the API (listed and removed by the
//! owner, one audit entry without the address), and the mails a notice
//! queues: one per confirmed subscriber of a public page, in the notice's
//! transaction, for the first post and for each update. Subscribing itself
//! is the status-pages service's; the sending is the notifier's
//! (crates/system-tests: status_page_subscriptions).

use crate::common::{spawn_app, TestApp};
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn sql(app: &TestApp, statement: &str) {
    let mut conn = uptime_db::pool::conn(&app.env.db.pool).await.unwrap();
    diesel::sql_query(statement)
        .execute(&mut conn)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

async fn count(app: &TestApp, what: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = uptime_db::pool::conn(&app.env.db.pool).await.unwrap();
    diesel::sql_query(format!("SELECT count(*) AS n FROM {what}"))
        .get_result::<N>(&mut conn)
        .await
        .unwrap()
        .n
}

async fn page(app: &TestApp, key: &str, slug: &str, private: bool) -> i64 {
    let (status, body) = app
        .post(
            "/api/v1/status-pages",
            key,
            json!({"slug": slug, "title": "Acme", "private": private}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_i64().unwrap()
}

/// A subscriber of `page_id`, confirmed or pending.
async fn subscriber(app: &TestApp, page_id: i64, email: &str, confirmed: bool) {
    let state = if confirmed {
        "NULL, now()"
    } else {
        "md5(random()::text), NULL"
    };
    sql(
        app,
        &format!(
            "INSERT INTO status_page_subscribers (page_id, org_id, email, unsubscribe_token, confirm_token_sha256, confirmed_at) \
             SELECT id, org_id, '{email}', md5(random()::text), {state} FROM status_pages WHERE id = {page_id}"
        ),
    )
    .await;
}

#[tokio::test]
async fn notices_queue_one_mail_per_confirmed_subscriber_and_the_owner_lists_and_removes_them() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("owner").await;
    let (_, stranger) = app.new_user("stranger").await;
    let public = page(&app, &key, "acme", false).await;
    let private = page(&app, &key, "inner", true).await;
    subscriber(&app, public, "one@example.com", true).await;
    subscriber(&app, public, "two@example.com", true).await;
    subscriber(&app, public, "pending@example.com", false).await;
    subscriber(&app, private, "inner@example.com", true).await;

    let (status, notice) = app
        .post(
            &format!("/api/v1/status-pages/{public}/notices"),
            &key,
            json!({"title": "Slow", "body": "Looking."}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{notice}");
    let notice_mails = "status_page_mails m JOIN status_page_subscribers s ON s.id = m.subscriber_id WHERE m.kind = 'notice'";
    assert_eq!(count(&app, notice_mails).await, 2);
    assert_eq!(
        count(&app, &format!("{notice_mails} AND s.confirmed_at IS NULL")).await,
        0
    );
    let (status, _) = app
        .post(
            &format!(
                "/api/v1/status-pages/{public}/notices/{}/updates",
                notice["id"]
            ),
            &key,
            json!({"state": "resolved", "body": "Fixed."}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(count(&app, notice_mails).await, 4, "each update mails too");
    let payload = "status_page_mails WHERE kind = 'notice' AND payload->>'state' = 'resolved' \
                   AND payload->>'notice_title' = 'Slow' AND payload->>'first' = 'false' \
                   AND payload->>'page_url' LIKE '%/status/acme'";
    assert_eq!(count(&app, payload).await, 2);
    let (status, _) = app
        .post(
            &format!("/api/v1/status-pages/{private}/notices"),
            &key,
            json!({"title": "Inner", "body": "Only for token holders."}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(
        count(&app, notice_mails).await,
        4,
        "a private page mails nobody"
    );

    let (status, listed) = app
        .get(
            &format!("/api/v1/status-pages/{public}/subscribers?limit=2"),
            &key,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{listed}");
    let shown: Vec<(String, String)> = listed["subscribers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["email"].as_str().unwrap().into(),
                s["state"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert_eq!(
        shown,
        vec![
            ("one@example.com".into(), "confirmed".into()),
            ("two@example.com".into(), "confirmed".into())
        ]
    );
    let cursor = listed["next_cursor"].as_str().unwrap();
    let (_, rest) = app
        .get(
            &format!("/api/v1/status-pages/{public}/subscribers?cursor={cursor}"),
            &key,
        )
        .await;
    assert_eq!(rest["subscribers"][0]["state"], "pending");
    let pending_id = rest["subscribers"][0]["id"].as_i64().unwrap();
    let (status, _) = app
        .get(
            &format!("/api/v1/status-pages/{public}/subscribers"),
            &stranger,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let path = format!("/api/v1/status-pages/{public}/subscribers/{pending_id}");
    assert_eq!(app.delete(&path, &stranger).await.0, StatusCode::NOT_FOUND);
    assert_eq!(app.delete(&path, &key).await.0, StatusCode::NO_CONTENT);
    assert_eq!(app.delete(&path, &key).await.0, StatusCode::NOT_FOUND);
    let (_, log) = app
        .get(
            "/api/v1/audit-log?resource_kind=status_page_subscriber",
            &key,
        )
        .await;
    let entries: &Vec<Value> = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["resource_id"], pending_id);
    assert!(
        !log.to_string().contains("pending@example.com"),
        "no address in the audit log: {log}"
    );
    assert_eq!(
        count(
            &app,
            &format!("status_page_subscribers WHERE page_id = {public}")
        )
        .await,
        2
    );
}
