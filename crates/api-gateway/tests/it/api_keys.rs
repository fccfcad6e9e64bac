use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;

#[tokio::test]
async fn creating_a_key_returns_the_raw_key_once() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;

    let (status, body) = app
        .post("/api/v1/api-keys", &key, json!({"name": "ci"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let raw = body["key"]
        .as_str()
        .expect("raw key in the creation response");
    assert!(raw.starts_with("upt_") && raw.len() == 44, "{raw}");
    assert_eq!(body["prefix"], &raw[..8]);
    assert_eq!(body["user_id"], user_id);
    assert_eq!(body["name"], "ci");
    assert!(body["last_used_at"].is_null());
    assert!(body["created_at"].is_string());

    // The new key works, and listing never shows a raw key.
    let (status, list) = app.get("/api/v1/api-keys", raw).await;
    assert_eq!(status, StatusCode::OK);
    let keys = list["api_keys"].as_array().unwrap();
    assert_eq!(keys.len(), 2);
    assert!(keys.iter().all(|k| k.get("key").is_none()), "{list}");
    assert!(!list.to_string().contains(raw));
}

#[tokio::test]
async fn a_revoked_key_is_refused_at_once() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, created) = app
        .post("/api/v1/api-keys", &key, json!({"name": "temp"}))
        .await;
    let temp = created["key"].as_str().unwrap().to_string();
    let id = created["id"].as_i64().unwrap();

    assert_eq!(app.get("/api/v1/api-keys", &temp).await.0, StatusCode::OK);
    let (status, _) = app.delete(&format!("/api/v1/api-keys/{id}"), &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, body) = app.get("/api/v1/api-keys", &temp).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body, json!({"error": "unauthorized"}));
}

#[tokio::test]
async fn missing_malformed_and_unknown_keys_get_401_with_www_authenticate() {
    let app = spawn_app().await;
    for auth in [
        None,
        Some("Bearer nope"),
        Some("Bearer upt_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
        Some("Basic abc"),
    ] {
        let mut req = app.client.get(app.url("/api/v1/api-keys"));
        if let Some(a) = auth {
            req = req.header("Authorization", a);
        }
        let res = req.send().await.unwrap();
        assert_eq!(res.status(), StatusCode::UNAUTHORIZED, "{auth:?}");
        assert_eq!(res.headers()["www-authenticate"], "Bearer");
        let body: serde_json::Value = res.json().await.unwrap();
        assert_eq!(body["error"], "unauthorized");
    }
}

#[tokio::test]
async fn users_cannot_see_or_revoke_each_others_keys() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let (_, list) = app.get("/api/v1/api-keys", &alice).await;
    let alice_key_id = list["api_keys"][0]["id"].as_i64().unwrap();

    let (_, bobs) = app.get("/api/v1/api-keys", &bob).await;
    assert_eq!(bobs["api_keys"].as_array().unwrap().len(), 1);
    assert_ne!(bobs["api_keys"][0]["id"].as_i64().unwrap(), alice_key_id);

    let (status, body) = app
        .delete(&format!("/api/v1/api-keys/{alice_key_id}"), &bob)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    assert_eq!(body["error"], "not found");
    assert_eq!(
        app.get("/api/v1/api-keys", &alice).await.0,
        StatusCode::OK,
        "alice's key still works"
    );
}

#[tokio::test]
async fn invalid_names_are_400_with_details() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for body in [
        json!({}),
        json!({"name": ""}),
        json!({"name": 5}),
        json!({"name": "x".repeat(201)}),
        json!({"name": "a", "extra": 1}),
    ] {
        let (status, err) = app.post("/api/v1/api-keys", &key, body.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(err["error"], "invalid request body", "{err}");
        assert!(!err["details"].as_array().unwrap().is_empty(), "{err}");
    }
}

#[tokio::test]
async fn last_used_at_is_recorded() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, list) = app.get("/api/v1/api-keys", &key).await;
    // The request that listed was itself a use of the key.
    assert!(list["api_keys"][0]["last_used_at"].is_string(), "{list}");
}

