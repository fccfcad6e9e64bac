//! Email verification links: once, only for their contact, expiring, retired
//! by a newer one.

use super::contact;
use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::json;

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
