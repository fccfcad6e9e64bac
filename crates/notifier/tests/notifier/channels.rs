//! What each channel receives for one alert.

use crate::common::*;
use chrono::{Duration as ChronoDuration, Utc};
use serde_json::Value;
use std::time::Duration;
use uptime_contracts::SslWarning;
use uptime_contracts::*;
use uptime_testkit::receiver::WebhookReceiver;
use uuid::Uuid;

const DEADLINE: Duration = Duration::from_secs(15);

#[tokio::test]
async fn every_channel_gets_the_facts_of_a_down_alert() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    let hook = WebhookReceiver::start().await;
    let slack = WebhookReceiver::start().await;
    world
        .contact(user, monitor.id, "email", "oncall@example.com", true)
        .await;
    world
        .contact(
            user,
            monitor.id,
            "slack",
            &slack.url("/services/T0/B0/x"),
            true,
        )
        .await;
    let webhook = world
        .contact(
            user,
            monitor.id,
            "webhook",
            &hook.url("/hooks/uptime"),
            true,
        )
        .await;
    let _notifier = Running::start(world.settings()).await;

    let at = Utc::now();
    let since = at - ChronoDuration::seconds(2 * 3600 + 5 * 60);
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, since, at);
    world.publish_change(&event).await;

    // Email: subject and the facts in the body.
    let mails = world.smtp.wait_for(1, DEADLINE).await;
    let mail = &mails[0];
    assert_eq!(mail.rcpt_to, vec!["oncall@example.com"]);
    assert_eq!(mail.mail_from, "alerts@uptime.test");
    assert_eq!(mail.header("subject").unwrap(), "[DOWN] Shop is down");
    let body = mail.text_body();
    for fact in [
        "Monitor \"Shop\" is DOWN.",
        "Target: https://shop.example.com/health",
        "Change: up -> down",
        "Previously: up for 2h 5m",
        "HTTP status: 503",
        "Latency: 1234 ms",
        "Error: expected status 200, got 503",
        &event.event_id.to_string(),
    ] {
        assert!(body.contains(fact), "email body lacks {fact:?}:\n{body}");
    }

    // Slack: a readable text plus blocks with the same facts.
    let slack_msg = slack.wait_for(1, DEADLINE).await[0].json();
    let text = slack_msg["text"].as_str().unwrap();
    assert!(text.contains("[DOWN] Shop is down"), "{text}");
    let blocks = slack_msg["blocks"].as_array().unwrap();
    assert_eq!(blocks[0]["type"], "header");
    let all = slack_msg.to_string();
    for fact in [
        "up -> down",
        "503",
        "1234 ms",
        "expected status 200, got 503",
    ] {
        assert!(all.contains(fact), "slack message lacks {fact:?}: {all}");
    }

    // Webhook: the JSON body, signed.
    let requests = hook.wait_for(1, DEADLINE).await;
    let req = &requests[0];
    assert_eq!(req.method, "POST");
    assert_eq!(req.path, "/hooks/uptime");
    assert_eq!(req.header("content-type"), Some("application/json"));
    assert_signed(req);
    let body = req.json();
    assert_eq!(body["event"], "monitor.down");
    assert_eq!(body["event_id"], event.event_id.to_string());
    assert_eq!(
        body["monitor"],
        serde_json::json!({"id": monitor.id, "name": "Shop", "type": "http", "target": "https://shop.example.com/health"})
    );
    assert_eq!(body["previous_status"], "up");
    assert_eq!(body["status"], "down");
    assert_eq!(parse_time(&body["occurred_at"]), at);
    assert_eq!(parse_time(&body["previous_since"]), since);
    assert_eq!(body["check"]["check_id"], event.check.check_id.to_string());
    assert_eq!(body["check"]["http_status"], 503);
    assert_eq!(body["check"]["latency_ms"], 1234);
    assert_eq!(body["check"]["error"], "expected status 200, got 503");
    assert_eq!(body["check"]["status"], "down");

    // The log: three deliveries, each delivered on the first attempt; the
    // webhook's id is the delivery's id.
    let rows = world.settled(event.event_id, 3, DEADLINE).await;
    for (d, attempts) in &rows {
        assert_eq!(d.status, "delivered", "{d:?}");
        assert_eq!(d.attempts, 1);
        assert_eq!(attempts.len(), 1);
        assert_eq!(attempts[0].outcome, "delivered");
    }
    let webhook_row = rows
        .iter()
        .find(|(d, _)| d.contact_id == webhook.id)
        .unwrap();
    assert_eq!(
        req.header("webhook-id"),
        Some(webhook_row.0.id.to_string().as_str())
    );
    assert_eq!(webhook_row.1[0].http_status, Some(200));
}

