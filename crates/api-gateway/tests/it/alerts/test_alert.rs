//! The test alert: to webhooks (signed), to email, and what it reads back.

use super::{contact, SECRET};
use crate::common::{spawn_app, spawn_app_with};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use reqwest::{Method, StatusCode};
use serde_json::json;
use sha2::Sha256;
use std::time::Duration;
use uptime_testkit::endless::EndlessBodyServer;
use uptime_testkit::receiver::{Reply, WebhookReceiver};
use uptime_testkit::smtp::SmtpServer;

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
