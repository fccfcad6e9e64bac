//! Scopes and roles, for every route (issue 21). The routes come from the
//! OpenAPI document the gateway serves, the access each needs from
//! `api_gateway::authz::ROUTES`, and docs/api.md must show the same table:
//! a route missing from the table, or a table the docs do not show, fails
//! here, and every principal gets exactly what the table says.

use crate::common::{spawn_app, TestApp};
use api_gateway::authz::{self, Access};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use uptime_db::organisations::{Role, Scope};

/// A key as the matrix uses it: who holds it, and what it should be able to do.
struct Principal {
    name: &'static str,
    key: String,
    role: Role,
    /// The narrower of the key's scope and the role's widest.
    effective: Scope,
}

impl Principal {
    fn may(&self, access: Access) -> bool {
        match access {
            Access::Public => true,
            Access::Scope(needed) => self.effective >= needed,
            Access::Owner => self.role == Role::Owner && self.effective == Scope::Admin,
        }
    }
}

/// An organisation with an owner (keys of every scope) and one member of
/// each other role (keys at their role's widest, and an editor's key issued
/// `admin` before a demotion, which must act as `write`).
async fn principals(app: &TestApp) -> Vec<Principal> {
    let (org, owner_key) = app.new_user("acme").await;
    let mut all = vec![Principal {
        name: "owner (admin key)",
        key: owner_key,
        role: Role::Owner,
        effective: Scope::Admin,
    }];
    for (name, scope) in [
        ("owner (write key)", Scope::Write),
        ("owner (read key)", Scope::Read),
    ] {
        all.push(Principal {
            name,
            key: app.key_for(org, org, scope).await,
            role: Role::Owner,
            effective: scope,
        });
    }
    for (name, role, scope, effective) in [
        ("admin", Role::Admin, Scope::Admin, Scope::Admin),
        ("editor", Role::Editor, Scope::Write, Scope::Write),
        (
            "editor (admin key from before a demotion)",
            Role::Editor,
            Scope::Admin,
            Scope::Write,
        ),
        ("viewer", Role::Viewer, Scope::Read, Scope::Read),
    ] {
        let (user, _) = app.new_user(name).await;
        app.add_member(org, user, role).await;
        all.push(Principal {
            name,
            key: app.key_for(org, user, scope).await,
            role,
            effective,
        });
    }
    all
}

/// Every operation of the served document: `(METHOD, path)`.
async fn documented_routes(app: &TestApp) -> BTreeSet<(String, String)> {
    let (status, doc) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let mut routes = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("path item").keys() {
            routes.insert((method.to_uppercase(), path.clone()));
        }
    }
    routes
}

#[tokio::test]
async fn every_documented_route_declares_its_access_and_the_table_declares_no_other() {
    let app = spawn_app().await;
    let documented = documented_routes(&app).await;
    let missing: Vec<_> = documented
        .iter()
        .filter(|(method, path)| authz::access_of(method, path).is_none())
        .collect();
    assert!(
        missing.is_empty(),
        "routes without a declared scope (declare them in their module's `routes!`, or in \
         api_gateway::authz's BY_HAND for a route registered by hand, and in the table in \
         docs/api.md): {missing:?}"
    );
    // The document describes every route but the one serving it.
    let stale: Vec<_> = authz::ROUTES
        .iter()
        .filter(|r| r.path != "/api/v1/openapi.json")
        .filter(|r| !documented.contains(&(r.method.to_string(), r.path.to_string())))
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert!(stale.is_empty(), "declared but not served: {stale:?}");
}

/// The rows of docs/api.md's route table: `| `METHOD` | `path` | access | note |`.
fn documented_table() -> BTreeSet<(String, String, String, String)> {
    let docs = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/api.md"),
    )
    .expect("read docs/api.md");
    let start = docs
        .find("<!-- route-scopes -->")
        .expect("docs/api.md has the route table");
    let end = docs[start..]
        .find("<!-- /route-scopes -->")
        .map(|i| start + i)
        .expect("the route table ends");
    docs[start..end]
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|line| {
            let cells: Vec<String> = line
                .trim_matches('|')
                .split('|')
                .map(|c| c.trim().trim_matches('`').to_string())
                .collect();
            assert_eq!(cells.len(), 4, "a row has four cells: {line}");
            (
                cells[0].clone(),
                cells[1].clone(),
                cells[2].clone(),
                cells[3].clone(),
            )
        })
        .collect()
}

