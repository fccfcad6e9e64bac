//! Email verification links, the test alert and the delivery log.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sha2::Sha256;
use std::time::Duration;
use uptime_db::models::{AlertContact, NewAlertContact};
use uptime_testkit::endless::EndlessBodyServer;
use uptime_testkit::receiver::{Reply, WebhookReceiver};
use uptime_testkit::smtp::SmtpServer;

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

async fn contact(
    app: &TestApp,
    user_id: i64,
    kind: &str,
    value: &str,
    verified: bool,
) -> AlertContact {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::contacts::create(
        &mut conn,
        &NewAlertContact {
            org_id: user_id,
            kind: kind.into(),
            name: format!("{kind} contact"),
            value: value.into(),
            verified,
            verification_token_sha256: None,
            signing_secret: (kind == "webhook").then(|| SECRET.to_string()),
            secret_sealed: None,
            options: serde_json::json!({}),
            event_kinds: None,
            min_severity: 0,
        },
    )
    .await
    .unwrap()
}

/// The link of the contact's newest verification email, read from its queued delivery.
async fn verification_link(app: &TestApp, contact_id: i64) -> String {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let rows = uptime_db::deliveries::list_for_contact(&mut conn, contact_id, 10)
        .await
        .unwrap();
    let (delivery, _) = rows
        .iter()
        .find(|(d, _)| d.kind == "verification" && d.status == "pending")
        .unwrap_or_else(|| {
            panic!("no pending verification email for contact {contact_id}: {rows:?}")
        });
    delivery.payload["verify_url"].as_str().unwrap().to_string()
}

/// The path part of a link on the public base URL.
fn path_of(link: &str, app: &TestApp) -> String {
    let base = &app.state.settings.http.public_base_url;
    link.strip_prefix(base.as_str())
        .unwrap_or_else(|| panic!("{link} is not on {base}"))
        .to_string()
}

async fn is_verified(app: &TestApp, user_id: i64, id: i64) -> bool {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::contacts::get(&mut conn, user_id, id)
        .await
        .unwrap()
        .unwrap()
        .verified
}

#[tokio::test]
async fn a_verification_link_works_once_and_only_for_its_contact() {
    let app =
        spawn_app_with(|s| s.http.public_base_url = "https://uptime.example.com/".into()).await;
    let (user, _) = app.new_user("ops").await;
    let a = contact(&app, user, "email", "a@example.com", false).await;
    let b = contact(&app, user, "email", "b@example.com", false).await;
    api_gateway::verification::request_email_verification(&app.state, &a)
        .await
        .unwrap();
    api_gateway::verification::request_email_verification(&app.state, &b)
        .await
        .unwrap();

    let link_a = verification_link(&app, a.id).await;
    let link_b = verification_link(&app, b.id).await;
    assert!(
        link_a.starts_with("https://uptime.example.com/api/v1/alert-contacts/verify/"),
        "{link_a}"
    );
    assert_ne!(link_a, link_b);
    let base = "https://uptime.example.com";
    let path_a = link_a.strip_prefix(base).unwrap();
    let path_b = link_b.strip_prefix(base).unwrap();

    // No API key needed; A's token verifies A and nothing else.
    let (status, body) = app.call(Method::GET, path_a, None, None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"status": "verified", "contact_id": a.id}));
    assert!(is_verified(&app, user, a.id).await);
    assert!(
        !is_verified(&app, user, b.id).await,
        "A's token must not verify B"
    );

    // Used once: gone.
    let (status, body) = app.call(Method::GET, path_a, None, None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body, json!({"error": "not found"}));

    // B's own link still works.
    let (status, body) = app.call(Method::GET, path_b, None, None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["contact_id"], b.id);

    for junk in [
        "nope",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "%2e%2e",
    ] {
        let (status, body) = app
            .call(
                Method::GET,
                &format!("/api/v1/alert-contacts/verify/{junk}"),
                None,
                None,
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{junk}");
        assert_eq!(body["error"], "not found");
    }
}

#[tokio::test]
async fn a_verification_link_expires_after_the_configured_hours() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    use uptime_db::schema::alert_contacts;
    let app = spawn_app_with(|s| {
        s.http.public_base_url = "https://uptime.example.com/".into();
        s.retention.verification_token_hours = 24;
    })
    .await;
    let (user, _) = app.new_user("ops").await;
    let old = contact(&app, user, "email", "old@example.com", false).await;
    let fresh = contact(&app, user, "email", "fresh@example.com", false).await;
    for c in [&old, &fresh] {
        api_gateway::verification::request_email_verification(&app.state, c)
            .await
            .unwrap();
    }
    let link_old = verification_link(&app, old.id).await;
    let link_fresh = verification_link(&app, fresh.id).await;
    // Both issued a while ago: one just past the 24 hours, one just inside.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    for (id, hours) in [(old.id, 25), (fresh.id, 23)] {
        diesel::update(alert_contacts::table.find(id))
            .set(
                alert_contacts::updated_at.eq(chrono::Utc::now() - chrono::TimeDelta::hours(hours)),
            )
            .execute(&mut conn)
            .await
            .unwrap();
    }
    drop(conn);

    let (status, body) = app
        .call(
            Method::GET,
            link_old.strip_prefix("https://uptime.example.com").unwrap(),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "an expired link: {body}");
    assert!(!is_verified(&app, user, old.id).await);
    let (status, body) = app
        .call(
            Method::GET,
            link_fresh
                .strip_prefix("https://uptime.example.com")
                .unwrap(),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(is_verified(&app, user, fresh.id).await);
}

