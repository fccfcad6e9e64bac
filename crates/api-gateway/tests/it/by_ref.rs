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

/// How many entries the audit log holds (a key's first use aside).
async fn audit_entries(app: &TestApp, key: &str) -> usize {
    crate::audit_log::entries(app, key, "?limit=100")
        .await
        .iter()
        .filter(|e| e["resource_kind"] != "api_key")
        .count()
}

/// `PUT` by ref creates (`201`, `Location`), then the same body again
/// writes nothing (same id, same `ETag`, no audit entry), then `edited`
/// replaces it (same id, a new `ETag`, `field` as edited, one entry);
/// `If-Match` is honoured, and the body may only repeat the path's ref.
/// Returns the resource's id.
pub(crate) async fn puts_create_then_replace(
    app: &TestApp,
    key: &str,
    collection: &str,
    r#ref: &str,
    body: Value,
    edited: Value,
    field: &str,
) -> i64 {
    let path = format!("{collection}/by-ref/{ref}");
    let (status, _, refused) = send(
        app,
        Method::PUT,
        &path,
        key,
        Some(body.clone()),
        &[("If-Match", "\"x\"")],
    )
    .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{refused}");
    let res = app
        .client
        .put(app.url(&path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(res.status(), StatusCode::CREATED);
    let location = res.headers()["location"].to_str().unwrap().to_string();
    let first_tag = res.headers()["etag"].to_str().unwrap().to_string();
    let created: Value = res.json().await.unwrap();
    assert_eq!(created["ref"], r#ref, "{created}");
    let id = created["id"].as_i64().unwrap();
    assert_eq!(location, format!("{collection}/{id}"));

    let entries = audit_entries(app, key).await;
    let (status, tag, again) = send(app, Method::PUT, &path, key, Some(body.clone()), &[]).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["id"], id);
    assert_eq!(
        again["updated_at"], created["updated_at"],
        "nothing written"
    );
    assert_eq!(tag.as_deref(), Some(first_tag.as_str()), "the same version");
    assert_eq!(audit_entries(app, key).await, entries, "no entry");

    let (status, _, stale) = send(
        app,
        Method::PUT,
        &path,
        key,
        Some(edited.clone()),
        &[("If-Match", "\"stale\"")],
    )
    .await;
    assert_eq!(status, StatusCode::PRECONDITION_FAILED, "{stale}");
    let (status, tag, replaced) = send(
        app,
        Method::PUT,
        &path,
        key,
        Some(edited.clone()),
        &[("If-Match", &first_tag)],
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{replaced}");
    assert_eq!(replaced["id"], id, "replaced in place");
    assert_eq!(replaced[field], edited[field], "{replaced}");
    assert_eq!(replaced["ref"], r#ref);
    assert_ne!(tag.as_deref(), Some(first_tag.as_str()), "a new version");
    assert_eq!(audit_entries(app, key).await, entries + 1, "one entry");

    let mut other = edited.clone();
    other["ref"] = json!("another");
    let (status, _, refused) = send(app, Method::PUT, &path, key, Some(other), &[]).await;
    assert_eq!(
        (status, refused["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ref")),
        "{refused}"
    );
    let mut same = edited.clone();
    same["ref"] = json!(r#ref);
    let (status, _, _) = send(app, Method::PUT, &path, key, Some(same), &[]).await;
    assert_eq!(status, StatusCode::OK, "the body may repeat the path's ref");
    id
}

/// A ref on create (`409` when taken), set by `PATCH` while unset, then
/// immutable (`400`), shown by the id route and the list.
pub(crate) async fn the_ref_is_set_once(
    app: &TestApp,
    key: &str,
    collection: &str,
    list_field: &str,
    body: Value,
    taken: &str,
) {
    let mut with_taken = body.clone();
    with_taken["ref"] = json!(taken);
    let (status, _, refused) =
        send(app, Method::POST, collection, key, Some(with_taken), &[]).await;
    assert_eq!(
        (status, refused["details"][0]["field"].as_str()),
        (StatusCode::CONFLICT, Some("ref")),
        "{refused}"
    );
    let mut malformed = body.clone();
    malformed["ref"] = json!("Not-Lower");
    let (status, _, refused) = send(app, Method::POST, collection, key, Some(malformed), &[]).await;
    assert_eq!(
        (status, refused["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("ref")),
        "{refused}"
    );
    let (status, _, plain) = send(app, Method::POST, collection, key, Some(body), &[]).await;
    assert_eq!(status, StatusCode::CREATED, "{plain}");
    assert_eq!(plain["ref"], Value::Null);
    let path = format!("{collection}/{}", plain["id"]);
    let (status, _, refused) = send(
        app,
        Method::PATCH,
        &path,
        key,
        Some(json!({"ref": taken})),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CONFLICT, "{refused}");
    let (status, _, set) = send(
        app,
        Method::PATCH,
        &path,
        key,
        Some(json!({"ref": "hand-made"})),
        &[],
    )
    .await;
    assert_eq!(
        (status, set["ref"].as_str()),
        (StatusCode::OK, Some("hand-made")),
        "{set}"
    );
    for change in [json!({"ref": "renamed"}), json!({"ref": null})] {
        let (status, _, refused) = send(app, Method::PATCH, &path, key, Some(change), &[]).await;
        assert_eq!(
            (status, refused["details"][0]["field"].as_str()),
            (StatusCode::BAD_REQUEST, Some("ref")),
            "{refused}"
        );
    }
    let (_, _, read) = send(app, Method::GET, &path, key, None, &[]).await;
    assert_eq!(read["ref"], "hand-made");
    let (_, _, page) = send(
        app,
        Method::GET,
        &format!("{collection}?limit=100"),
        key,
        None,
        &[],
    )
    .await;
    let listed: Vec<&Value> = page[list_field]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| &item["ref"])
        .collect();
    assert!(listed.contains(&&json!("hand-made")), "{page}");
    assert!(listed.contains(&&json!(taken)), "{page}");
}

/// A monitor of the organisation (by ref `r#ref`), its id.
async fn a_monitor(app: &TestApp, key: &str, r#ref: &str) -> i64 {
    let (status, _, created) = send(
        app,
        Method::PUT,
        &format!("/api/v1/monitors/by-ref/{ref}"),
        key,
        Some(
            json!({"name": r#ref, "type": "http", "target": format!("https://{ref}.example.com"),
            "labels": {"team": "payments"}}),
        ),
        &[],
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    created["id"].as_i64().unwrap()
}

#[tokio::test]
async fn maintenance_windows_are_put_read_and_deleted_by_ref() {
    let app = crate::common::spawn_app().await;
    let (key, read_key) = owner_and_reader(&app).await;
    let monitor = a_monitor(&app, &key, "api").await;
    let start = (chrono::Utc::now() + chrono::Duration::days(1))
        .format("%Y-%m-%dT%H:00:00Z")
        .to_string();
    let end = (chrono::Utc::now() + chrono::Duration::days(1) + chrono::Duration::hours(1))
        .format("%Y-%m-%dT%H:00:00Z")
        .to_string();
    let body =
        json!({"name": "Deploy", "monitor_ids": [monitor], "starts_at": start, "ends_at": end});
    let mut edited = body.clone();
    edited["name"] = json!("Database upgrade");
    let collection = "/api/v1/maintenance-windows";
    puts_create_then_replace(
        &app,
        &key,
        collection,
        "deploy",
        body.clone(),
        edited,
        "name",
    )
    .await;

    // A recurring window without `starts_at` starts now when created; the
    // same body again leaves it where it is.
    let weekly = json!({"name": "Weekly", "label_selector": {"team": "payments"},
        "rrule": "FREQ=WEEKLY;BYDAY=SU;BYHOUR=2", "timezone": "UTC", "duration_secs": 3600});
    let path = format!("{collection}/by-ref/weekly");
    let (status, tag, first) =
        send(&app, Method::PUT, &path, &key, Some(weekly.clone()), &[]).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    let (status, again_tag, again) = send(&app, Method::PUT, &path, &key, Some(weekly), &[]).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["starts_at"].clone(), again_tag),
        (first["starts_at"].clone(), tag)
    );

    the_ref_is_set_once(
        &app,
        &key,
        collection,
        "maintenance_windows",
        body,
        "deploy",
    )
    .await;
    reads_and_deletes_by_ref(
        &app,
        &key,
        &read_key,
        collection,
        "deploy",
        "maintenance_window",
        false,
    )
    .await;
}

#[tokio::test]
async fn escalation_policies_are_put_read_and_deleted_by_ref() {
    let app = crate::common::spawn_app().await;
    let (key, read_key) = owner_and_reader(&app).await;
    let (status, contact) = app
        .post(
            "/api/v1/alert-contacts",
            &key,
            json!({"name": "On call", "type": "webhook", "value": "https://hooks.example.com/a"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{contact}");
    let body =
        json!({"name": "On call", "steps": [{"contact_ids": [contact["id"]], "delay_secs": 300}]});
    let mut edited = body.clone();
    edited["repeat_count"] = json!(2);
    let collection = "/api/v1/escalation-policies";
    puts_create_then_replace(
        &app,
        &key,
        collection,
        "oncall",
        body.clone(),
        edited,
        "repeat_count",
    )
    .await;
    // A replacement is checked as a create: a contact not the
    // organisation's is a 400 naming the step.
    let (status, _, refused) = send(
        &app,
        Method::PUT,
        &format!("{collection}/by-ref/oncall"),
        &key,
        Some(json!({"name": "x", "steps": [{"contact_ids": [987654], "delay_secs": 300}]})),
        &[],
    )
    .await;
    assert_eq!(
        (status, refused["details"][0]["field"].as_str()),
        (StatusCode::BAD_REQUEST, Some("steps[0].contact_ids")),
        "{refused}"
    );
    the_ref_is_set_once(
        &app,
        &key,
        collection,
        "escalation_policies",
        body,
        "oncall",
    )
    .await;
    reads_and_deletes_by_ref(
        &app,
        &key,
        &read_key,
        collection,
        "oncall",
        "escalation_policy",
        false,
    )
    .await;
}

#[tokio::test]
async fn status_pages_are_put_read_and_deleted_by_ref() {
    let app = crate::common::spawn_app().await;
    let (key, read_key) = owner_and_reader(&app).await;
    let monitor = a_monitor(&app, &key, "api").await;
    let body = json!({"slug": "acme", "title": "Acme",
        "groups": [{"name": "API", "monitor_ids": [monitor]}]});
    let mut edited = body.clone();
    edited["title"] = json!("Acme status");
    let collection = "/api/v1/status-pages";
    puts_create_then_replace(&app, &key, collection, "public", body, edited, "title").await;

    // A private page keeps its token across identical replacements; one
    // replaced without `private` becomes public.
    let private = json!({"slug": "internal", "title": "Internal", "private": true});
    let path = format!("{collection}/by-ref/internal");
    let (status, _, first) = send(&app, Method::PUT, &path, &key, Some(private.clone()), &[]).await;
    assert_eq!(status, StatusCode::CREATED, "{first}");
    assert!(first["access_token"].is_string(), "{first}");
    let (status, _, again) = send(&app, Method::PUT, &path, &key, Some(private), &[]).await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(
        (again["private"].clone(), again.get("access_token")),
        (json!(true), None)
    );
    assert_eq!(again["updated_at"], first["updated_at"]);
    let (status, _, public) = send(
        &app,
        Method::PUT,
        &path,
        &key,
        Some(json!({"slug": "internal", "title": "Internal"})),
        &[],
    )
    .await;
    assert_eq!(
        (status, public["private"].clone()),
        (StatusCode::OK, json!(false))
    );

    the_ref_is_set_once(
        &app,
        &key,
        collection,
        "status_pages",
        json!({"slug": "hand", "title": "Hand made"}),
        "public",
    )
    .await;
    reads_and_deletes_by_ref(
        &app,
        &key,
        &read_key,
        collection,
        "public",
        "status_page",
        false,
    )
    .await;
}