#[test]
fn the_table_in_the_docs_is_the_enforced_table() {
    let enforced: BTreeSet<_> = authz::ROUTES
        .iter()
        .map(|r| {
            (
                r.method.to_string(),
                r.path.to_string(),
                r.access.name().to_string(),
                r.note.to_string(),
            )
        })
        .collect();
    let documented = documented_table();
    let only_code: Vec<_> = enforced.difference(&documented).collect();
    let only_docs: Vec<_> = documented.difference(&enforced).collect();
    assert!(
        only_code.is_empty() && only_docs.is_empty(),
        "docs/api.md's route table differs from api_gateway::authz::ROUTES:\n\
         enforced, not documented: {only_code:#?}\ndocumented, not enforced: {only_docs:#?}"
    );
}

/// A request to `path` that changes nothing when allowed: path parameters
/// name nothing that exists (404), bodies are empty (400).
fn probe(method: &str, path: &str) -> (Method, String, Option<Value>) {
    let concrete = path
        .replace("{id}", "999999999")
        .replace("{token}", "hb_00000000000000000000000000000000")
        .replace("{exit_code}", "0");
    let body = match method {
        "POST" | "PATCH" | "PUT" if path.ends_with("/bulk") => Some(json!({"monitors": []})),
        "POST" | "PATCH" | "PUT" => Some(json!({})),
        _ => None,
    };
    (
        Method::from_bytes(method.as_bytes()).unwrap(),
        concrete,
        body,
    )
}

fn refused_for_scope(status: StatusCode, body: &Value) -> bool {
    status == StatusCode::FORBIDDEN && body["details"][0]["field"] == "scope"
}

#[tokio::test]
async fn each_role_and_scope_gets_exactly_what_the_table_says_on_every_route() {
    let app = spawn_app().await;
    let principals = principals(&app).await;
    let mut wrong = Vec::new();
    for (method, path) in documented_routes(&app).await {
        let access = authz::access_of(&method, &path)
            .unwrap_or_else(|| panic!("{method} {path} declares no access"))
            .access;
        if access == Access::Public {
            continue;
        }
        for who in &principals {
            let (m, concrete, body) = probe(&method, &path);
            let (status, answer) = app.call(m, &concrete, Some(&who.key), body).await;
            let refused = refused_for_scope(status, &answer);
            if status == StatusCode::UNAUTHORIZED || refused == who.may(access) {
                wrong.push(format!(
                    "{method} {path} as {}: {status} {answer} (the table says {})",
                    who.name,
                    access.name()
                ));
            }
        }
    }
    assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
}

#[tokio::test]
async fn a_viewer_key_changes_nothing() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (viewer, _) = app.new_user("vera").await;
    app.add_member(org, viewer, Role::Viewer).await;
    let key = app.key_for(org, viewer, Scope::Read).await;
    let (_, monitor) = app
        .post(
            "/api/v1/monitors",
            &owner_key,
            json!({"name": "m", "type": "heartbeat"}),
        )
        .await;
    let id = monitor["id"].as_i64().unwrap();

    let attempts = [
        (
            Method::POST,
            "/api/v1/monitors".to_string(),
            Some(json!({"name": "x", "type": "heartbeat"})),
        ),
        (
            Method::PATCH,
            format!("/api/v1/monitors/{id}"),
            Some(json!({"active": false})),
        ),
        (Method::DELETE, format!("/api/v1/monitors/{id}"), None),
        (
            Method::POST,
            "/api/v1/api-keys".to_string(),
            Some(json!({"name": "mine"})),
        ),
        (
            Method::POST,
            "/api/v1/invitations".to_string(),
            Some(json!({"email": "pal@example.com", "role": "viewer"})),
        ),
        (
            Method::PATCH,
            format!("/api/v1/members/{viewer}"),
            Some(json!({"role": "admin"})),
        ),
        (Method::DELETE, format!("/api/v1/members/{viewer}"), None),
        (
            Method::PATCH,
            "/api/v1/organisation".to_string(),
            Some(json!({"name": "mine now"})),
        ),
    ];
    for (method, path, body) in attempts {
        let (status, answer) = app.call(method.clone(), &path, Some(&key), body).await;
        assert!(
            refused_for_scope(status, &answer),
            "{method} {path}: {status} {answer}"
        );
        assert_eq!(answer["error"], "forbidden");
    }
    let (status, seen) = app.get(&format!("/api/v1/monitors/{id}"), &key).await;
    assert_eq!(status, StatusCode::OK, "a viewer reads");
    assert_eq!(
        (seen["name"].as_str(), seen["active"].as_bool()),
        (Some("m"), Some(true))
    );
    let (_, list) = app.get("/api/v1/monitors", &owner_key).await;
    assert_eq!(list["monitors"].as_array().unwrap().len(), 1);
    let (_, organisation) = app.get("/api/v1/organisation", &key).await;
    assert_eq!(
        (organisation["name"].as_str(), organisation["role"].as_str()),
        (Some("acme"), Some("viewer"))
    );
    assert_eq!(organisation["counts"]["open_invitations"], 0);
}