#[tokio::test]
async fn a_new_verification_request_retires_the_previous_link() {
    let app = spawn_app().await;
    let (user, _) = app.new_user("ops").await;
    let a = contact(&app, user, "email", "a@example.com", false).await;
    api_gateway::verification::request_email_verification(&app.state, &a)
        .await
        .unwrap();
    let old = verification_link(&app, a.id).await;
    api_gateway::verification::request_email_verification(&app.state, &a)
        .await
        .unwrap();
    let new = verification_link(&app, a.id).await;
    assert_ne!(old, new);

    let (status, _) = app
        .call(Method::GET, &path_of(&old, &app), None, None)
        .await;
    assert_eq!(
        status,
        StatusCode::NOT_FOUND,
        "the old link no longer works"
    );
    let (status, _) = app
        .call(Method::GET, &path_of(&new, &app), None, None)
        .await;
    assert_eq!(status, StatusCode::OK);

    // The superseded email is not sent any more; the log says why.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let rows = uptime_db::deliveries::list_for_contact(&mut conn, a.id, 10)
        .await
        .unwrap();
    let superseded: Vec<_> = rows.iter().filter(|(d, _)| d.status == "failed").collect();
    assert_eq!(superseded.len(), 1);
    assert!(superseded[0]
        .0
        .last_error
        .as_deref()
        .unwrap()
        .contains("superseded"));
}

#[tokio::test]
async fn creating_an_email_contact_queues_a_working_verification_link() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let (status, created) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"type": "email", "name": "On call", "value": "oncall@example.com"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["verified"], false);
    let id = created["id"].as_i64().unwrap();

    let link = verification_link(&app, id).await;
    let (status, body) = app
        .call(Method::GET, &path_of(&link, &app), None, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert!(is_verified(&app, user, id).await);
    let (_, shown) = app.get(&format!("/api/v1/alert-contacts/{id}"), &key).await;
    assert_eq!(shown["verified"], true, "{shown}");
}

/// Independent Standard Webhooks check: HMAC-SHA256 over `id.timestamp.body`.
fn signature_is_valid(req: &uptime_testkit::receiver::ReceivedRequest) -> bool {
    let id = req.header("webhook-id").unwrap();
    let ts = req.header("webhook-timestamp").unwrap();
    let sig = req.header("webhook-signature").unwrap();
    let key = STANDARD
        .decode(SECRET.strip_prefix("whsec_").unwrap())
        .unwrap();
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).unwrap();
    mac.update(format!("{id}.{ts}.").as_bytes());
    mac.update(&req.body);
    sig == format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()))
}

