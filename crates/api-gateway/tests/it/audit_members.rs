//! The audit log of membership writes: invitations, role changes, removals,
//! renaming the organisation, each leave exactly one entry naming its actor
//! (an accepted invitation: the new member), and a refused one none.

use crate::audit_log::{count, entries, Step};
use crate::common::spawn_app;
use reqwest::{Method, StatusCode};
use serde_json::json;
use uptime_db::organisations::Role;

/// The owner's writes; `{i}` is the invitation made on the way, `{u}` a
/// member (an editor) made before.
pub(crate) fn owner_steps() -> Vec<Step> {
    vec![
        (
            Method::POST,
            "/api/v1/invitations".into(),
            Some(json!({"email": "new@example.com", "role": "editor"})),
            StatusCode::CREATED,
            "create",
            "invitation",
        ),
        (
            Method::POST,
            "/api/v1/invitations/{i}/resend".into(),
            Some(json!({})),
            StatusCode::OK,
            "resend",
            "invitation",
        ),
        (
            Method::DELETE,
            "/api/v1/invitations/{i}".into(),
            None,
            StatusCode::NO_CONTENT,
            "revoke",
            "invitation",
        ),
        (
            Method::PATCH,
            "/api/v1/members/{u}".into(),
            Some(json!({"role": "viewer"})),
            StatusCode::OK,
            "update",
            "member",
        ),
        (
            Method::DELETE,
            "/api/v1/members/{u}".into(),
            None,
            StatusCode::NO_CONTENT,
            "delete",
            "member",
        ),
        (
            Method::PATCH,
            "/api/v1/organisation".into(),
            Some(json!({"name": "Acme Ltd"})),
            StatusCode::NO_CONTENT,
            "update",
            "organisation",
        ),
    ]
}

#[tokio::test]
async fn membership_writes_leave_one_entry_each_and_refused_ones_none() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;

    let mut invitation = 0;
    for (method, path, body, expected, action, kind) in owner_steps() {
        let before = count(&app, &owner_key).await;
        let path = path
            .replace("{i}", &invitation.to_string())
            .replace("{u}", &editor.to_string());
        let (status, answer) = app
            .call(method.clone(), &path, Some(&owner_key), body)
            .await;
        assert_eq!(status, expected, "{method} {path}: {answer}");
        if kind == "invitation" && action == "create" {
            invitation = answer["id"].as_i64().unwrap();
        }
        let log = entries(&app, &owner_key, "?limit=100").await;
        assert_eq!(log.len(), before + 1, "{method} {path}: {log:#?}");
        let entry = &log[0];
        assert_eq!(entry["actor_user_id"], org, "{entry}");
        assert_eq!(entry["key_prefix"], &owner_key[..8]);
        assert_eq!(
            (entry["action"].as_str(), entry["resource_kind"].as_str()),
            (Some(action), Some(kind)),
            "{entry}"
        );
    }
    let log = entries(&app, &owner_key, "?resource_kind=member&action=update").await;
    assert_eq!(
        log[0]["changes"]["role"],
        json!({"before": "editor", "after": "viewer"})
    );
    let log = entries(&app, &owner_key, "?resource_kind=invitation&action=create").await;
    let text = log[0].to_string();
    assert!(!text.contains("token"), "no token in the log: {text}");

    // An accepted invitation: one entry, by the new member through their new key.
    let (_, created) = app
        .post(
            "/api/v1/invitations",
            &owner_key,
            json!({"email": "nia@example.com", "role": "viewer"}),
        )
        .await;
    let before = count(&app, &owner_key).await;
    let (status, joined) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            None,
            Some(json!({"token": created["token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    let log = entries(&app, &owner_key, "?limit=100").await;
    assert_eq!(log.len(), before + 1);
    assert_eq!(
        (log[0]["action"].as_str(), log[0]["resource_kind"].as_str()),
        (Some("accept"), Some("invitation"))
    );
    assert_eq!(log[0]["actor_user_id"], joined["user_id"]);
    assert_eq!(log[0]["key_prefix"], joined["api_key"]["prefix"]);

    // Refused writes leave nothing.
    let before = count(&app, &owner_key).await;
    for (method, path, body, expected) in [
        (
            Method::PATCH,
            format!("/api/v1/members/{org}"),
            Some(json!({"role": "viewer"})),
            StatusCode::CONFLICT,
        ),
        (
            Method::DELETE,
            format!("/api/v1/members/{org}"),
            None,
            StatusCode::CONFLICT,
        ),
        (
            Method::POST,
            "/api/v1/invitations".to_string(),
            Some(json!({"email": "nope", "role": "viewer"})),
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::POST,
            "/api/v1/invitations/999999/resend".to_string(),
            Some(json!({})),
            StatusCode::NOT_FOUND,
        ),
        (
            Method::DELETE,
            "/api/v1/invitations/999999".to_string(),
            None,
            StatusCode::NOT_FOUND,
        ),
        (
            Method::PATCH,
            "/api/v1/organisation".to_string(),
            Some(json!({"name": " "})),
            StatusCode::BAD_REQUEST,
        ),
        (
            Method::DELETE,
            "/api/v1/organisation".to_string(),
            Some(json!({"confirm_name": "not it"})),
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, answer) = app
            .call(method.clone(), &path, Some(&owner_key), body)
            .await;
        assert_eq!(status, expected, "{method} {path}: {answer}");
    }
    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            None,
            Some(json!({"token": created["token"]})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND, "used already");
    assert_eq!(
        count(&app, &owner_key).await,
        before,
        "refused writes leave no entry"
    );
}
