//! Members, invitations and the organisation: who may change whose role,
//! the last owner stays, a removed member's keys stop working at once,
//! invitations work once and until they expire, and deleting the
//! organisation takes everything of it.

use crate::common::{spawn_app, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_db::organisations::Role;

/// A member of `org` with `role` and a key at the role's widest scope.
async fn member(app: &TestApp, org: i64, name: &str, role: Role) -> (i64, String) {
    let (user, _) = app.new_user(name).await;
    app.add_member(org, user, role).await;
    let scope = api_gateway::authz::widest_scope(role);
    (user, app.key_for(org, user, scope).await)
}

fn refused_on(status: StatusCode, body: &Value, expected: StatusCode, field: &str) -> bool {
    status == expected && body["details"][0]["field"] == field
}

#[tokio::test]
async fn members_are_listed_with_their_roles_and_admins_manage_only_editors_and_viewers() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (admin, admin_key) = member(&app, org, "ada", Role::Admin).await;
    let (other_admin, _) = member(&app, org, "alan", Role::Admin).await;
    let (editor, editor_key) = member(&app, org, "ed", Role::Editor).await;

    let (status, list) = app.get("/api/v1/members", &editor_key).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    let roles: Vec<(i64, &str)> = list["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| (m["user_id"].as_i64().unwrap(), m["role"].as_str().unwrap()))
        .collect();
    assert_eq!(
        roles,
        [
            (org, "owner"),
            (admin, "admin"),
            (other_admin, "admin"),
            (editor, "editor")
        ]
    );
    assert_eq!(list["members"][0]["name"], "acme");
    assert!(list["members"][0]["joined_at"].is_string());

    // An admin demotes an editor; the editor's key narrows at once.
    let (status, changed) = app
        .patch(
            &format!("/api/v1/members/{editor}"),
            &admin_key,
            json!({"role": "viewer"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{changed}");
    assert_eq!(changed["role"], "viewer");
    let (status, refused) = app
        .post(
            "/api/v1/monitors",
            &editor_key,
            json!({"name": "m", "type": "heartbeat"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "scope"),
        "a viewer's key writes nothing: {status} {refused}"
    );

    // An admin neither changes another admin nor makes an owner.
    let (status, refused) = app
        .patch(
            &format!("/api/v1/members/{other_admin}"),
            &admin_key,
            json!({"role": "editor"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "role"),
        "{status} {refused}"
    );
    let (status, refused) = app
        .patch(
            &format!("/api/v1/members/{editor}"),
            &admin_key,
            json!({"role": "owner"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "role"),
        "{status} {refused}"
    );
    // A bad role is a 400 naming the field; a stranger a 404.
    let (status, refused) = app
        .patch(
            &format!("/api/v1/members/{editor}"),
            &owner_key,
            json!({"role": "root"}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    let (status, _) = app
        .patch(
            "/api/v1/members/999999",
            &owner_key,
            json!({"role": "viewer"}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn the_last_owner_cannot_leave_be_removed_or_be_demoted() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (admin, admin_key) = member(&app, org, "ada", Role::Admin).await;

    let (status, refused) = app
        .patch(
            &format!("/api/v1/members/{org}"),
            &owner_key,
            json!({"role": "admin"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::CONFLICT, "role"),
        "{status} {refused}"
    );
    assert_eq!(refused["error"], "conflict");
    let (status, refused) = app
        .delete(&format!("/api/v1/members/{org}"), &owner_key)
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::CONFLICT, "role"),
        "{status} {refused}"
    );
    let (status, refused) = app
        .delete(&format!("/api/v1/members/{org}"), &admin_key)
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "role"),
        "an admin does not remove an owner: {status} {refused}"
    );

    // With a second owner, the first may leave.
    let (status, promoted) = app
        .patch(
            &format!("/api/v1/members/{admin}"),
            &owner_key,
            json!({"role": "owner"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{promoted}");
    let (status, _) = app
        .delete(&format!("/api/v1/members/{org}"), &owner_key)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get("/api/v1/members", &owner_key).await;
    assert_eq!(
        status,
        StatusCode::UNAUTHORIZED,
        "the leaver's key went with the membership"
    );
    let (_, list) = app.get("/api/v1/members", &admin_key).await;
    assert_eq!(list["members"].as_array().unwrap().len(), 1);
}

#[tokio::test]
async fn a_removed_members_keys_stop_working_and_nobody_else_is_touched() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, editor_key) = member(&app, org, "ed", Role::Editor).await;
    // Used once, so the gateway has it cached.
    let (status, _) = app.get("/api/v1/monitors", &editor_key).await;
    assert_eq!(status, StatusCode::OK);

    let (status, _) = app
        .delete(&format!("/api/v1/members/{editor}"), &owner_key)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app.get("/api/v1/monitors", &editor_key).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (_, keys) = app.get("/api/v1/api-keys", &owner_key).await;
    assert_eq!(keys["api_keys"].as_array().unwrap().len(), 1);
    // The user stays, with their own organisation.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    assert_eq!(
        uptime_db::organisations::role_of(&mut conn, editor, editor)
            .await
            .unwrap(),
        Some(Role::Owner)
    );
}

/// Creates an invitation and returns (id, token).
async fn invite(app: &TestApp, key: &str, email: &str, role: &str) -> (i64, String) {
    let (status, created) = app
        .post(
            "/api/v1/invitations",
            key,
            json!({"email": email, "role": role}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    (
        created["id"].as_i64().unwrap(),
        created["token"].as_str().unwrap().to_string(),
    )
}

#[tokio::test]
async fn an_invitation_makes_a_new_user_a_member_once() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (id, token) = invite(&app, &owner_key, "New.Person@Example.com", "editor").await;

    let (_, open) = app.get("/api/v1/invitations", &owner_key).await;
    assert_eq!(open["invitations"][0]["id"], id);
    assert_eq!(open["invitations"][0]["email"], "new.person@example.com");
    assert!(
        open["invitations"][0].get("token").is_none(),
        "never listed"
    );

    let accept =
        |body: Value| app.call(Method::POST, "/api/v1/invitations/accept", None, Some(body));
    let (status, joined) = accept(json!({"token": token, "name": "Nia"})).await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(
        (joined["org_id"].as_i64(), joined["role"].as_str()),
        (Some(org), Some("editor"))
    );
    assert_eq!(joined["api_key"]["scope"], "write");
    let new_key = joined["api_key"]["key"].as_str().unwrap().to_string();
    let (status, me) = app
        .get(&format!("/api/v1/members/{}", joined["user_id"]), &new_key)
        .await;
    assert_eq!(status, StatusCode::OK, "{me}");
    assert_eq!(
        (me["name"].as_str(), me["role"].as_str()),
        (Some("Nia"), Some("editor"))
    );

    // Once.
    let (status, _) = accept(json!({"token": token})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, open) = app.get("/api/v1/invitations", &owner_key).await;
    assert_eq!(open["invitations"], json!([]));
    // A malformed token names the field.
    let (status, refused) = accept(json!({"token": "short"})).await;
    assert!(
        refused_on(status, &refused, StatusCode::BAD_REQUEST, "token"),
        "{refused}"
    );
}

#[tokio::test]
async fn an_existing_user_accepts_with_their_key_and_revoked_or_expired_invitations_do_not_work() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (user, own_key) = app.new_user("maria").await;
    let (_, token) = invite(&app, &owner_key, "maria@example.com", "viewer").await;

    // A member already cannot accept again; a bad key is 401.
    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            Some("upt_bogus"),
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    let (status, joined) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            Some(&own_key),
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{joined}");
    assert_eq!(
        (joined["user_id"].as_i64(), joined["org_id"].as_i64()),
        (Some(user), Some(org))
    );
    assert_eq!(joined["api_key"]["scope"], "read");

    // A member already cannot join again.
    let (_, token) = invite(&app, &owner_key, "maria@example.com", "editor").await;
    let (status, refused) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            Some(&own_key),
            Some(json!({"token": token})),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::CONFLICT, "token"),
        "{status} {refused}"
    );

    // Revoked.
    let (id, token) = invite(&app, &owner_key, "other@example.com", "viewer").await;
    let (status, _) = app
        .delete(&format!("/api/v1/invitations/{id}"), &owner_key)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            None,
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Expired.
    let (id, token) = invite(&app, &owner_key, "late@example.com", "viewer").await;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel_async::RunQueryDsl::execute(
        diesel::sql_query(
            "UPDATE invitations SET expires_at = now() - interval '1 second' WHERE id = $1",
        )
        .bind::<diesel::sql_types::BigInt, _>(id),
        &mut conn,
    )
    .await
    .unwrap();
    let (status, _) = app
        .call(
            Method::POST,
            "/api/v1/invitations/accept",
            None,
            Some(json!({"token": token})),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn invitations_grant_at_most_the_inviters_role() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (_, admin_key) = member(&app, org, "ada", Role::Admin).await;
    let (status, refused) = app
        .post(
            "/api/v1/invitations",
            &admin_key,
            json!({"email": "x@example.com", "role": "owner"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "role"),
        "{status} {refused}"
    );
    invite(&app, &admin_key, "x@example.com", "admin").await;
    invite(&app, &owner_key, "y@example.com", "owner").await;
    let (status, refused) = app
        .post(
            "/api/v1/invitations",
            &owner_key,
            json!({"email": "not an address", "role": "viewer"}),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::BAD_REQUEST, "email"),
        "{status} {refused}"
    );
}

#[tokio::test]
async fn the_organisation_is_read_renamed_and_deleted_with_everything_of_it() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (_, admin_key) = member(&app, org, "ada", Role::Admin).await;
    let (_, monitor) = app
        .post(
            "/api/v1/monitors",
            &owner_key,
            json!({"name": "m", "type": "heartbeat"}),
        )
        .await;
    invite(&app, &owner_key, "z@example.com", "viewer").await;

    let (status, seen) = app.get("/api/v1/organisation", &admin_key).await;
    assert_eq!(status, StatusCode::OK, "{seen}");
    assert_eq!(
        (
            seen["id"].as_i64(),
            seen["name"].as_str(),
            seen["role"].as_str()
        ),
        (Some(org), Some("acme"), Some("admin"))
    );
    assert_eq!(
        seen["counts"],
        json!({"members": 2, "monitors": 1, "alert_contacts": 0, "api_keys": 2, "open_invitations": 1})
    );
    let (status, _) = app
        .patch(
            "/api/v1/organisation",
            &admin_key,
            json!({"name": "Acme Ltd"}),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);

    // Owners only, and only with the name as confirmation.
    let (status, refused) = app
        .call(
            Method::DELETE,
            "/api/v1/organisation",
            Some(&admin_key),
            Some(json!({"confirm_name": "Acme Ltd"})),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::FORBIDDEN, "scope"),
        "{status} {refused}"
    );
    let (status, refused) = app
        .call(
            Method::DELETE,
            "/api/v1/organisation",
            Some(&owner_key),
            Some(json!({"confirm_name": "acme"})),
        )
        .await;
    assert!(
        refused_on(status, &refused, StatusCode::BAD_REQUEST, "confirm_name"),
        "{status} {refused}"
    );
    let (status, _) = app
        .call(
            Method::DELETE,
            "/api/v1/organisation",
            Some(&owner_key),
            Some(json!({"confirm_name": "Acme Ltd"})),
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    for key in [&owner_key, &admin_key] {
        let (status, _) = app.get("/api/v1/organisation", key).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "its keys went with it");
    }
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    assert!(uptime_db::organisations::get(&mut conn, org)
        .await
        .unwrap()
        .is_none());
    let id = monitor["id"].as_i64().unwrap();
    assert!(uptime_db::monitors::get(&mut conn, org, id)
        .await
        .unwrap()
        .is_none());
    // The deletion's audit entry went out through the outbox.
    let published: Vec<serde_json::Value> = diesel_async::RunQueryDsl::load::<OutboxPayload>(
        diesel::sql_query(
            "SELECT payload FROM outbox_events WHERE payload->>'resource_kind' = 'organisation'",
        ),
        &mut conn,
    )
    .await
    .unwrap()
    .into_iter()
    .map(|r| r.payload)
    .collect();
    assert!(
        published
            .iter()
            .any(|p| p["action"] == "delete" && p["org_id"] == org),
        "{published:?}"
    );
}

#[derive(diesel::QueryableByName)]
struct OutboxPayload {
    #[diesel(sql_type = diesel::sql_types::Jsonb)]
    payload: serde_json::Value,
}
