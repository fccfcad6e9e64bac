//! The subscription routes of the service against its own database: the
//! form and the JSON route, their bounds (bad input, the page's cap, the
//! per-address rate), and what they write (a pending subscriber and its
//! confirmation mail, together). The mails themselves are the notifier's
//! (crates/system-tests: status_page_subscriptions).

use crate::common::{spawn_with, Service};
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn count(service: &Service, sql: &str) -> i64 {
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = uptime_db::pool::conn(&service.db.as_ref().unwrap().pool)
        .await
        .unwrap();
    diesel::sql_query(format!("SELECT count(*) AS n FROM {sql}"))
        .get_result::<N>(&mut conn)
        .await
        .unwrap()
        .n
}

async fn subscribe_json(service: &Service, slug: &str, body: Value) -> (StatusCode, Value) {
    let res = service
        .client
        .post(service.url(&format!("/status/{slug}/subscriptions")))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = res.status();
    (status, res.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn a_subscription_is_pending_with_its_mail_and_the_bounds_hold() {
    let service = spawn_with(|s| {
        s.status_pages.max_subscribers_per_page = 2;
        s.status_pages.subscribe_rate_limit_per_hour = 1;
        s.status_pages.subscribe_rate_limit_burst = 4;
    })
    .await;
    let org = service.organisation("acme").await;
    service.page(org, "acme", "[]").await;
    service.page(org, "secret", "[]").await;
    service
        .sql("UPDATE status_pages SET access_token_sha256 = 'x' WHERE slug = 'secret'")
        .await;
    service.refreshed().await;

    // The form is on the public page only.
    let public = service.get("/status/acme").await.text().await.unwrap();
    assert!(public
        .contains("<form class=\"card\" method=\"post\" action=\"/status/acme/subscriptions\">"));
    assert!(public.contains("name=\"email\" type=\"email\""));
    let csp = service.get("/status/acme").await.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(csp.contains("form-action 'self'"), "{csp}");

    // Bad input: a 400 naming the field, before any write or rate use.
    for body in [
        json!({}),
        json!({"email": "nope"}),
        json!({"email": "a@b.c", "extra": 1}),
    ] {
        let (status, problem) = subscribe_json(&service, "acme", body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(problem["details"][0]["field"], "email", "{body}: {problem}");
    }
    let (status, _) = subscribe_json(&service, "secret", json!({"email": "a@example.com"})).await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "a private page takes no subscriptions"
    );
    let (status, _) = subscribe_json(&service, "nope", json!({"email": "a@example.com"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, answer) =
        subscribe_json(&service, "acme", json!({"email": "a@example.com"})).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{answer}");
    assert_eq!(
        count(
            &service,
            "status_page_subscribers WHERE confirmed_at IS NULL"
        )
        .await,
        1
    );
    assert_eq!(
        count(
            &service,
            "status_page_mails WHERE kind = 'confirmation' AND payload ? 'confirm_token'"
        )
        .await,
        1
    );
    // Again, differently cased: the same answer, nothing new.
    let (status, _) = subscribe_json(&service, "acme", json!({"email": "A@Example.com"})).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    assert_eq!(count(&service, "status_page_mails").await, 1);
    // The form, as a browser posts it.
    let res = service
        .client
        .post(service.url("/status/acme/subscriptions"))
        .form(&[("email", "b@example.com")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    assert!(res.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    // The page's cap (pending ones count).
    let (status, problem) =
        subscribe_json(&service, "acme", json!({"email": "c@example.com"})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{problem}");
    assert_eq!(problem["details"][0]["field"], "email");
    // The address's rate: a burst of 4 requests, then 429 with Retry-After.
    let res = service
        .client
        .post(service.url("/status/acme/subscriptions"))
        .json(&json!({"email": "d@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(res.headers().contains_key("retry-after"));
    assert_eq!(count(&service, "status_page_subscribers").await, 2);
}

#[tokio::test]
async fn confirm_and_unsubscribe_links_show_a_button_and_junk_tokens_are_refused() {
    let service = spawn_with(|_| {}).await;
    let token = "A".repeat(43);
    for path in ["/subscriptions/confirm", "/subscriptions/unsubscribe"] {
        let shown = service.get(&format!("{path}?token={token}")).await;
        assert_eq!(shown.status(), StatusCode::OK);
        let html = shown.text().await.unwrap();
        assert!(
            html.contains(&format!(
                "<form method=\"post\" action=\"{path}?token={token}\">"
            )),
            "{html}"
        );
        assert_eq!(
            service.get(&format!("{path}?token=short")).await.status(),
            StatusCode::NOT_FOUND
        );
    }
    // An unknown confirmation token: 404; an unknown unsubscribe: done already.
    let confirm = service
        .client
        .post(service.url(&format!("/subscriptions/confirm?token={token}")))
        .send()
        .await
        .unwrap();
    assert_eq!(confirm.status(), StatusCode::NOT_FOUND);
    let gone = service
        .client
        .post(service.url(&format!("/subscriptions/unsubscribe?token={token}")))
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(gone.status(), StatusCode::OK);
}

#[tokio::test]
async fn maintenance_of_a_shown_monitor_is_on_the_page() {
    let service = spawn_with(|_| {}).await;
    let org = service.organisation("acme").await;
    let web = service.monitor(org, "web", "up", "{}").await;
    service
        .page(
            org,
            "acme",
            &format!("[{{\"name\": \"Site\", \"monitor_ids\": [{web}]}}]"),
        )
        .await;
    service
        .sql(&format!(
            "INSERT INTO maintenance_windows (org_id, name, monitor_ids, effect, starts_at, ends_at, last_ends_at) \
             VALUES ({org}, 'Network work', ARRAY[{web}]::bigint[], 'pause', \
                     date_trunc('second', now()) - interval '5 minutes', date_trunc('second', now()) + interval '1 hour', \
                     date_trunc('second', now()) + interval '1 hour')"
        ))
        .await;
    service.refreshed().await;
    let html = service.get("/status/acme").await.text().await.unwrap();
    assert!(
        html.contains("<h2 id=\"maintenance\">Scheduled maintenance</h2>"),
        "{html}"
    );
    assert!(html.contains("data-state=\"active\""));
    assert!(html.contains("Network work"));
    assert!(html.contains("<time datetime=\""));
    let section = &html[html.find("id=\"maintenance\"").unwrap()..];
    let section = &section[..section.find("</section>").unwrap()];
    assert!(
        !section.contains("pause"),
        "the effect is internal: {section}"
    );
}