#[tokio::test]
async fn the_test_alert_answers_sent_failed_unverified_or_not_found() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let (other_user, other_key) = app.new_user("someone else").await;
    let good = WebhookReceiver::start().await;
    let bad = WebhookReceiver::start().await;
    bad.set_default(Reply::status(500));
    let good_contact = contact(&app, user, "webhook", &good.url("/ok"), true).await;
    let bad_contact = contact(&app, user, "webhook", &bad.url("/broken"), true).await;
    let unverified = contact(&app, user, "email", "new@example.com", false).await;
    let foreign = contact(&app, other_user, "webhook", &good.url("/theirs"), true).await;

    // 200: the receiver got a signed `test` event.
    let (status, body) = app
        .post(
            &format!("/api/v1/alert-contacts/{}/test", good_contact.id),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body, json!({"status": "sent"}));
    let received = good.received();
    assert_eq!(received.len(), 1, "sent synchronously, before the answer");
    assert!(signature_is_valid(&received[0]));
    let event = received[0].json();
    assert_eq!(event["event"], "test");
    assert!(event["monitor"].is_null());
    assert!(event["occurred_at"].is_string());

    // 502 with the cause.
    let (status, body) = app
        .post(
            &format!("/api/v1/alert-contacts/{}/test", bad_contact.id),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    assert_eq!(body["error"], "alert delivery failed");
    assert_eq!(body["details"][0]["field"], "delivery");
    let cause = body["details"][0]["message"].as_str().unwrap();
    assert!(cause.contains("500"), "{cause}");
    assert_eq!(bad.received().len(), 1, "a test alert is attempted once");

    // 409 for an unverified email contact.
    let (status, body) = app
        .post(
            &format!("/api/v1/alert-contacts/{}/test", unverified.id),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body, json!({"error": "contact not verified"}));

    // 404 for another user's contact and for none at all; nothing is sent.
    for id in [foreign.id, 999_999] {
        let (status, body) = app
            .post(
                &format!("/api/v1/alert-contacts/{id}/test"),
                &key,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{id}");
        assert_eq!(body, json!({"error": "not found"}));
    }
    assert_eq!(good.received().len(), 1);
    let (status, _) = app
        .call(
            Method::POST,
            &format!("/api/v1/alert-contacts/{}/test", good_contact.id),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Both test alerts are in the log, with their attempt.
    let (status, log) = app
        .get(
            &format!("/api/v1/alert-contacts/{}/deliveries", good_contact.id),
            &key,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{log}");
    let d = &log["deliveries"][0];
    assert_eq!(d["kind"], "test");
    assert_eq!(d["status"], "delivered");
    assert_eq!(d["attempts"], 1);
    assert_eq!(d["id"], received[0].header("webhook-id").unwrap());
    assert_eq!(d["attempts_log"][0]["outcome"], "delivered");
    assert_eq!(d["attempts_log"][0]["http_status"], 200);
    let (_, log) = app
        .get(
            &format!("/api/v1/alert-contacts/{}/deliveries", bad_contact.id),
            &key,
        )
        .await;
    let d = &log["deliveries"][0];
    assert_eq!(d["status"], "failed");
    assert_eq!(d["attempts_log"][0]["http_status"], 500);
    assert!(d["last_error"].as_str().unwrap().contains("500"));

    // The log is the owner's alone.
    let (status, _) = app
        .get(
            &format!("/api/v1/alert-contacts/{}/deliveries", good_contact.id),
            &other_key,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// A receiver chooses how long its error body is; the gateway reads only a
/// few KiB of it (an endless one once grew it by gigabytes). Seen failing
/// with the whole body read: the client read until its timeout, hundreds of
/// MiB, and the snippet was lost.
#[tokio::test]
async fn a_test_alert_reads_only_the_head_of_an_endless_error_body() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let endless = EndlessBodyServer::start().await;
    let hook = contact(&app, user, "webhook", &endless.url("/endless"), true).await;

    let (status, body) = app
        .post(
            &format!("/api/v1/alert-contacts/{}/test", hook.id),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_GATEWAY, "{body}");
    let cause = body["details"][0]["message"].as_str().unwrap();
    assert!(cause.contains("500"), "{cause}");
    assert!(
        cause.contains("xxxx"),
        "the snippet of the body is kept: {cause}"
    );

    // The gateway closed the connection after the head: what the server got
    // to write is the kernel's socket buffers, not the body.
    endless.wait_closed(1, Duration::from_secs(60)).await;
    let written = endless.bytes_written();
    assert!(
        written < 64 * 1024 * 1024,
        "{written} body bytes were taken from the receiver"
    );
}

#[tokio::test]
async fn the_test_alert_to_an_email_contact_goes_through_smtp() {
    let smtp = SmtpServer::start().await;
    let port = smtp.port();
    let app = spawn_app_with(move |s| {
        s.smtp.host = "127.0.0.1".into();
        s.smtp.port = port;
        s.smtp.tls = uptime_config::SmtpTls::None;
        s.smtp.from = "Uptime <alerts@uptime.test>".into();
    })
    .await;
    let (user, key) = app.new_user("ops").await;
    let verified = contact(&app, user, "email", "oncall@example.com", true).await;

    let (status, body) = app
        .post(
            &format!("/api/v1/alert-contacts/{}/test", verified.id),
            &key,
            json!({}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let mails = smtp.wait_for(1, Duration::from_secs(5)).await;
    assert_eq!(mails[0].rcpt_to, ["oncall@example.com"]);
    assert_eq!(
        mails[0].header("subject").unwrap(),
        "[TEST] Test alert from Uptime"
    );
    assert!(
        mails[0].text_body().contains("test alert"),
        "{}",
        mails[0].text_body()
    );
}

#[tokio::test]
async fn the_delivery_log_lists_newest_first_and_checks_its_limit() {
    let app = spawn_app().await;
    let (user, key) = app.new_user("ops").await;
    let hook = WebhookReceiver::start().await;
    let c = contact(&app, user, "webhook", &hook.url("/h"), true).await;
    for _ in 0..3 {
        let (status, _) = app
            .post(
                &format!("/api/v1/alert-contacts/{}/test", c.id),
                &key,
                json!({}),
            )
            .await;
        assert_eq!(status, StatusCode::OK);
    }
    let path = format!("/api/v1/alert-contacts/{}/deliveries", c.id);
    let (_, all) = app.get(&path, &key).await;
    let created: Vec<&str> = all["deliveries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["created_at"].as_str().unwrap())
        .collect();
    assert_eq!(created.len(), 3);
    assert!(
        created.windows(2).all(|w| w[0] >= w[1]),
        "newest first: {created:?}"
    );

    let (status, two) = app.get(&format!("{path}?limit=2"), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(two["deliveries"].as_array().unwrap().len(), 2);
    for bad in ["0", "101", "x"] {
        let (status, body) = app.get(&format!("{path}?limit={bad}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
    }
}
