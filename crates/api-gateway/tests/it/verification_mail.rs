//! Verification email is not a relay: one per contact per interval (the
//! creation email aside), a daily cap per user, nothing for a PATCH that
//! keeps the address, and the limits hold against concurrent requests.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::schema::alert_deliveries;

const CONTACTS: &str = "/api/v1/alert-contacts";

async fn create_email(app: &TestApp, key: &str, address: &str) -> Value {
    let req = json!({"name": "n", "type": "email", "value": address});
    let (status, body) = app.post(CONTACTS, key, req).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// Verification emails queued for a contact (every one ever requested).
async fn emails(app: &TestApp, contact_id: i64) -> i64 {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    alert_deliveries::table
        .filter(alert_deliveries::contact_id.eq(contact_id))
        .filter(alert_deliveries::kind.eq("verification"))
        .count()
        .get_result(&mut conn)
        .await
        .unwrap()
}

/// Moves every logged verification email of organisation `org_id` `secs`
/// into the past, as if that much time had gone by (no sleeping in tests).
async fn age_log(app: &TestApp, org_id: i64, secs: i64) {
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(
        "UPDATE verification_mail_log SET sent_at = sent_at - make_interval(secs => $2)
          WHERE org_id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(org_id)
    .bind::<diesel::sql_types::Double, _>(secs as f64)
    .execute(&mut conn)
    .await
    .unwrap();
}

/// POST .../resend-verification: status, `Retry-After` (if any), body.
async fn resend(app: &TestApp, key: &str, id: i64) -> (StatusCode, Option<u64>, Value) {
    let res = app
        .client
        .request(
            Method::POST,
            app.url(&format!("{CONTACTS}/{id}/resend-verification")),
        )
        .bearer_auth(key)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let retry_after = res
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().parse().expect("whole seconds"));
    (status, retry_after, res.json().await.expect("a JSON body"))
}

fn assert_limited(
    (status, retry_after, body): (StatusCode, Option<u64>, Value),
    max_wait: u64,
    names: &str,
) {
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS, "{body}");
    let wait = retry_after.expect("Retry-After");
    assert!((1..=max_wait).contains(&wait), "Retry-After {wait}");
    assert_eq!(body["error"], "rate limit exceeded", "{body}");
    assert_eq!(body["details"][0]["field"], "verification_email", "{body}");
    let message = body["details"][0]["message"].as_str().unwrap();
    assert!(message.contains(names), "{message}");
}

