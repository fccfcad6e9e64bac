//! Mails to status page subscribers, from the `status_page_mails` outbox:
//! sent once each with the one-click unsubscribe headers and a stable
//! Message-ID; a mail that can never be sent is left `failed` (a dead
//! letter) with its error, and the others still go.

use crate::common::{Running, World};
use diesel_async::RunQueryDsl;
use std::time::Duration;

#[derive(diesel::QueryableByName, Debug, PartialEq)]
struct Row {
    #[diesel(sql_type = diesel::sql_types::Text)]
    id: String,
    #[diesel(sql_type = diesel::sql_types::Text)]
    status: String,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Text>)]
    last_error: Option<String>,
    #[diesel(sql_type = diesel::sql_types::Bool)]
    token_kept: bool,
}

async fn rows(world: &World) -> Vec<Row> {
    diesel::sql_query(
        "SELECT id::text AS id, status, last_error, payload ? 'confirm_token' AS token_kept \
         FROM status_page_mails ORDER BY payload->>'order'",
    )
    .load(&mut *world.conn().await)
    .await
    .unwrap()
}

async fn sql(world: &World, statement: &str) {
    diesel::sql_query(statement)
        .execute(&mut *world.conn().await)
        .await
        .unwrap_or_else(|e| panic!("{statement}: {e}"));
}

#[tokio::test]
async fn subscriber_mails_go_once_with_unsubscribe_headers_and_a_broken_one_is_a_dead_letter() {
    let world = World::start().await;
    let org = world.user("owner").await;
    sql(&world, &format!(
        "WITH p AS (INSERT INTO status_pages (org_id, slug, title) VALUES ({org}, 'acme', 'Acme') RETURNING id, org_id), \
         n AS (INSERT INTO status_page_notices (page_id, org_id, title, state) SELECT id, org_id, 'Slow', 'investigating' FROM p RETURNING id), \
         u AS (INSERT INTO status_page_notice_updates (notice_id, state, body) SELECT id, 'investigating', 'Looking.' FROM n RETURNING id), \
         s AS (INSERT INTO status_page_subscribers (page_id, org_id, email, unsubscribe_token, confirmed_at) \
               SELECT id, org_id, 'reader@example.com', 'unsubscribe-token', now() FROM p RETURNING id), \
         t AS (INSERT INTO status_page_subscribers (page_id, org_id, email, unsubscribe_token, confirm_token_sha256) \
               SELECT id, org_id, 'new@example.com', 'other-token', 'digest' FROM p RETURNING id) \
         INSERT INTO status_page_mails (subscriber_id, kind, notice_update_id, payload) \
         SELECT s.id, 'notice', u.id, '{{\"order\": \"1\", \"page_title\": \"Acme\", \"page_url\": \"https://status.test/status/acme\", \
                \"links_base\": \"https://status.test\", \"notice_title\": \"Slow\", \"state\": \"investigating\", \
                \"body\": \"Looking.\", \"first\": true}}'::jsonb FROM s, u \
         UNION ALL SELECT t.id, 'confirmation', NULL, '{{\"order\": \"2\", \"page_title\": \"Acme\", \"page_url\": \"https://status.test/status/acme\", \
                \"links_base\": \"https://status.test\", \"confirm_token\": \"ctok\"}}'::jsonb FROM t \
         UNION ALL SELECT t.id, 'confirmation', NULL, '{{\"order\": \"3\", \"nonsense\": true}}'::jsonb FROM t"
    )).await;
    let _notifier = Running::start(world.settings()).await;

    let mails = world.smtp.wait_for(2, Duration::from_secs(20)).await;
    let notice = mails
        .iter()
        .find(|m| m.rcpt_to == ["reader@example.com"])
        .expect("the notice");
    assert_eq!(
        notice.header("subject").as_deref(),
        Some("[Investigating] Slow (Acme)")
    );
    assert_eq!(
        notice.header("list-unsubscribe").as_deref(),
        Some("<https://status.test/subscriptions/unsubscribe?token=unsubscribe-token>")
    );
    assert_eq!(
        notice.header("list-unsubscribe-post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    assert!(notice
        .text_body()
        .contains("https://status.test/subscriptions/unsubscribe?token=unsubscribe-token"));
    let confirmation = mails
        .iter()
        .find(|m| m.rcpt_to == ["new@example.com"])
        .expect("the confirmation");
    assert!(confirmation
        .text_body()
        .contains("https://status.test/subscriptions/confirm?token=ctok"));

    // Settled: sent, sent, and the broken one failed for good; the sent
    // confirmation no longer holds its token.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let settled = loop {
        let now = rows(&world).await;
        if now.iter().all(|r| r.status != "pending") {
            break now;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "still pending: {now:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let statuses: Vec<&str> = settled.iter().map(|r| r.status.as_str()).collect();
    assert_eq!(statuses, ["sent", "sent", "failed"]);
    assert!(settled[2]
        .last_error
        .as_deref()
        .unwrap()
        .contains("stored payload is invalid"));
    assert!(!settled[1].token_kept);
    let message_id = notice.header("message-id").unwrap();
    assert_eq!(
        message_id,
        format!("<{}@status-pages.uptime>", settled[0].id)
    );
    assert_eq!(world.smtp.received().len(), 2, "each mail once");
}
