//! Resources belong to organisations (issue 21): every member's key reaches
//! the organisation's resources, and nobody else's key reaches them.

use crate::common::spawn_app;
use reqwest::StatusCode;
use serde_json::json;
use uptime_db::organisations::Role;

#[tokio::test]
async fn members_share_their_organisations_resources_and_others_see_none_of_them() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    // Another user, with an organisation of their own, joins acme as admin.
    let (member, member_own_key) = app.new_user("maria").await;
    app.add_member(org, member, Role::Admin).await;
    let member_key = app
        .key_for(org, member, uptime_db::organisations::Scope::Admin)
        .await;

    let (status, monitor) = app
        .post(
            "/api/v1/monitors",
            &owner_key,
            json!({"name": "shop", "type": "heartbeat"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{monitor}");
    assert_eq!(monitor["org_id"], org);
    let id = monitor["id"].as_i64().unwrap();

    // The member reads and changes the organisation's monitor.
    let (status, seen) = app
        .get(&format!("/api/v1/monitors/{id}"), &member_key)
        .await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    let (status, _) = app
        .patch(
            &format!("/api/v1/monitors/{id}"),
            &member_key,
            json!({"name": "shop checkout"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    // What the member creates is the organisation's.
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &member_key,
            json!({"name": "chat", "type": "slack", "value": "https://hooks.slack.com/services/x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    assert_eq!(contact["org_id"], org);
    let (_, contacts) = app.get("/api/v1/alert-contacts", &owner_key).await;
    assert_eq!(contacts["alert_contacts"].as_array().unwrap().len(), 1);
    // Both members' keys are listed, each with its holder.
    let (_, keys) = app.get("/api/v1/api-keys", &owner_key).await;
    let holders: Vec<_> = keys["api_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["org_id"].as_i64().unwrap(),
                k["user_id"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(holders, [(org, org), (org, member)]);
    // Quotas count the organisation's resources, whoever made them.
    let (_, usage) = app.get("/api/v1/usage", &member_key).await;
    assert_eq!(usage["monitors"]["used"], 1, "{usage}");

    // The member's key on their own organisation reaches none of it.
    let (status, _) = app
        .get(&format!("/api/v1/monitors/{id}"), &member_own_key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, list) = app.get("/api/v1/monitors", &member_own_key).await;
    assert_eq!(list["monitors"], json!([]));
    let (status, _) = app
        .delete(&format!("/api/v1/monitors/{id}"), &member_own_key)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get(&format!("/api/v1/monitors/{id}"), &owner_key).await;
    assert_eq!(status, StatusCode::OK, "still there");
}