/// Who sees whose keys (issue 35): a key with the admin scope (an owner's
/// or an admin's) lists and reads every member's keys; any other key only
/// its holder's own, and reading another member's key is refused naming
/// the scope, as revoking one is.
#[tokio::test]
async fn only_admin_keys_see_other_members_keys() {
    use uptime_db::organisations::{Role, Scope};
    let app = spawn_app().await;
    let (org, owner) = app.new_user("acme").await;
    let owner_read = app.key_for(org, org, Scope::Read).await;
    let mut keys = vec![
        ("owner", org, owner.clone(), true),
        ("owner (read key)", org, owner_read, false),
    ];
    for (name, role, scope, all) in [
        ("admin", Role::Admin, Scope::Admin, true),
        ("editor", Role::Editor, Scope::Write, false),
        ("viewer", Role::Viewer, Scope::Read, false),
    ] {
        let (user, _) = app.new_user(name).await;
        app.add_member(org, user, role).await;
        keys.push((name, user, app.key_for(org, user, scope).await, all));
    }
    let (_, everything) = app.get("/api/v1/api-keys", &owner).await;
    let all: Vec<(i64, i64)> = everything["api_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["id"].as_i64().unwrap(), k["user_id"].as_i64().unwrap()))
        .collect();
    assert_eq!(all.len(), 5, "{everything}");
    for (name, user, key, sees_all) in &keys {
        let (status, page) = app.get("/api/v1/api-keys", key).await;
        assert_eq!(status, StatusCode::OK, "{name}: {page}");
        let holders: Vec<i64> = page["api_keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k["user_id"].as_i64().unwrap())
            .collect();
        if *sees_all {
            assert_eq!(holders.len(), all.len(), "{name} sees every key: {page}");
        } else {
            assert!(
                !holders.is_empty() && holders.iter().all(|h| h == user),
                "{name} sees only its holder's keys: {page}"
            );
        }
        for (id, holder) in &all {
            let (status, body) = app.get(&format!("/api/v1/api-keys/{id}"), key).await;
            if *sees_all || holder == user {
                assert_eq!(status, StatusCode::OK, "{name} reads key {id}: {body}");
            } else {
                assert_eq!(
                    (status, &body["details"][0]["field"]),
                    (StatusCode::FORBIDDEN, &json!("scope")),
                    "{name} reads another member's key {id}: {body}"
                );
            }
        }
    }
}

/// A member's keys page by themselves (in SQL, like every list): another
/// member's keys between theirs neither fill a page nor end one early.
#[tokio::test]
async fn a_holders_keys_page_past_other_members_keys() {
    use uptime_db::organisations::{Role, Scope};
    let app = spawn_app().await;
    let (org, owner) = app.new_user("acme").await;
    let (editor, _) = app.new_user("editor").await;
    app.add_member(org, editor, Role::Editor).await;
    let editor_key = app.key_for(org, editor, Scope::Write).await;
    for i in 0..3 {
        for key in [&owner, &editor_key] {
            let (status, body) = app
                .post("/api/v1/api-keys", key, json!({"name": format!("k{i}")}))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{body}");
        }
    }
    let mut seen = Vec::new();
    let mut path = "/api/v1/api-keys?limit=2".to_string();
    loop {
        let (status, page) = app.get(&path, &editor_key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        let items = page["api_keys"].as_array().unwrap();
        assert!((1..=2).contains(&items.len()), "{page}");
        seen.extend(
            items
                .iter()
                .map(|k| (k["id"].as_i64().unwrap(), k["user_id"].as_i64().unwrap())),
        );
        match page["next_cursor"].as_str() {
            Some(cursor) => path = format!("/api/v1/api-keys?limit=2&cursor={cursor}"),
            None => break,
        }
    }
    // The key it calls with and the three it made, in id order.
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen.iter().all(|(_, holder)| *holder == editor), "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "{seen:?}");
}