#[tokio::test]
async fn a_new_keys_scope_is_at_most_its_creators_and_defaults_to_it() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;
    let editor_key = app.key_for(org, editor, Scope::Write).await;

    let (status, key) = app
        .post("/api/v1/api-keys", &owner_key, json!({"name": "ci"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    assert_eq!(key["scope"], "admin", "an owner's default is the widest");
    let (status, key) = app
        .post(
            "/api/v1/api-keys",
            &owner_key,
            json!({"name": "ro", "scope": "read"}),
        )
        .await;
    assert_eq!(
        (status, &key["scope"]),
        (StatusCode::CREATED, &json!("read"))
    );

    let (status, key) = app
        .post("/api/v1/api-keys", &editor_key, json!({"name": "e"}))
        .await;
    assert_eq!(
        (status, &key["scope"]),
        (StatusCode::CREATED, &json!("write")),
        "{key}"
    );
    let (status, refused) = app
        .post(
            "/api/v1/api-keys",
            &editor_key,
            json!({"name": "e", "scope": "admin"}),
        )
        .await;
    assert!(refused_for_scope(status, &refused), "{status} {refused}");

    // A narrower key of the owner cannot mint a wider one.
    let write_key = key["key"].as_str().unwrap().to_string();
    let (status, refused) = app
        .post(
            "/api/v1/api-keys",
            &write_key,
            json!({"name": "w", "scope": "admin"}),
        )
        .await;
    assert!(refused_for_scope(status, &refused), "{status} {refused}");
}

#[tokio::test]
async fn an_editor_revokes_their_own_keys_only() {
    let app = spawn_app().await;
    let (org, owner_key) = app.new_user("acme").await;
    let (editor, _) = app.new_user("ed").await;
    app.add_member(org, editor, Role::Editor).await;
    let editor_key = app.key_for(org, editor, Scope::Write).await;
    let (_, keys) = app.get("/api/v1/api-keys", &owner_key).await;
    let id_of = |user: i64| {
        keys["api_keys"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["user_id"] == user)
            .unwrap()["id"]
            .as_i64()
            .unwrap()
    };
    let (owners, editors) = (id_of(org), id_of(editor));

    let (status, refused) = app
        .delete(&format!("/api/v1/api-keys/{owners}"), &editor_key)
        .await;
    assert!(refused_for_scope(status, &refused), "{status} {refused}");
    let (status, _) = app.get("/api/v1/usage", &owner_key).await;
    assert_eq!(status, StatusCode::OK, "the owner's key still works");

    let (status, _) = app
        .delete(&format!("/api/v1/api-keys/{editors}"), &editor_key)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
}

#[tokio::test]
async fn the_document_states_each_operations_scope() {
    let app = spawn_app().await;
    let (_, doc) = app
        .call(Method::GET, "/api/v1/openapi.json", None, None)
        .await;
    let op = &doc["paths"]["/api/v1/monitors/{id}"]["patch"];
    assert_eq!(op["x-required-scope"], "write");
    assert_eq!(op["security"], json!([{"bearer": ["write"]}]));
    assert!(op["description"]
        .as_str()
        .unwrap()
        .contains("`write` scope"));
    assert!(op["responses"]["403"].is_object());
    let get = &doc["paths"]["/api/v1/monitors"]["get"];
    assert_eq!(get["x-required-scope"], "read");
    let ping = &doc["paths"]["/api/v1/heartbeat/{token}"]["get"];
    assert!(
        ping.get("x-required-scope").is_none(),
        "public routes need none"
    );
}
