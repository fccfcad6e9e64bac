//! Incidents through the API: listed, filtered and paged, read, and
//! acknowledged with a key (one audit entry, in the same transaction) or
//! with the signed link of an alert (a page first, the POST acknowledges).
//! The incidents are written as the recorder writes them
//! (`uptime_db::incidents::open`); the recorder's own tests cover when.

use crate::common::{spawn_app_with, TestApp};
use chrono::{Duration, Utc};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::incidents::{IncidentAlert, NewIncident};
use uptime_db::organisations::{Role, Scope};
use uuid::Uuid;

const ACK_SECRET: &str = "q0pWR1NVhLJkpbXvIpUO3i0c5WzQg3iyXH2i7Lq1P1c=";

async fn app() -> TestApp {
    spawn_app_with(|s| {
        s.ack_links.secret = ACK_SECRET.into();
        s.ack_links.public_base_url = "https://uptime.example".into();
    })
    .await
}

async fn monitor(app: &TestApp, key: &str, name: &str) -> i64 {
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            key,
            json!({"name": name, "type": "http", "target": "https://example.com", "interval_secs": 60}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_i64().unwrap()
}

/// An incident of `monitor_id` that started `minutes_ago`, resolved when `resolved`.
async fn incident(
    app: &TestApp,
    org_id: i64,
    monitor_id: i64,
    minutes_ago: i64,
    resolved: bool,
) -> Uuid {
    let started_at = Utc::now() - Duration::minutes(minutes_ago);
    let id = Uuid::new_v4();
    let new = NewIncident {
        id,
        org_id,
        monitor_id,
        started_at,
        resolved_at: resolved.then(|| started_at + Duration::seconds(30)),
        cause: Some("connection refused".into()),
        alerts: vec![IncidentAlert {
            event_id: Uuid::new_v4(),
            kind: "transition".into(),
            status: "down".into(),
            at: started_at,
            held: None,
        }],
    };
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    uptime_db::incidents::open(&mut conn, &[new]).await.unwrap();
    id
}

fn ids(page: &Value) -> Vec<String> {
    page["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["id"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn incidents_are_listed_newest_first_filtered_and_paged() {
    let app = app().await;
    let (org, key) = app.new_user("acme").await;
    let shop = monitor(&app, &key, "Shop").await;
    let api = monitor(&app, &key, "API").await;
    let old = incident(&app, org, shop, 60, true).await;
    let open_api = incident(&app, org, api, 30, false).await;
    let open_shop = incident(&app, org, shop, 10, false).await;

    let (status, page) = app.get("/api/v1/incidents", &key).await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let newest_first = [open_shop, open_api, old].map(|i| i.to_string());
    assert_eq!(ids(&page), newest_first);
    let first = &page["incidents"][0];
    assert_eq!(first["state"], "open");
    assert_eq!(first["monitor_id"], shop);
    assert_eq!(first["cause"], "connection refused");
    assert_eq!(first["acknowledged"], Value::Null);
    assert_eq!(first["alerts"][0]["kind"], "transition");

    let (_, resolved) = app.get("/api/v1/incidents?state=resolved", &key).await;
    assert_eq!(ids(&resolved), [old.to_string()]);
    let (_, of_shop) = app
        .get(
            &format!("/api/v1/incidents?monitor_id={shop}&state=open"),
            &key,
        )
        .await;
    assert_eq!(ids(&of_shop), [open_shop.to_string()]);

    // Pages of one, following the cursor.
    let mut seen = Vec::new();
    let mut path = "/api/v1/incidents?limit=1".to_string();
    loop {
        let (status, page) = app.get(&path, &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        seen.extend(ids(&page));
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/v1/incidents?limit=1&cursor={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, newest_first);

    // Bad input is a 400 naming the parameter.
    for (query, field) in [
        ("state=broken", "state"),
        ("limit=0", "limit"),
        ("cursor=nope", "cursor"),
        ("monitor_id=0", "monitor_id"),
    ] {
        let (status, body) = app.get(&format!("/api/v1/incidents?{query}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{query}: {body}");
        assert!(body.to_string().contains(field), "{query}: {body}");
    }

    // Another organisation sees none of them.
    let (_, other_key) = app.new_user("other").await;
    let (_, theirs) = app.get("/api/v1/incidents", &other_key).await;
    assert_eq!(ids(&theirs), Vec::<String>::new());
    let (status, _) = app
        .get(&format!("/api/v1/incidents/{open_shop}"), &other_key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get("/api/v1/incidents/not-a-uuid", &key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn acknowledging_with_a_key_records_who_once_with_one_audit_entry() {
    let app = app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;
    let write_key = app.key_for(org, editor, Scope::Write).await;
    let read_key = app.key_for(org, editor, Scope::Read).await;
    let shop = monitor(&app, &owner_key, "Shop").await;
    let id = incident(&app, org, shop, 5, false).await;
    let path = format!("/api/v1/incidents/{id}/acknowledge");

    let (status, body) = app.call(Method::POST, &path, Some(&read_key), None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");

    let (status, acked) = app.call(Method::POST, &path, Some(&write_key), None).await;
    assert_eq!(status, StatusCode::OK, "{acked}");
    assert_eq!(acked["state"], "acknowledged");
    assert_eq!(acked["acknowledged"]["via"], "api");
    assert_eq!(acked["acknowledged"]["user_id"], editor);
    assert_eq!(acked["acknowledged"]["key_prefix"], &write_key[..8]);

    // Again, by someone else: the first acknowledgement stands, no entry.
    let (status, again) = app.call(Method::POST, &path, Some(&owner_key), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(again["acknowledged"], acked["acknowledged"]);

    let (_, log) = app
        .get("/api/v1/audit-log?resource_kind=incident", &owner_key)
        .await;
    let entries = log["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{log}");
    assert_eq!(entries[0]["action"], "acknowledge");
    assert_eq!(entries[0]["actor_user_id"], editor);
    assert_eq!(
        entries[0]["changes"]["incident_id"]["after"],
        id.to_string()
    );

    // Unknown or another organisation's: 404 and no entry.
    let (_, other_key) = app.new_user("other").await;
    let (status, _) = app.call(Method::POST, &path, Some(&other_key), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let unknown = format!("/api/v1/incidents/{}/acknowledge", Uuid::new_v4());
    let (status, _) = app
        .call(Method::POST, &unknown, Some(&owner_key), None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, log) = app
        .get("/api/v1/audit-log?resource_kind=incident", &owner_key)
        .await;
    assert_eq!(log["entries"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn the_signed_link_shows_a_page_and_its_button_acknowledges() {
    let app = app().await;
    let (org, key) = app.new_user("acme").await;
    let shop = monitor(&app, &key, "Shop").await;
    let id = incident(&app, org, shop, 5, false).await;
    // As the notifier signs it for contact 77.
    let links = uptime_alerts::AckLinks::from_settings(&app.state.settings.ack_links)
        .unwrap()
        .unwrap();
    let url = links.url(id, 77, Utc::now());
    let path = url.strip_prefix("https://uptime.example").unwrap();

    // Looking (what a mail scanner does) changes nothing.
    let page = app.client.get(app.url(path)).send().await.unwrap();
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.headers()["content-type"]
        .to_str()
        .unwrap()
        .starts_with("text/html"));
    let text = page.text().await.unwrap();
    assert!(text.contains("<form method=\"post\">"), "{text}");
    let (_, incident) = app.get(&format!("/api/v1/incidents/{id}"), &key).await;
    assert_eq!(incident["state"], "open");

    // A tracking parameter is ignored; the POST acknowledges.
    let done = app
        .client
        .post(app.url(&format!("{path}?utm_source=mail")))
        .send()
        .await
        .unwrap();
    assert_eq!(done.status(), StatusCode::OK);
    assert!(done.text().await.unwrap().contains("acknowledged"));
    let (_, incident) = app.get(&format!("/api/v1/incidents/{id}"), &key).await;
    assert_eq!(incident["state"], "acknowledged");
    assert_eq!(incident["acknowledged"]["via"], "link");
    assert_eq!(incident["acknowledged"]["contact_id"], 77);

    // A forged, expired or malformed token is a 404.
    let expired = links.token(id, 77, Utc::now() - Duration::days(31));
    let mut forged = links.token(id, 77, Utc::now());
    forged.replace_range(0..1, if forged.starts_with('A') { "B" } else { "A" });
    for token in [expired, forged, "x".repeat(300), "abc".into()] {
        for method in [Method::GET, Method::POST] {
            let (status, body) = app
                .call(
                    method.clone(),
                    &format!("/api/v1/incidents/ack/{token}"),
                    None,
                    None,
                )
                .await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{method} {token}: {body}");
        }
    }
}

#[tokio::test]
async fn without_a_secret_every_link_is_not_found() {
    let app = crate::common::spawn_app().await;
    let (status, _) = app
        .call(
            Method::GET,
            &format!(
                "/api/v1/incidents/ack/{}.{}",
                "A".repeat(43),
                "B".repeat(43)
            ),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
