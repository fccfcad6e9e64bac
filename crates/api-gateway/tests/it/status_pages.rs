//! Status pages and badge tokens through the API: created, listed, read,
//! changed and deleted with one audit entry each; bounds refused naming the
//! field; slugs and domains unique; access and badge tokens shown once and
//! stored only as digests.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

async fn monitor(app: &TestApp, key: &str, name: &str, labels: Value) -> i64 {
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            key,
            json!({"name": name, "type": "http", "target": "https://example.com",
                   "interval_secs": 60, "labels": labels}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body["id"].as_i64().unwrap()
}

async fn audit(app: &TestApp, key: &str, kind: &str) -> Vec<Value> {
    let (status, log) = app
        .get(&format!("/api/v1/audit-log?resource_kind={kind}"), key)
        .await;
    assert_eq!(status, StatusCode::OK, "{log}");
    log["entries"].as_array().unwrap().clone()
}

fn sha256(text: &str) -> String {
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[tokio::test]
async fn a_page_is_created_read_changed_and_deleted_with_one_audit_entry_each() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("owner").await;
    let api = monitor(&app, &key, "API", json!({"team": "core"})).await;
    let web = monitor(&app, &key, "Website", json!({})).await;
    let (status, created) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "acme", "title": " Acme status ", "description": "All of it",
                   "groups": [{"name": "Services", "monitor_ids": [web, api, web]},
                              {"name": "Core", "selector": {"team": "core"}}]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(created["title"], "Acme status");
    assert_eq!(created["private"], false);
    assert_eq!(created["url"], "http://localhost:8090/status/acme");
    assert!(created.get("access_token").is_none(), "{created}");
    // Listed ids are kept in order, each once.
    assert_eq!(created["groups"][0]["monitor_ids"], json!([web, api]));

    let (status, listed) = app.get("/api/v1/status-pages", &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(listed["status_pages"].as_array().unwrap().len(), 1);
    let (status, got) = app.get(&format!("/api/v1/status-pages/{id}"), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["slug"], "acme");

    let (status, changed) = app
        .patch(
            &format!("/api/v1/status-pages/{id}"),
            &key,
            json!({"title": "Acme", "description": null, "custom_domain": "Status.Acme.example"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["description"], Value::Null);
    assert_eq!(changed["custom_domain"], "status.acme.example");
    assert_eq!(changed["groups"], created["groups"]);

    // Another organisation sees nothing of it.
    let (_, other) = app.new_user("other").await;
    let (status, _) = app.get(&format!("/api/v1/status-pages/{id}"), &other).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let (status, _) = app
        .delete(&format!("/api/v1/status-pages/{id}"), &key)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app
        .delete(&format!("/api/v1/status-pages/{id}"), &key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let entries = audit(&app, &key, "status_page").await;
    let actions: Vec<&str> = entries
        .iter()
        .map(|e| e["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["delete", "update", "create"], "{entries:?}");
    assert_eq!(entries[1]["changes"]["title"]["after"], "Acme");
}

#[tokio::test]
async fn bad_fields_are_400s_naming_them_and_taken_names_are_409s() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("owner").await;
    let (_, other_key) = app.new_user("other").await;
    let mine = monitor(&app, &key, "Mine", json!({})).await;
    let theirs = monitor(&app, &other_key, "Theirs", json!({})).await;
    for (body, field) in [
        (json!({"slug": "Bad Slug", "title": "t"}), "slug"),
        (json!({"slug": "-a", "title": "t"}), "slug"),
        (json!({"slug": "a", "title": "  "}), "title"),
        (json!({"slug": "a", "title": "t".repeat(201)}), "title"),
        (
            json!({"slug": "a", "title": "t", "logo_url": "ftp://x.example/l.png"}),
            "logo_url",
        ),
        (
            json!({"slug": "a", "title": "t", "custom_domain": "localhost"}),
            "custom_domain",
        ),
        (
            json!({"slug": "a", "title": "t", "groups": [{"name": "g"}]}),
            "groups[0]",
        ),
        (
            json!({"slug": "a", "title": "t", "groups": [{"name": "g", "selector": {}}]}),
            "groups[0].selector",
        ),
        (
            json!({"slug": "a", "title": "t", "groups": [{"name": "g", "selector": {"bad key!": "x"}}]}),
            "groups[0].selector",
        ),
        (
            json!({"slug": "a", "title": "t", "groups": [{"name": "g", "monitor_ids": [mine, theirs]}]}),
            "groups[0].monitor_ids",
        ),
        (
            json!({"slug": "a", "title": "t", "groups": (0..21).map(|_| json!({"name": "g", "monitor_ids": [mine]})).collect::<Vec<_>>()}),
            "groups",
        ),
    ] {
        let (status, err) = app.post("/api/v1/status-pages", &key, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert_eq!(err["details"][0]["field"], field, "{body}: {err}");
    }
    let (status, _) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "taken", "title": "t", "custom_domain": "status.example.com"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    for (body, field) in [
        (json!({"slug": "taken", "title": "t"}), "slug"),
        (
            json!({"slug": "free", "title": "t", "custom_domain": "status.example.com"}),
            "custom_domain",
        ),
    ] {
        let (status, err) = app.post("/api/v1/status-pages", &other_key, body).await;
        assert_eq!(status, StatusCode::CONFLICT, "{err}");
        assert_eq!(err["details"][0]["field"], field, "{err}");
    }
}

#[tokio::test]
async fn an_organisation_has_at_most_its_quota_of_pages() {
    let app = spawn_app_with(|s| s.status_pages.max_pages_per_org = 1).await;
    let (_, key) = app.new_user("owner").await;
    let (status, _) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "one", "title": "One"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, err) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "two", "title": "Two"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{err}");
}

#[tokio::test]
async fn access_and_badge_tokens_are_shown_once_and_stored_as_digests() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("owner").await;
    let monitor_id = monitor(&app, &key, "API", json!({})).await;
    let (status, page) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "private", "title": "Private", "private": true}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{page}");
    let token = page["access_token"].as_str().unwrap().to_string();
    assert!(token.starts_with("sp_") && token.len() == 46, "{token}");
    let id = page["id"].as_i64().unwrap();
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let stored = uptime_db::status_snapshot::load_pages(&mut conn)
        .await
        .unwrap()
        .into_iter()
        .find(|p| p.id == id)
        .unwrap();
    assert_eq!(
        stored.access_token_sha256.as_deref(),
        Some(sha256(&token).as_str())
    );
    let (_, got) = app.get(&format!("/api/v1/status-pages/{id}"), &key).await;
    assert_eq!(got["private"], true);
    assert!(got.get("access_token").is_none());

    let (status, rotated) = app
        .call(
            Method::POST,
            &format!("/api/v1/status-pages/{id}/access-token"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{rotated}");
    assert_ne!(rotated["access_token"], token.as_str());
    // Public again: the token is gone.
    let (_, public) = app
        .patch(
            &format!("/api/v1/status-pages/{id}"),
            &key,
            json!({"private": false}),
        )
        .await;
    assert_eq!(public["private"], false);

    let path = format!("/api/v1/monitors/{monitor_id}/badge-token");
    let (status, badge) = app.call(Method::POST, &path, Some(&key), None).await;
    assert_eq!(status, StatusCode::OK, "{badge}");
    let badge_token = badge["token"].as_str().unwrap().to_string();
    assert!(badge_token.starts_with("bdg_"));
    assert_eq!(
        badge["urls"]["status"],
        format!("http://localhost:8090/badge/{badge_token}/status.svg")
    );
    let badges = uptime_db::status_snapshot::load_badges(&mut conn)
        .await
        .unwrap();
    assert_eq!(badges.len(), 1);
    assert_eq!(badges[0].token_sha256, sha256(&badge_token));
    // Another organisation cannot badge this monitor.
    let (_, other) = app.new_user("other").await;
    let (status, _) = app.call(Method::POST, &path, Some(&other), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.call(Method::DELETE, &path, Some(&key), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // One entry per write (none for the refused ones), no token in any.
    let page_entries = audit(&app, &key, "status_page").await;
    let badge_entries = audit(&app, &key, "monitor_badge").await;
    let actions = |entries: &[Value]| -> Vec<String> {
        entries
            .iter()
            .map(|e| e["action"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(actions(&page_entries), ["update", "rotate", "create"]);
    assert_eq!(actions(&badge_entries), ["delete", "rotate"]);
    let log = format!("{page_entries:?}{badge_entries:?}");
    assert!(
        !log.contains(&token) && !log.contains(&badge_token),
        "{log}"
    );
    assert!(!log.contains(rotated["access_token"].as_str().unwrap()));
}

#[tokio::test]
async fn notices_are_posted_updated_resolved_listed_and_deleted_with_one_audit_entry_each() {
    let app = spawn_app_with(|s| s.status_pages.max_notices_per_page = 2).await;
    let (_, key) = app.new_user("owner").await;
    let (_, page) = app
        .post(
            "/api/v1/status-pages",
            &key,
            json!({"slug": "acme", "title": "Acme"}),
        )
        .await;
    let page_id = page["id"].as_i64().unwrap();
    let notices = format!("/api/v1/status-pages/{page_id}/notices");
    for (body, field) in [
        (json!({"title": " ", "body": "x"}), "title"),
        (json!({"title": "t", "body": ""}), "body"),
        (json!({"title": "t", "body": "x".repeat(5001)}), "body"),
    ] {
        let (status, err) = app.post(&notices, &key, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {err}");
        assert_eq!(err["details"][0]["field"], field, "{err}");
    }
    let (status, err) = app
        .post(
            &notices,
            &key,
            json!({"title": "t", "body": "x", "state": "sleeping"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{err}");

    let (status, created) = app
        .post(
            &notices,
            &key,
            json!({"title": "Slow logins", "body": "We are looking into it."}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(created["state"], "investigating");
    assert_eq!(created["updates"].as_array().unwrap().len(), 1);
    let id = created["id"].as_i64().unwrap();
    let (status, resolved) = app
        .post(
            &format!("{notices}/{id}/updates"),
            &key,
            json!({"state": "resolved", "body": "Fixed."}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{resolved}");
    assert_eq!(resolved["state"], "resolved");
    assert!(resolved["resolved_at"].is_string());
    assert_eq!(resolved["updates"][1]["body"], "Fixed.");
    let (_, got) = app.get(&format!("{notices}/{id}"), &key).await;
    assert_eq!(got["updates"].as_array().unwrap().len(), 2);

    // Retention: the page keeps two; the oldest resolved one goes first.
    let (_, second) = app
        .post(
            &notices,
            &key,
            json!({"title": "Second", "body": "b", "state": "resolved"}),
        )
        .await;
    let (_, third) = app
        .post(&notices, &key, json!({"title": "Third", "body": "c"}))
        .await;
    let (_, listed) = app.get(&notices, &key).await;
    let ids: Vec<i64> = listed["notices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ids,
        vec![
            second["id"].as_i64().unwrap(),
            third["id"].as_i64().unwrap()
        ]
    );

    let third_id = third["id"].as_i64().unwrap();
    let (status, _) = app.delete(&format!("{notices}/{third_id}"), &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, other) = app.new_user("other").await;
    let (status, _) = app.get(&notices, &other).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    let actions: Vec<String> = audit(&app, &key, "status_page_notice")
        .await
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(actions, ["delete", "create", "create", "update", "create"]);
}
