//! `GET`, `PUT` and `DELETE .../by-ref/{ref}` of every kind that carries a
//! ref: the id routes' answers, versions, conditions, scopes and audit, for
//! the resource found by its ref; a `404` that names the ref.

use crate::common::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// An answer: status, `ETag`, body (`Null` when empty).
pub(crate) type Answer = (StatusCode, Option<String>, Value);

/// Sends `method` to `path` with `key`, an optional body and optional
/// headers.
pub(crate) async fn send(
    app: &TestApp,
    method: Method,
    path: &str,
    key: &str,
    body: Option<Value>,
    headers: &[(&str, &str)],
) -> Answer {
    let mut req = app.client.request(method, app.url(path)).bearer_auth(key);
    if let Some(body) = body {
        req = req.json(&body);
    }
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let res = req.send().await.unwrap();
    let status = res.status();
    let tag = res
        .headers()
        .get("etag")
        .map(|v| v.to_str().unwrap().to_string());
    let text = res.text().await.unwrap();
    (
        status,
        tag,
        serde_json::from_str(&text).unwrap_or(Value::Null),
    )
}

/// Asserts a `404` naming the ref.
pub(crate) fn names_missing_ref(answer: &Answer, r#ref: &str) {
    let (status, _, body) = answer;
    assert_eq!(*status, StatusCode::NOT_FOUND, "{body}");
    assert_eq!(body["details"][0]["field"], "ref", "{body}");
    let message = body["details"][0]["message"].as_str().unwrap();
    assert!(message.contains(r#ref), "{message}");
}

/// The checks every kind's `GET`/`DELETE` by ref pass: the id route's
/// answer and version, `304`, a ref-naming `404`, `400` on a malformed
/// ref, a `412` on a stale `If-Match` where the id route honours it, a
/// `403` for a read key, and one audit entry for the delete.
pub(crate) async fn reads_and_deletes_by_ref(
    app: &TestApp,
    key: &str,
    read_key: &str,
    collection: &str,
    r#ref: &str,
    audit_kind: &str,
    honours_if_match: bool,
) {
    let by_ref = format!("{collection}/by-ref/{ref}");
    let (status, tag, found) = send(app, Method::GET, &by_ref, key, None, &[]).await;
    assert_eq!(status, StatusCode::OK, "{found}");
    assert_eq!(found["ref"], r#ref);
    let by_id = format!("{collection}/{}", found["id"]);
    let (status, id_tag, by_id_body) = send(app, Method::GET, &by_id, key, None, &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(found, by_id_body, "the id route's answer");
    assert!(tag.is_some());
    assert_eq!(tag, id_tag, "the id route's version");
    let tag = tag.unwrap();
    let (status, _, _) = send(
        app,
        Method::GET,
        &by_ref,
        key,
        None,
        &[("If-None-Match", &tag)],
    )
    .await;
    assert_eq!(status, StatusCode::NOT_MODIFIED);

    let missing = format!("{collection}/by-ref/no-such-thing");
    names_missing_ref(
        &send(app, Method::GET, &missing, key, None, &[]).await,
        "no-such-thing",
    );
    names_missing_ref(
        &send(app, Method::DELETE, &missing, key, None, &[]).await,
        "no-such-thing",
    );
    let (status, _, bad) = send(
        app,
        Method::GET,
        &format!("{collection}/by-ref/Not-Lower"),
        key,
        None,
        &[],
    )
    .await;
    assert_eq!(
        (status, bad["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ref")),
        "{bad}"
    );

    let (status, _, _) = send(app, Method::GET, &by_ref, read_key, None, &[]).await;
    assert_eq!(status, StatusCode::OK, "a read key reads");
    let (status, _, _) = send(app, Method::DELETE, &by_ref, read_key, None, &[]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "a read key cannot delete");

    if honours_if_match {
        let (status, _, stale) = send(
            app,
            Method::DELETE,
            &by_ref,
            key,
            None,
            &[("If-Match", "\"stale\"")],
        )
        .await;
        assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{stale}");
    }
    let audited_before = deletes_audited(app, key, audit_kind).await;
    let headers: &[(&str, &str)] = if honours_if_match {
        &[("If-Match", &tag)]
    } else {
        &[]
    };
    let (status, _, gone) = send(app, Method::DELETE, &by_ref, key, None, headers).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{gone}");
    assert_eq!(
        deletes_audited(app, key, audit_kind).await,
        audited_before + 1,
        "one audit entry"
    );
    names_missing_ref(
        &send(app, Method::GET, &by_ref, key, None, &[]).await,
        r#ref,
    );
    let (status, _, _) = send(app, Method::GET, &by_id, key, None, &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// How many `delete` entries of `kind` the audit log holds.
async fn deletes_audited(app: &TestApp, key: &str, kind: &str) -> usize {
    crate::audit_log::entries(app, key, "?limit=100")
        .await
        .iter()
        .filter(|e| e["action"] == "delete" && e["resource_kind"] == kind)
        .count()
}

/// A user with a write key and a read key of the same organisation.
pub(crate) async fn owner_and_reader(app: &TestApp) -> (String, String) {
    use uptime_db::organisations::{Role, Scope};
    let (org, key) = app.new_user("ops").await;
    let (reader, _) = app.new_user("reader").await;
    app.add_member(org, reader, Role::Editor).await;
    let read_key = app.key_for(org, reader, Scope::Read).await;
    (key, read_key)
}

#[tokio::test]
async fn monitors_and_contacts_are_read_and_deleted_by_ref() {
    let app = crate::common::spawn_app().await;
    let (key, read_key) = owner_and_reader(&app).await;
    let (status, _, created) = send(
        &app,
        Method::PUT,
        "/api/v1/monitors/by-ref/checkout",
        &key,
        Some(json!({"name": "Checkout", "type": "http", "target": "https://checkout.example.com"})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let (status, _, contact) = send(
        &app,
        Method::POST,
        "/api/v1/alert-contacts",
        &key,
        Some(json!({"name": "On call", "type": "webhook", "value": "https://hooks.example.com/a", "ref": "oncall"})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");

    reads_and_deletes_by_ref(
        &app,
        &key,
        &read_key,
        "/api/v1/monitors",
        "checkout",
        "monitor",
        true,
    )
    .await;
    reads_and_deletes_by_ref(
        &app,
        &key,
        &read_key,
        "/api/v1/alert-contacts",
        "oncall",
        "alert_contact",
        true,
    )
    .await;

    // A ref is per organisation: another one's is not found.
    let (status, _, _) = send(
        &app,
        Method::PUT,
        "/api/v1/monitors/by-ref/theirs",
        &key,
        Some(json!({"name": "Theirs", "type": "http", "target": "https://theirs.example.com"})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, stranger) = app.new_user("stranger").await;
    names_missing_ref(
        &send(
            &app,
            Method::GET,
            "/api/v1/monitors/by-ref/theirs",
            &stranger,
            None,
            &[],
        )
        .await,
        "theirs",
    );
    names_missing_ref(
        &send(
            &app,
            Method::DELETE,
            "/api/v1/monitors/by-ref/theirs",
            &stranger,
            None,
            &[],
        )
        .await,
        "theirs",
    );
}