#[tokio::test]
async fn a_certificate_warning_says_when_it_expires() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    let hook = WebhookReceiver::start().await;
    world
        .contact(user, monitor.id, "webhook", &hook.url("/h"), true)
        .await;
    world
        .contact(user, monitor.id, "email", "oncall@example.com", true)
        .await;
    let _notifier = Running::start(world.settings()).await;

    let now = Utc::now();
    let expires = now + ChronoDuration::days(6);
    let event = SslWarning {
        event_id: Uuid::new_v4(),
        monitor: monitor_ref(&monitor),
        ssl_expires_at: expires,
        days_left: 6,
        warn_days: 14,
        occurred_at: now,
        check: CheckRef {
            check_id: Uuid::new_v4(),
            trigger: Trigger::Scheduled,
            checked_at: now,
            status: MonitorStatus::Up,
            latency_ms: Some(80),
            http_status: Some(200),
            error: None,
        },
    };
    world
        .publish_with_id(&event.event_id.to_string(), &event)
        .await;

    let req = &hook.wait_for(1, DEADLINE).await[0];
    assert_signed(req);
    let body = req.json();
    assert_eq!(body["event"], "ssl.expiring");
    assert_eq!(body["days_left"], 6);
    assert_eq!(body["warn_days"], 14);
    assert_eq!(parse_time(&body["ssl_expires_at"]), expires);
    assert_eq!(body["monitor"]["name"], "Shop");
    assert_eq!(body["status"], "up");

    let mail = &world.smtp.wait_for(1, DEADLINE).await[0];
    assert_eq!(
        mail.header("subject").unwrap(),
        "[SSL] Shop: certificate expires in 6 day(s)"
    );
    assert!(
        mail.text_body().contains("Days left: 6"),
        "{}",
        mail.text_body()
    );
}

#[tokio::test]
async fn the_verification_email_carries_the_link_which_is_then_forgotten() {
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    let contact = world
        .contact(user, monitor.id, "email", "new@example.com", false)
        .await;
    let link = "https://uptime.example.com/api/v1/alert-contacts/verify/abcDEF123";
    let payload = serde_json::json!({"contact_name": "Ops mail", "verify_url": link});
    let delivery_id = uptime_db::deliveries::request_verification(
        &mut *world.conn().await,
        contact.id,
        &"0".repeat(64),
        &payload,
    )
    .await
    .unwrap();
    let _notifier = Running::start(world.settings()).await;

    let mail = &world.smtp.wait_for(1, DEADLINE).await[0];
    assert_eq!(mail.rcpt_to, vec!["new@example.com"]);
    assert!(mail.header("subject").unwrap().contains("Verify"));
    let body = mail.text_body();
    assert!(body.contains(link), "{body}");
    assert!(body.contains("Ops mail"), "{body}");

    let deadline = tokio::time::Instant::now() + DEADLINE;
    loop {
        let rows =
            uptime_db::deliveries::list_for_contact(&mut *world.conn().await, contact.id, 10)
                .await
                .unwrap();
        let (d, _) = rows.iter().find(|(d, _)| d.id == delivery_id).unwrap();
        if d.status == "delivered" {
            assert_eq!(d.kind, "verification");
            assert!(
                d.payload.get("verify_url").is_none(),
                "the link is scrubbed: {}",
                d.payload
            );
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not delivered: {d:?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn parse_time(v: &Value) -> chrono::DateTime<Utc> {
    chrono::DateTime::parse_from_rfc3339(v.as_str().unwrap_or_else(|| panic!("not a time: {v}")))
        .unwrap()
        .with_timezone(&Utc)
}

/// A Slack URL is a credential (issue 35): the gateway seals it with the
/// contact's credentials and keeps only its redaction in `value`. The
/// notifier opens it and posts to the whole URL.
#[tokio::test]
async fn a_sealed_slack_url_is_opened_and_posted_to() {
    use diesel::prelude::*;
    use diesel_async::RunQueryDsl;
    let world = World::start().await;
    let user = world.user("ops").await;
    let monitor = world.monitor(user, "Shop", true).await;
    let slack = WebhookReceiver::start().await;
    let url = slack.url("/services/T0/B0/s3cret");
    let contact = world
        .contact(
            user,
            monitor.id,
            "slack",
            &uptime_alerts::address::redact(&url),
            true,
        )
        .await;
    let secrets = uptime_testkit::secrets::test_secrets();
    let keyring = uptime_secrets::Keyring::from_settings(&secrets)
        .unwrap()
        .unwrap();
    let sealed = keyring
        .seal(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, &url)
        .unwrap();
    diesel::update(
        uptime_db::schema::alert_contacts::table
            .filter(uptime_db::schema::alert_contacts::id.eq(contact.id)),
    )
    .set(uptime_db::schema::alert_contacts::secret_sealed.eq(sealed))
    .execute(&mut *world.conn().await)
    .await
    .unwrap();
    let mut settings = world.settings();
    settings.secrets = secrets;
    let _notifier = Running::start(settings).await;

    let at = Utc::now();
    let event = change(&monitor, MonitorStatus::Up, MonitorStatus::Down, at, at);
    world.publish_change(&event).await;
    let got = slack.wait_for(1, DEADLINE).await;
    assert_eq!(got[0].path, "/services/T0/B0/s3cret");
    assert!(got[0].json()["text"].as_str().unwrap().contains("Shop"));
}