#[tokio::test]
async fn a_contact_is_mailed_once_per_interval_and_a_limited_patch_saves_without_mail() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let c = create_email(&app, &key, "a@example.com").await;
    let id = c["id"].as_i64().unwrap();
    let path = format!("{CONTACTS}/{id}");
    assert_eq!(c["verification_link_sent"], true, "{c}");
    assert_eq!(emails(&app, id).await, 1);

    // Correcting the address right after creating the contact still sends.
    let (status, b) = app
        .patch(&path, &key, json!({"value": "b@example.com"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    assert_eq!(b["verification_link_sent"], true, "{b}");
    assert_eq!(emails(&app, id).await, 2);

    // Another change within the interval is saved, and mails nobody.
    let (status, changed) = app
        .patch(&path, &key, json!({"value": "c@example.com"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["value"], "c@example.com");
    assert_eq!(changed["verified"], false);
    assert_eq!(changed["verification_link_sent"], false, "{changed}");
    assert_eq!(emails(&app, id).await, 2);
    assert_eq!(app.get(&path, &key).await.1, changed, "stored as answered");

    // Repeating the address sends nothing, limit or not.
    let (status, same) = app
        .patch(&path, &key, json!({"value": "c@example.com"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(emails(&app, id).await, 2);

    assert_limited(resend(&app, &key, id).await, 600, "per contact");
    assert_eq!(emails(&app, id).await, 2);

    // Once the interval has passed, one resend goes out, then the limit holds again.
    age_log(&app, user_id, 601).await;
    let (status, _, sent) = resend(&app, &key, id).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    assert_eq!(sent["value"], "c@example.com");
    assert_eq!(sent["verification_link_sent"], true, "{sent}");
    assert_eq!(emails(&app, id).await, 3);
    assert_limited(resend(&app, &key, id).await, 600, "per contact");
    let (status, same) = app
        .patch(&path, &key, json!({"value": "c@example.com"}))
        .await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(
        same["verification_link_sent"], true,
        "the link is still out"
    );
}

#[tokio::test]
async fn resend_is_for_unverified_email_contacts_of_the_caller() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, other) = app.new_user("other").await;
    let c = create_email(&app, &key, "a@example.com").await;
    let id = c["id"].as_i64().unwrap();
    let (status, _, body) = resend(&app, &other, id).await;
    assert_eq!(
        (status, body),
        (StatusCode::NOT_FOUND, json!({"error": "not found"}))
    );

    let req = json!({"name": "s", "type": "slack", "value": "https://hooks.slack.com/services/x"});
    let (_, slack) = app.post(CONTACTS, &key, req).await;
    assert!(slack.get("verification_link_sent").is_none(), "{slack}");
    let (status, _, body) = resend(&app, &key, slack["id"].as_i64().unwrap()).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body, json!({"error": "contact already verified"}));
}

#[tokio::test]
async fn the_daily_cap_counts_every_email_of_an_organisation_and_only_its() {
    let app = spawn_app_with(|s| s.verification_mail.daily_cap_per_user = 3).await;
    let (user_id, key) = app.new_user("ops").await;
    for i in 0..3 {
        let c = create_email(&app, &key, &format!("{i}@example.com")).await;
        assert_eq!(c["verification_link_sent"], true, "{c}");
    }
    // Past the cap the contact is created all the same, without an email.
    let capped = create_email(&app, &key, "3@example.com").await;
    let id = capped["id"].as_i64().unwrap();
    assert_eq!(capped["verified"], false);
    assert_eq!(capped["verification_link_sent"], false, "{capped}");
    assert_eq!(emails(&app, id).await, 0);
    assert_limited(resend(&app, &key, id).await, 86_400, "per organisation");

    let (_, other) = app.new_user("other").await;
    let theirs = create_email(&app, &other, "x@example.com").await;
    assert_eq!(theirs["verification_link_sent"], true, "another user's cap");

    // A place frees when the oldest email of the window is a day old.
    age_log(&app, user_id, 86_401).await;
    let (status, _, sent) = resend(&app, &key, id).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{sent}");
    assert_eq!(emails(&app, id).await, 1);
    // Retention: the day-old rows went when the new one was logged.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let logged: i64 =
        diesel::sql_query("SELECT count(*) AS n FROM verification_mail_log WHERE org_id = $1")
            .bind::<diesel::sql_types::BigInt, _>(user_id)
            .get_result::<Count>(&mut conn)
            .await
            .unwrap()
            .n;
    assert_eq!(logged, 1, "the log keeps only what its windows need");
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    n: i64,
}

#[tokio::test]
async fn concurrent_requests_cannot_pass_a_limit_together() {
    let app = spawn_app_with(|s| s.verification_mail.daily_cap_per_user = 4).await;
    let (_, key) = app.new_user("ops").await;
    let c = create_email(&app, &key, "a@example.com").await;
    let id = c["id"].as_i64().unwrap();

    // One contact, many resends at once: one email (the creation one aside).
    let answers = futures::future::join_all((0..8).map(|_| resend(&app, &key, id))).await;
    let sent = answers
        .iter()
        .filter(|(s, _, _)| *s == StatusCode::ACCEPTED)
        .count();
    assert_eq!(sent, 1, "{answers:?}");
    assert!(answers
        .iter()
        .all(|(s, _, _)| [StatusCode::ACCEPTED, StatusCode::TOO_MANY_REQUESTS].contains(s)));
    assert_eq!(emails(&app, id).await, 2);

    // Many creates at once: the two places left under the cap go to two.
    let created = futures::future::join_all((0..6).map(|i| {
        let address = format!("c{i}@example.com");
        let (app, key) = (&app, &key);
        async move { create_email(app, key, &address).await }
    }))
    .await;
    let mailed = created
        .iter()
        .filter(|c| c["verification_link_sent"] == true)
        .count();
    assert_eq!(mailed, 2, "{created:?}");
}
