//! Issue 20: one pagination style on every list: `?limit=` (1 to 100) and
//! `?cursor=` from the previous page's `next_cursor`.

use crate::check_support::{insert_monitor, insert_result};
use crate::common::{spawn_app, TestApp};
use chrono::{Duration, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::StatusCode;
use serde_json::{json, Value};
use uptime_db::schema::check_rounds;
use uptime_testkit::receiver::WebhookReceiver;
use uuid::Uuid;

/// Every item of a list, two at a time through the cursors; and the same
/// list in one page, to compare.
async fn walk(app: &TestApp, key: &str, path: &str, items: &str) -> (Vec<Value>, Vec<Value>) {
    let mut paged = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..50 {
        let url = match &cursor {
            None => format!("{path}?limit=2"),
            Some(c) => format!("{path}?limit=2&cursor={c}"),
        };
        let (status, page) = app.get(&url, key).await;
        assert_eq!(status, StatusCode::OK, "{url}: {page}");
        let got = page[items].as_array().unwrap();
        assert!(got.len() <= 2, "{url}: {page}");
        paged.extend(got.iter().cloned());
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => {
                assert!(page.get("next_cursor").is_some(), "{url}: null, not absent");
                let (_, whole) = app.get(&format!("{path}?limit=100"), key).await;
                return (paged, whole[items].as_array().unwrap().clone());
            }
        }
    }
    panic!("{path}: the cursors never end");
}

#[tokio::test]
async fn every_list_pages_with_limit_and_cursor() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;

    // API keys: the first one and four more.
    for i in 0..4 {
        let (status, _) = app
            .post("/api/v1/api-keys", &key, json!({"name": format!("k{i}")}))
            .await;
        assert_eq!(status, StatusCode::CREATED);
    }
    let (paged, whole) = walk(&app, &key, "/api/v1/api-keys", "api_keys").await;
    assert_eq!(paged.len(), 5);
    assert_eq!(paged, whole);

    // Rounds: five, two of them due at the same time.
    let monitor = insert_monitor(&app.state.pool, user_id, |m| {
        m.regions = Some(["eu", "us"].map(String::from).to_vec());
    })
    .await;
    let t = Utc::now() - Duration::minutes(10);
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    for due_at in [
        t,
        t,
        t + Duration::minutes(1),
        t + Duration::minutes(2),
        t + Duration::minutes(3),
    ] {
        diesel::insert_into(check_rounds::table)
            .values((
                check_rounds::round_id.eq(Uuid::new_v4()),
                check_rounds::monitor_id.eq(monitor.id),
                check_rounds::definition_version.eq(1),
                check_rounds::trigger.eq("scheduled"),
                check_rounds::due_at.eq(due_at),
                check_rounds::deadline_at.eq(due_at + Duration::seconds(12)),
                check_rounds::regions.eq(vec!["eu", "us"]),
                check_rounds::quorum.eq(1),
                check_rounds::answers.eq(json!({})),
            ))
            .execute(&mut conn)
            .await
            .unwrap();
    }
    drop(conn);
    let rounds = format!("/api/v1/monitors/{}/rounds", monitor.id);
    let (paged, whole) = walk(&app, &key, &rounds, "rounds").await;
    assert_eq!(paged.len(), 5);
    assert_eq!(paged, whole);

    // Deliveries: three test alerts.
    let hook = WebhookReceiver::start().await;
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "hook", "type": "webhook", "value": hook.url("/h")}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    let contact_id = contact["id"].as_i64().unwrap();
    for _ in 0..3 {
        let path = format!("/api/v1/alert-contacts/{contact_id}/test");
        assert_eq!(app.post(&path, &key, json!({})).await.0, StatusCode::OK);
    }
    let deliveries = format!("/api/v1/alert-contacts/{contact_id}/deliveries");
    let (paged, whole) = walk(&app, &key, &deliveries, "deliveries").await;
    assert_eq!(paged.len(), 3);
    assert_eq!(paged, whole);

    // Results: `cursor`, and `before` (its former name) still works.
    for minutes in 1..=5 {
        insert_result(
            &app.state.pool,
            monitor.id,
            t + Duration::minutes(minutes),
            "up",
            "scheduled",
        )
        .await;
    }
    let results = format!("/api/v1/monitors/{}/results", monitor.id);
    let (paged, whole) = walk(&app, &key, &results, "results").await;
    assert_eq!(paged.len(), 5);
    assert_eq!(paged, whole);
    let (_, first) = app.get(&format!("{results}?limit=2"), &key).await;
    let next = first["next_cursor"].as_str().unwrap();
    let (_, by_cursor) = app
        .get(&format!("{results}?limit=2&cursor={next}"), &key)
        .await;
    let (_, by_before) = app
        .get(&format!("{results}?limit=2&before={next}"), &key)
        .await;
    assert_eq!(by_cursor, by_before);
    // Both: `cursor` wins.
    let (_, first_page) = app.get(&format!("{results}?limit=2"), &key).await;
    let (status, both) = app
        .get(
            &format!("{results}?limit=2&cursor={next}&before=AQ000000000000000000000"),
            &key,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{both}");
    assert_eq!(both, by_cursor);
    assert_ne!(both, first_page);

    // Foreign cursors are 400 naming `cursor`.
    for path in [
        &rounds,
        &deliveries,
        &results,
        &"/api/v1/api-keys".to_string(),
    ] {
        let (status, body) = app.get(&format!("{path}?cursor=AAAA"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{path}: {body}");
        assert_eq!(body["details"][0]["field"], "cursor", "{path}: {body}");
    }
}

/// The document states it: every list operation takes `limit` (1 to 100)
/// and `cursor`, and answers `next_cursor`.
#[tokio::test]
async fn the_document_pages_every_list_alike() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, spec) = app.get("/api/v1/openapi.json", &key).await;
    let mut lists = Vec::new();
    for item in spec["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            let id = op["operationId"].as_str().unwrap();
            // Regions are the deployment's handful, not a collection.
            if !id.starts_with("list") || id == "listRegions" {
                continue;
            }
            lists.push(id.to_string());
            let params = op["parameters"].as_array().unwrap();
            let param = |name: &str| {
                params
                    .iter()
                    .find(|p| p["name"] == name && p["in"] == "query")
            };
            let limit = param("limit").unwrap_or_else(|| panic!("{id} ?limit"));
            assert_eq!(limit["schema"]["minimum"], 1, "{id}");
            assert_eq!(limit["schema"]["maximum"], 100, "{id}");
            assert!(
                param("cursor").is_some_and(|c| c["schema"]["pattern"].is_string()),
                "{id} ?cursor"
            );
            let schema = op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap();
            assert!(
                spec["components"]["schemas"][schema]["properties"]["next_cursor"].is_object(),
                "{id}: {schema}.next_cursor"
            );
        }
    }
    lists.sort();
    assert_eq!(
        lists,
        [
            "listApiKeys",
            "listAuditLog",
            "listContacts",
            "listDeliveries",
            "listEscalationPolicies",
            "listIncidents",
            "listInvitations",
            "listMaintenanceWindows",
            "listMembers",
            "listMonitors",
            "listResults",
            "listRounds",
            "listStatusPageNotices",
            "listStatusPageSubscribers",
            "listStatusPages"
        ]
    );
}
