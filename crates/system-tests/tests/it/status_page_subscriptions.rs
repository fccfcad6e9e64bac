//! Status page email subscriptions end to end, with real parts: the
//! status-pages service (the form, confirm and unsubscribe routes), the
//! api-gateway (notices), the notifier (the mails) and a loopback SMTP
//! server that receives them. Also the page's scheduled maintenance.

use chrono::{Duration as Span, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::time::Duration;
use system_tests::{Stack, StackOptions};
use tokio_util::sync::CancellationToken;
use uptime_testkit::smtp::{ReceivedMail, SmtpServer};
use uptime_testkit::TestEnv;

const WAIT: Duration = Duration::from_secs(30);

/// A stack (gateway and notifier, mail to `smtp`) beside a status-pages
/// service over the same database; the service's base URL.
async fn start(
    smtp: &SmtpServer,
) -> (
    Stack,
    String,
    status_pages::refresh::Shared,
    CancellationToken,
) {
    let env = TestEnv::start().await;
    let mut settings = status_pages::settings::StatusPagesSettings {
        database: env.db.settings(),
        ..Default::default()
    };
    settings.ops.listen = "127.0.0.1:0".into();
    // The links in the mails point at this service: its address is chosen
    // before it starts.
    let port = system_tests::processes::free_port().unwrap();
    settings.status_pages.listen = format!("127.0.0.1:{port}");
    settings.status_pages.public_base_url = format!("http://127.0.0.1:{port}");
    settings.status_pages.workers = 1;
    settings.status_pages.refresh_ms = 100;
    settings.status_pages.rate_limit_per_second = 0;
    let service = status_pages::StatusPages::build(settings).await.unwrap();
    let base = format!("http://{}", service.addr());
    let shared = service.shared();
    let pages_shutdown = CancellationToken::new();
    tokio::spawn(service.run_until(pages_shutdown.clone()));
    let stack = Stack::start_on(
        env,
        StackOptions {
            scheduler: false,
            checkers: 0,
            recorder: false,
            smtp: Some(uptime_config::SmtpSettings {
                host: smtp.host().into(),
                port: smtp.port(),
                tls: uptime_config::SmtpTls::None,
                from: "Acme status <status@uptime.test>".into(),
                ..Default::default()
            }),
            status_pages_url: Some(base.clone()),
            ..StackOptions::default()
        },
    )
    .await
    .unwrap();
    (stack, base, shared, pages_shutdown)
}

async fn refreshed(shared: &status_pages::refresh::Shared) {
    let next = shared.generation() + 2;
    tokio::time::timeout(WAIT, shared.wait_for_generation(next))
        .await
        .expect("the snapshot refreshes");
}

async fn api(stack: &Stack, method: Method, path: &str, key: &str, body: Option<Value>) -> Value {
    let (status, value) = stack.call(method, path, key, body).await.unwrap();
    assert!(status.is_success(), "{path}: {status} {value}");
    value
}

/// The first `http...` link in `text` that contains `part`.
fn link(text: &str, part: &str) -> String {
    text.split_whitespace()
        .find(|w| w.starts_with("http") && w.contains(part))
        .unwrap_or_else(|| panic!("no {part} link in {text}"))
        .to_string()
}

fn to(mail: &ReceivedMail) -> &str {
    &mail.rcpt_to[0]
}

async fn count(stack: &Stack, sql: &str) -> i64 {
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct N {
        #[diesel(sql_type = diesel::sql_types::BigInt)]
        n: i64,
    }
    let mut conn = uptime_db::pool::conn(&stack.env.db.pool).await.unwrap();
    diesel::sql_query(format!("SELECT count(*) AS n FROM {sql}"))
        .get_result::<N>(&mut conn)
        .await
        .unwrap()
        .n
}

#[tokio::test]
async fn a_confirmed_subscriber_gets_each_notice_once_and_nothing_after_one_click_unsubscribe() {
    let smtp = SmtpServer::start().await;
    let (stack, base, shared, _pages) = start(&smtp).await;
    let http = reqwest::Client::new();
    let key = stack.new_user("acme").await.unwrap();
    let monitor = api(&stack, Method::POST, "/api/v1/monitors", &key,
        Some(json!({"name": "web", "type": "http", "target": "http://127.0.0.1:9/", "interval_secs": 3600}))).await;
    let page = api(
        &stack,
        Method::POST,
        "/api/v1/status-pages",
        &key,
        Some(json!({"slug": "acme", "title": "Acme status",
                    "groups": [{"name": "Services", "monitor_ids": [monitor["id"]]}]})),
    )
    .await;
    let page_id = page["id"].as_i64().unwrap();
    refreshed(&shared).await;

    // The page's form, without JavaScript: a plain form post.
    let html = http
        .get(format!("{base}/status/acme"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        html.contains("action=\"/status/acme/subscriptions\""),
        "{html}"
    );
    let res = http
        .post(format!("{base}/status/acme/subscriptions"))
        .form(&[("email", "reader@example.com")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    assert!(res.text().await.unwrap().contains("Check your inbox"));
    // The JSON route; an address that never confirms; and a bad one.
    let res = http
        .post(format!("{base}/status/acme/subscriptions"))
        .json(&json!({"email": "pending@example.com"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);
    let res = http
        .post(format!("{base}/status/acme/subscriptions"))
        .json(&json!({"email": "not an address"}))
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::BAD_REQUEST);
    let problem: Value = res.json().await.unwrap();
    assert_eq!(problem["details"][0]["field"], "email", "{problem}");
    // Subscribing again sends nothing more (and answers the same).
    let res = http
        .post(format!("{base}/status/acme/subscriptions"))
        .form(&[("email", "Reader@example.com")])
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::ACCEPTED);

    let mails = smtp.wait_for(2, WAIT).await;
    let confirmation = mails
        .iter()
        .find(|m| to(m) == "reader@example.com")
        .unwrap()
        .clone();
    assert!(confirmation
        .header("subject")
        .unwrap()
        .contains("Confirm your subscription"));
    assert_eq!(
        confirmation.header("list-unsubscribe-post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    let confirm = link(&confirmation.text_body(), "/subscriptions/confirm?token=");

    // Nothing is confirmed by opening the link (mail scanners do): the
    // button posts.
    let shown = http.get(&confirm).send().await.unwrap();
    assert_eq!(shown.status(), StatusCode::OK);
    assert!(shown.text().await.unwrap().contains("method=\"post\""));
    assert_eq!(
        count(
            &stack,
            "status_page_subscribers WHERE confirmed_at IS NOT NULL"
        )
        .await,
        0
    );
    let done = http.post(&confirm).send().await.unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    assert!(done.text().await.unwrap().contains("Subscribed"));
    assert_eq!(
        http.post(&confirm).send().await.unwrap().status(),
        StatusCode::NOT_FOUND,
        "a link works once"
    );

    // The owner sees both, one pending.
    let listed = api(
        &stack,
        Method::GET,
        &format!("/api/v1/status-pages/{page_id}/subscribers"),
        &key,
        None,
    )
    .await;
    let states: Vec<(&str, &str)> = listed["subscribers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["email"].as_str().unwrap(), s["state"].as_str().unwrap()))
        .collect();
    assert_eq!(
        states,
        vec![
            ("reader@example.com", "confirmed"),
            ("pending@example.com", "pending")
        ]
    );

    // A notice: one mail, to the confirmed subscriber only.
    let notice = api(
        &stack,
        Method::POST,
        &format!("/api/v1/status-pages/{page_id}/notices"),
        &key,
        Some(json!({"title": "Slow logins", "state": "identified", "body": "A bad deploy."})),
    )
    .await;
    let mails = smtp.wait_for(3, WAIT).await;
    let first = &mails[2];
    assert_eq!(to(first), "reader@example.com");
    assert_eq!(
        first.header("subject").as_deref(),
        Some("[Identified] Slow logins (Acme status)")
    );
    assert!(first.text_body().contains("A bad deploy."));
    let unsubscribe = first.header("list-unsubscribe").unwrap();
    let unsubscribe = unsubscribe
        .trim_start_matches('<')
        .trim_end_matches('>')
        .to_string();
    assert!(
        unsubscribe.starts_with(&format!("{base}/subscriptions/unsubscribe?token=")),
        "{unsubscribe}"
    );
    assert!(
        first.text_body().contains(&unsubscribe),
        "the link is in the body too"
    );
    assert_eq!(
        first.header("list-unsubscribe-post").as_deref(),
        Some("List-Unsubscribe=One-Click")
    );
    // Exactly once: one row for (update, subscriber), sent.
    assert_eq!(
        count(&stack, "status_page_mails WHERE kind = 'notice'").await,
        1
    );

    // An update mails again, once.
    api(
        &stack,
        Method::POST,
        &format!(
            "/api/v1/status-pages/{page_id}/notices/{}/updates",
            notice["id"]
        ),
        &key,
        Some(json!({"state": "resolved", "body": "Rolled back."})),
    )
    .await;
    let mails = smtp.wait_for(4, WAIT).await;
    assert_eq!(to(&mails[3]), "reader@example.com");
    assert!(mails[3]
        .header("subject")
        .unwrap()
        .starts_with("[Resolved] Slow logins"));
    assert!(
        mails
            .iter()
            .filter(|m| to(m) == "pending@example.com")
            .count()
            == 1,
        "an unconfirmed subscriber gets its confirmation and nothing else"
    );

    // RFC 8058 one-click: a POST with that body, no confirmation step.
    let res = http
        .post(&unsubscribe)
        .header("content-type", "application/x-www-form-urlencoded")
        .body("List-Unsubscribe=One-Click")
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::OK);
    assert_eq!(
        count(
            &stack,
            "status_page_subscribers WHERE lower(email) = 'reader@example.com'"
        )
        .await,
        0
    );

    // The next notice mails nobody.
    api(
        &stack,
        Method::POST,
        &format!("/api/v1/status-pages/{page_id}/notices"),
        &key,
        Some(json!({"title": "Another", "body": "More."})),
    )
    .await;
    assert_eq!(
        count(&stack, "status_page_mails WHERE kind = 'notice'").await,
        0
    );
    assert_eq!(smtp.received().len(), 4);
}

#[tokio::test]
async fn maintenance_covering_a_shown_monitor_appears_on_the_page_without_internals() {
    let smtp = SmtpServer::start().await;
    let (stack, base, shared, _pages) = start(&smtp).await;
    let key = stack.new_user("acme").await.unwrap();
    let monitor = api(&stack, Method::POST, "/api/v1/monitors", &key,
        Some(json!({"name": "web", "type": "http", "target": "http://127.0.0.1:9/", "interval_secs": 3600}))).await;
    let other = api(&stack, Method::POST, "/api/v1/monitors", &key,
        Some(json!({"name": "internal", "type": "http", "target": "http://127.0.0.1:9/", "interval_secs": 3600}))).await;
    api(
        &stack,
        Method::POST,
        "/api/v1/status-pages",
        &key,
        Some(json!({"slug": "acme", "title": "Acme status",
                    "groups": [{"name": "Services", "monitor_ids": [monitor["id"]]}]})),
    )
    .await;
    let starts = (Utc::now() + Span::hours(2))
        .date_naive()
        .and_hms_opt(0, 0, 0)
        .unwrap()
        .and_utc()
        + Span::days(1);
    let ends = starts + Span::hours(2);
    api(
        &stack,
        Method::POST,
        "/api/v1/maintenance-windows",
        &key,
        Some(
            json!({"name": "Database upgrade", "monitor_ids": [monitor["id"]], "effect": "silence",
                    "starts_at": starts, "ends_at": ends}),
        ),
    )
    .await;
    api(
        &stack,
        Method::POST,
        "/api/v1/maintenance-windows",
        &key,
        Some(
            json!({"name": "Not shown", "monitor_ids": [other["id"]], "effect": "pause",
                    "starts_at": starts, "ends_at": ends}),
        ),
    )
    .await;
    refreshed(&shared).await;

    let html = reqwest::get(format!("{base}/status/acme"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(html.contains("Scheduled maintenance"), "{html}");
    assert!(html.contains("Database upgrade"));
    assert!(
        html.contains(&format!(
            "<time datetime=\"{}\">",
            starts.format("%Y-%m-%dT%H:%M:%SZ")
        )),
        "{html}"
    );
    assert!(html.contains(&format!(
        "<time datetime=\"{}\">",
        ends.format("%Y-%m-%dT%H:%M:%SZ")
    )));
    assert!(!html.contains("Not shown"));
    assert!(
        !html.contains("silence") && !html.contains("127.0.0.1"),
        "no internals"
    );
}
