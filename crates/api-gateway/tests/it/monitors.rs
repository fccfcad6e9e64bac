use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

const MONITORS: &str = "/api/v1/monitors";

fn http_monitor() -> Value {
    json!({"name": "site", "type": "http", "target": "https://example.com/health"})
}

/// `base` with `extra`'s fields set on it.
fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, created) = app.post(MONITORS, key, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body} -> {created}");
    created
}

/// Asserts a 400 `invalid request body` whose details name `field`.
fn assert_invalid(status: StatusCode, body: &Value, field: &str, request: &Value) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{request} -> {body}");
    assert_eq!(body["error"], "invalid request body", "{body}");
    let fields: Vec<&str> = body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap())
        .collect();
    assert!(
        fields.contains(&field),
        "{request}: expected {field} in {body}"
    );
}

async fn contact(app: &TestApp, key: &str, name: &str) -> i64 {
    let (status, c) = app
        .post(
            "/api/v1/alert-contacts",
            key,
            json!({"name": name, "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    c["id"].as_i64().unwrap()
}

#[tokio::test]
async fn an_http_monitor_gets_every_field_with_the_defaults() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;

    assert!(m["id"].as_i64().unwrap() > 0);
    assert_eq!(m["user_id"], user_id);
    assert_eq!(m["name"], "site");
    assert_eq!(m["type"], "http");
    assert_eq!(m["target"], "https://example.com/health");
    assert_eq!(m["interval_secs"], 300);
    assert_eq!(m["timeout_secs"], 30);
    assert_eq!(m["expected_status"], 200);
    assert_eq!(m["confirmation_count"], 1);
    assert_eq!(m["ssl_warn_days"], 30);
    assert_eq!(m["active"], true);
    assert_eq!(m["status"], "pending");
    assert_eq!(m["consecutive_failures"], 0);
    assert_eq!(m["alert_contact_ids"], json!([]));
    for null_field in [
        "keyword",
        "keyword_type",
        "heartbeat_token",
        "latency_warn_ms",
        "last_heartbeat_at",
        "ssl_expires_at",
        "last_checked_at",
    ] {
        assert!(m[null_field].is_null(), "{null_field} in {m}");
        assert!(m.get(null_field).is_some(), "{null_field} present in {m}");
    }
    for ts in ["created_at", "updated_at"] {
        let t = m[ts].as_str().unwrap();
        assert!(chrono::DateTime::parse_from_rfc3339(t).is_ok(), "{ts}: {t}");
    }

    // What GET returns is what POST returned.
    let (status, got) = app.get(&format!("{MONITORS}/{}", m["id"]), &key).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, m);
}

#[tokio::test]
async fn keyword_monitors_default_to_contains_and_accept_not_contains() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let kw =
        json!({"name": "kw", "type": "keyword", "target": "http://example.com", "keyword": "OK"});
    let m = create(&app, &key, kw.clone()).await;
    assert_eq!(m["type"], "keyword");
    assert_eq!(m["keyword"], "OK");
    assert_eq!(m["keyword_type"], "contains");
    assert!(m["heartbeat_token"].is_null());

    let m = create(
        &app,
        &key,
        with(kw, json!({"keyword_type": "not_contains"})),
    )
    .await;
    assert_eq!(m["keyword_type"], "not_contains");
}

#[tokio::test]
async fn heartbeat_monitors_need_no_target_and_get_a_token() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let a = create(
        &app,
        &key,
        json!({"name": "cron", "type": "heartbeat", "interval_secs": 3600}),
    )
    .await;
    let b = create(
        &app,
        &key,
        json!({"name": "cron2", "type": "heartbeat", "target": "nightly backup on db1"}),
    )
    .await;
    for m in [&a, &b] {
        let token = m["heartbeat_token"].as_str().unwrap();
        let hex = token.strip_prefix("hb_").expect("hb_ prefix");
        assert_eq!(hex.len(), 32, "{token}");
        assert!(
            hex.bytes()
                .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c)),
            "{token}"
        );
        assert!(m["keyword"].is_null() && m["keyword_type"].is_null());
    }
    assert_ne!(a["heartbeat_token"], b["heartbeat_token"]);
    assert!(a["target"].is_null());
    assert_eq!(
        b["target"], "nightly backup on db1",
        "a heartbeat target is a label"
    );
    assert_eq!(a["interval_secs"], 3600);
    assert_eq!(a["timeout_secs"], 30);
}

#[tokio::test]
async fn the_default_timeout_shrinks_to_a_short_interval_but_an_explicit_one_must_fit() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(
        &app,
        &key,
        with(http_monitor(), json!({"interval_secs": 10})),
    )
    .await;
    assert_eq!(m["timeout_secs"], 10);
    let m = create(
        &app,
        &key,
        with(http_monitor(), json!({"interval_secs": 20})),
    )
    .await;
    assert_eq!(m["timeout_secs"], 20);
    let m = create(
        &app,
        &key,
        with(
            http_monitor(),
            json!({"interval_secs": 10, "timeout_secs": 10}),
        ),
    )
    .await;
    assert_eq!(m["timeout_secs"], 10);

    let req = with(
        http_monitor(),
        json!({"interval_secs": 10, "timeout_secs": 11}),
    );
    let (status, body) = app.post(MONITORS, &key, req.clone()).await;
    assert_invalid(status, &body, "timeout_secs", &req);
}

#[tokio::test]
async fn every_bound_is_accepted_just_inside_and_refused_just_outside() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let keyword = json!({"name": "kw", "type": "keyword", "target": "https://example.com"});
    let cases: Vec<(&str, Value, Vec<Value>, Vec<Value>)> = vec![
        (
            "interval_secs",
            http_monitor(),
            vec![json!(10), json!(86400)],
            vec![json!(9), json!(86401), json!(-1)],
        ),
        (
            "timeout_secs",
            http_monitor(),
            vec![json!(1), json!(120)],
            vec![json!(0), json!(121)],
        ),
        (
            "confirmation_count",
            http_monitor(),
            vec![json!(1), json!(10)],
            vec![json!(0), json!(11)],
        ),
        (
            "ssl_warn_days",
            http_monitor(),
            vec![json!(0), json!(365)],
            vec![json!(-1), json!(366)],
        ),
        (
            "expected_status",
            http_monitor(),
            vec![json!(100), json!(599)],
            vec![json!(99), json!(600)],
        ),
        (
            "latency_warn_ms",
            http_monitor(),
            vec![json!(1), json!(600000)],
            vec![json!(0), json!(600001)],
        ),
        (
            "name",
            http_monitor(),
            vec![json!("x"), json!("x".repeat(200)), json!("é".repeat(200))],
            vec![json!(""), json!("   "), json!("x".repeat(201))],
        ),
        (
            "keyword",
            keyword,
            vec![json!("k"), json!("k".repeat(1024))],
            // 513 two-byte characters: within 1024 characters, beyond 1024 bytes.
            vec![json!(""), json!("k".repeat(1025)), json!("é".repeat(513))],
        ),
    ];
    for (field, base, inside, outside) in cases {
        for value in inside {
            let req = with(base.clone(), json!({ field: value }));
            let m = create(&app, &key, req).await;
            assert_eq!(m[field], value, "{field}");
        }
        for value in outside {
            let req = with(base.clone(), json!({ field: value }));
            let (status, body) = app.post(MONITORS, &key, req.clone()).await;
            assert_invalid(status, &body, field, &req);
        }
    }
    // Values beyond any integer column are a range error too, not a crash.
    let req = with(http_monitor(), json!({"interval_secs": 1_i64 << 40}));
    let (status, body) = app.post(MONITORS, &key, req.clone()).await;
    assert_invalid(status, &body, "interval_secs", &req);
}

#[tokio::test]
async fn type_specific_rules_are_enforced() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let cases = [
        (json!({"name": "a", "type": "http"}), "target"),
        (
            json!({"name": "a", "type": "keyword", "target": "https://e.com"}),
            "keyword",
        ),
        (
            json!({"name": "a", "type": "http", "target": "https://e.com", "keyword": "x"}),
            "keyword",
        ),
        (
            json!({"name": "a", "type": "heartbeat", "keyword_type": "contains"}),
            "keyword_type",
        ),
        (
            json!({"name": "a", "type": "http", "target": "ftp://e.com/file"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "http", "target": "example.com"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "http", "target": "/health"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "http", "target": "https://"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "http", "target": "https://user:pw@e.com/"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "keyword", "target": "javascript:alert(1)", "keyword": "x"}),
            "target",
        ),
        (
            json!({"name": "a", "type": "heartbeat", "target": ""}),
            "target",
        ),
    ];
    for (req, field) in cases {
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // Several problems are reported at once.
    let req = json!({"name": "", "type": "http", "interval_secs": 1});
    let (status, body) = app.post(MONITORS, &key, req.clone()).await;
    for field in ["name", "target", "interval_secs"] {
        assert_invalid(status, &body, field, &req);
    }
    // An unknown type, a missing type or name: invalid body.
    for req in [
        json!({"name": "a", "type": "tcp", "target": "https://e.com"}),
        json!({"name": "a", "target": "https://e.com"}),
        json!({"type": "http", "target": "https://e.com"}),
    ] {
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{req}");
        assert_eq!(body["error"], "invalid request body");
    }
}

#[tokio::test]
async fn literal_private_targets_are_refused_unless_allowed() {
    let strict = spawn_app_with(|s| s.safety.allow_private_targets = false).await;
    let (_, key) = strict.new_user("ops").await;
    for target in [
        "http://127.0.0.1:8080/",
        "http://localhost/",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/",
        "http://10.0.0.5/",
        // 6to4 of 127.0.0.1, as the checker sees it.
        "http://[2002:7f00:1::]/",
    ] {
        let req = with(http_monitor(), json!({ "target": target }));
        let (status, body) = strict.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, "target", &req);
    }
    // Public http:// targets are fine: monitors check plain-http sites too.
    create(
        &strict,
        &key,
        with(http_monitor(), json!({"target": "http://example.com/"})),
    )
    .await;

    let lax = spawn_app().await;
    let (_, key) = lax.new_user("ops").await;
    create(
        &lax,
        &key,
        with(http_monitor(), json!({"target": "http://127.0.0.1:8080/"})),
    )
    .await;
}

#[tokio::test]
async fn alert_contacts_are_linked_sorted_and_must_be_the_callers() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let a1 = contact(&app, &alice, "a1").await;
    let a2 = contact(&app, &alice, "a2").await;
    let b1 = contact(&app, &bob, "b1").await;

    let m = create(
        &app,
        &alice,
        with(http_monitor(), json!({"alert_contact_ids": [a2, a1, a2]})),
    )
    .await;
    assert_eq!(m["alert_contact_ids"], json!([a1, a2]));

    for ids in [json!([a1, b1]), json!([999_999]), json!([b1])] {
        let req = with(http_monitor(), json!({ "alert_contact_ids": ids }));
        let (status, body) = app.post(MONITORS, &alice, req.clone()).await;
        assert_invalid(status, &body, "alert_contact_ids", &req);
        let message = body["details"][0]["message"].as_str().unwrap();
        let unknown = ids
            .as_array()
            .unwrap()
            .iter()
            .find(|id| **id != json!(a1))
            .unwrap();
        assert!(message.contains(&unknown.to_string()), "{message}");
        assert!(!message.contains(&a1.to_string()), "{message}");
    }
    // Nothing was created by the refused requests.
    let (_, list) = app.get(MONITORS, &alice).await;
    assert_eq!(list["monitors"].as_array().unwrap().len(), 1);

    // PATCH replaces the set; [] clears it; another user's contact is refused.
    let path = format!("{MONITORS}/{}", m["id"]);
    let (status, patched) = app
        .patch(&path, &alice, json!({"alert_contact_ids": [a2]}))
        .await;
    assert_eq!(status, StatusCode::OK, "{patched}");
    assert_eq!(patched["alert_contact_ids"], json!([a2]));
    let req = json!({"alert_contact_ids": [b1]});
    let (status, body) = app.patch(&path, &alice, req.clone()).await;
    assert_invalid(status, &body, "alert_contact_ids", &req);
    let (_, patched) = app
        .patch(&path, &alice, json!({"alert_contact_ids": []}))
        .await;
    assert_eq!(patched["alert_contact_ids"], json!([]));

    // Deleting a contact unlinks it.
    app.patch(&path, &alice, json!({"alert_contact_ids": [a1, a2]}))
        .await;
    let (status, _) = app
        .delete(&format!("/api/v1/alert-contacts/{a1}"), &alice)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, got) = app.get(&path, &alice).await;
    assert_eq!(got["alert_contact_ids"], json!([a2]));
}

#[tokio::test]
async fn patch_changes_only_what_it_names_and_pauses_and_resumes() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(
        &app,
        &key,
        with(
            http_monitor(),
            json!({"latency_warn_ms": 800, "confirmation_count": 3}),
        ),
    )
    .await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let (status, paused) = app.patch(&path, &key, json!({"active": false})).await;
    assert_eq!(status, StatusCode::OK, "{paused}");
    assert_eq!(paused["active"], false);
    for unchanged in [
        "name",
        "target",
        "interval_secs",
        "timeout_secs",
        "latency_warn_ms",
        "confirmation_count",
        "status",
        "created_at",
    ] {
        assert_eq!(paused[unchanged], m[unchanged], "{unchanged}");
    }
    assert!(paused["updated_at"].as_str().unwrap() >= m["updated_at"].as_str().unwrap());
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["active"], false, "the pause is stored");

    let (_, resumed) = app.patch(&path, &key, json!({"active": true})).await;
    assert_eq!(resumed["active"], true);

    let (_, cleared) = app
        .patch(&path, &key, json!({"latency_warn_ms": null}))
        .await;
    assert!(cleared["latency_warn_ms"].is_null(), "{cleared}");
    assert_eq!(cleared["confirmation_count"], 3);

    let (_, renamed) = app
        .patch(
            &path,
            &key,
            json!({"name": "renamed", "expected_status": 204}),
        )
        .await;
    assert_eq!(renamed["name"], "renamed");
    assert_eq!(renamed["expected_status"], 204);
    assert!(
        renamed["latency_warn_ms"].is_null(),
        "earlier changes are kept"
    );

    // A shorter interval takes the stored timeout down with it...
    let (_, short) = app.patch(&path, &key, json!({"interval_secs": 15})).await;
    assert_eq!(
        (
            short["interval_secs"].as_i64(),
            short["timeout_secs"].as_i64()
        ),
        (Some(15), Some(15))
    );
    // ...but an explicit timeout above the interval is refused.
    let req = json!({"timeout_secs": 16});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "timeout_secs", &req);

    // Fields that cannot be cleared refuse null; out-of-range values are refused.
    for (req, field) in [
        (json!({"name": null}), "name"),
        (json!({"interval_secs": null}), "interval_secs"),
        (json!({"active": null}), "active"),
        (json!({"target": null}), "target"),
        (json!({"confirmation_count": 11}), "confirmation_count"),
        (json!({"target": "gopher://e.com"}), "target"),
    ] {
        let (status, body) = app.patch(&path, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // A refused PATCH changed nothing.
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["name"], "renamed");
    assert_eq!(got["target"], m["target"]);

    // An empty PATCH is a no-op that answers the monitor.
    let (status, same) = app.patch(&path, &key, json!({})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(same["name"], "renamed");
}

#[tokio::test]
async fn patch_revalidates_type_changes_as_a_whole() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let req = json!({"type": "keyword"});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "keyword", &req);

    let (status, kw) = app
        .patch(
            &path,
            &key,
            json!({"type": "keyword", "keyword": "Welcome"}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{kw}");
    assert_eq!(
        (kw["keyword"].as_str(), kw["keyword_type"].as_str()),
        (Some("Welcome"), Some("contains"))
    );

    let req = json!({"keyword": null});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "keyword", &req);

    // Back to http: the keyword goes with the type.
    let (_, http) = app.patch(&path, &key, json!({"type": "http"})).await;
    assert!(
        http["keyword"].is_null() && http["keyword_type"].is_null(),
        "{http}"
    );

    // To heartbeat: a token appears (and stays); back to http: it goes.
    let (_, hb) = app.patch(&path, &key, json!({"type": "heartbeat"})).await;
    let token = hb["heartbeat_token"].as_str().expect("token").to_string();
    assert!(token.starts_with("hb_"));
    let (_, hb2) = app.patch(&path, &key, json!({"interval_secs": 60})).await;
    assert_eq!(hb2["heartbeat_token"], token.as_str());
    let (_, cleared) = app.patch(&path, &key, json!({"target": null})).await;
    assert!(
        cleared["target"].is_null(),
        "a heartbeat target can be cleared"
    );

    let req = json!({"type": "http"});
    let (status, body) = app.patch(&path, &key, req.clone()).await;
    assert_invalid(status, &body, "target", &req);
    let (_, http) = app
        .patch(
            &path,
            &key,
            json!({"type": "http", "target": "https://example.org"}),
        )
        .await;
    assert!(http["heartbeat_token"].is_null(), "{http}");
}

#[tokio::test]
async fn runtime_state_survives_edits_but_not_a_new_target() {
    use diesel_async::RunQueryDsl;
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let id = m["id"].as_i64().unwrap();
    let path = format!("{MONITORS}/{id}");

    // Play the recorder: the monitor is down after three failures.
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    diesel::sql_query(
        "UPDATE monitors SET status = 'down', consecutive_failures = 3, \
         last_checked_at = now(), ssl_expires_at = now() + interval '20 days' WHERE id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(id)
    .execute(&mut conn)
    .await
    .unwrap();

    for patch in [
        json!({"name": "x"}),
        json!({"active": false}),
        json!({"active": true}),
        json!({"interval_secs": 60}),
    ] {
        let (_, got) = app.patch(&path, &key, patch.clone()).await;
        assert_eq!(got["status"], "down", "{patch}: {got}");
        assert_eq!(got["consecutive_failures"], 3);
        assert!(got["ssl_expires_at"].is_string());
    }
    let (_, moved) = app
        .patch(&path, &key, json!({"target": "https://example.net/"}))
        .await;
    assert_eq!(moved["status"], "pending", "{moved}");
    assert_eq!(moved["consecutive_failures"], 0);
    assert!(moved["ssl_expires_at"].is_null());
    assert!(moved["last_checked_at"].is_string(), "history is kept");
}

#[tokio::test]
async fn the_definition_version_goes_up_only_when_what_a_check_does_changes() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    assert_eq!(m["definition_version"], 1, "{m}");
    let path = format!("{MONITORS}/{}", m["id"]);
    let other = contact(&app, &key, "ops").await;

    let mut expected = 1;
    for (patch, changes_checks) in [
        (json!({"name": "renamed"}), false),
        (json!({"active": false}), false),
        (json!({"active": true}), false),
        (json!({"interval_secs": 120}), false),
        (json!({"confirmation_count": 3}), false),
        (json!({"latency_warn_ms": 800}), false),
        (json!({"ssl_warn_days": 7}), false),
        (json!({"alert_contact_ids": [other]}), false),
        (json!({"target": "https://example.net/"}), true),
        (json!({"target": "https://example.net/"}), false),
        (json!({"timeout_secs": 5}), true),
        (json!({"expected_status": 204}), true),
        (json!({"type": "keyword", "keyword": "ok"}), true),
        (json!({"keyword": "healthy"}), true),
        (json!({"keyword_type": "not_contains"}), true),
    ] {
        let (status, got) = app.patch(&path, &key, patch.clone()).await;
        assert_eq!(status, StatusCode::OK, "{patch}: {got}");
        expected += i64::from(changes_checks);
        assert_eq!(got["definition_version"], expected, "{patch}: {got}");
    }

    let hb = create(
        &app,
        &key,
        json!({"name": "job", "type": "heartbeat", "interval_secs": 60}),
    )
    .await;
    let path = format!("{MONITORS}/{}", hb["id"]);
    let (_, got) = app.patch(&path, &key, json!({"interval_secs": 120})).await;
    assert_eq!(
        got["definition_version"], 2,
        "a heartbeat's period is what its missed-period checks judge: {got}"
    );
}

#[tokio::test]
async fn delete_answers_204_then_404() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    let (status, body) = app.delete(&path, &key).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    assert!(body.is_null(), "204 has no body: {body}");
    for (status, body) in [
        app.get(&path, &key).await,
        app.delete(&path, &key).await,
        app.patch(&path, &key, json!({"name": "x"})).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, json!({"error": "not found"}));
    }
    let (_, list) = app.get(MONITORS, &key).await;
    assert_eq!(list["monitors"], json!([]));
}

#[tokio::test]
async fn pagination_walks_every_monitor_once_in_id_order() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, other) = app.new_user("other").await;
    let mut created = Vec::new();
    for i in 0..7 {
        created.push(
            create(
                &app,
                &key,
                with(http_monitor(), json!({"name": format!("m{i}")})),
            )
            .await["id"]
                .as_i64()
                .unwrap(),
        );
        // Another user's monitors in between must not show up.
        create(&app, &other, http_monitor()).await;
    }

    let mut seen = Vec::new();
    let mut pages = 0;
    let mut cursor: Option<String> = None;
    loop {
        let path = match &cursor {
            None => format!("{MONITORS}?limit=3"),
            Some(c) => format!("{MONITORS}?limit=3&cursor={c}"),
        };
        let (status, page) = app.get(&path, &key).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        pages += 1;
        let monitors = page["monitors"].as_array().unwrap();
        assert!(monitors.len() <= 3);
        seen.extend(monitors.iter().map(|m| m["id"].as_i64().unwrap()));
        match page["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => {
                assert!(
                    page.get("next_cursor").is_some(),
                    "next_cursor is null, not absent"
                );
                break;
            }
        }
        assert!(pages < 10, "pagination does not end");
    }
    assert_eq!(pages, 3);
    assert_eq!(seen, created, "every monitor once, in id order");

    // Without a limit: 50 per page.
    let (_, all) = app.get(MONITORS, &key).await;
    assert_eq!(all["monitors"].as_array().unwrap().len(), 7);
    assert!(all["next_cursor"].is_null());
    // An exact fit has no next page.
    let (_, exact) = app.get(&format!("{MONITORS}?limit=7"), &key).await;
    assert_eq!(exact["monitors"].as_array().unwrap().len(), 7);
    assert!(exact["next_cursor"].is_null());
    let (status, _) = app.get(&format!("{MONITORS}?limit=100"), &key).await;
    assert_eq!(status, StatusCode::OK);

    for bad in [
        "limit=0",
        "limit=101",
        "limit=-1",
        "limit=abc",
        "cursor=not-a-cursor",
        "cursor=",
    ] {
        let (status, body) = app.get(&format!("{MONITORS}?{bad}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert!(
            body["error"].is_string() && body["details"].is_array(),
            "{bad}: {body}"
        );
    }
}

#[tokio::test]
async fn the_default_page_holds_fifty() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    for i in 0..51 {
        create(
            &app,
            &key,
            with(http_monitor(), json!({"name": format!("m{i}")})),
        )
        .await;
    }
    let (_, first) = app.get(MONITORS, &key).await;
    assert_eq!(first["monitors"].as_array().unwrap().len(), 50);
    let cursor = first["next_cursor"].as_str().expect("a second page");
    let (_, second) = app.get(&format!("{MONITORS}?cursor={cursor}"), &key).await;
    assert_eq!(second["monitors"].as_array().unwrap().len(), 1);
    assert!(second["next_cursor"].is_null());
}

#[tokio::test]
async fn users_cannot_see_or_touch_each_others_monitors() {
    let app = spawn_app().await;
    let (_, alice) = app.new_user("alice").await;
    let (_, bob) = app.new_user("bob").await;
    let m = create(&app, &alice, http_monitor()).await;
    let path = format!("{MONITORS}/{}", m["id"]);

    for (status, body) in [
        app.get(&path, &bob).await,
        app.patch(&path, &bob, json!({"name": "mine now"})).await,
        app.patch(&path, &bob, json!({"active": false})).await,
        app.delete(&path, &bob).await,
    ] {
        assert_eq!(status, StatusCode::NOT_FOUND);
        assert_eq!(body, json!({"error": "not found"}));
    }
    let (_, bobs) = app.get(MONITORS, &bob).await;
    assert_eq!(bobs["monitors"], json!([]));
    let (status, got) = app.get(&path, &alice).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got, m, "untouched by bob");
}

/// Every change is announced on `UPTIME_MONITORS` for the scheduler.
#[tokio::test]
async fn create_update_and_delete_publish_monitor_changed() {
    use async_nats::jetstream::consumer::pull;
    use futures::StreamExt;
    use uptime_contracts::{Message, MonitorChange, MonitorChangedV1};

    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let m = create(&app, &key, http_monitor()).await;
    let id = m["id"].as_i64().unwrap();
    let path = format!("{MONITORS}/{id}");
    app.patch(&path, &key, json!({"active": false})).await;
    assert_eq!(app.delete(&path, &key).await.0, StatusCode::NO_CONTENT);

    let (_client, js) = app.env.nats.jetstream().await;
    let stream = js
        .get_stream(uptime_contracts::streams::MONITORS_STREAM)
        .await
        .expect("monitors stream");
    let consumer = stream
        .create_consumer(pull::Config {
            deliver_policy: async_nats::jetstream::consumer::DeliverPolicy::All,
            ..Default::default()
        })
        .await
        .expect("consumer");
    let mut messages = consumer
        .fetch()
        .max_messages(10)
        .expires(std::time::Duration::from_secs(2))
        .messages()
        .await
        .expect("fetch");
    let mut changes = Vec::new();
    let mut msg_ids = Vec::new();
    while let Some(msg) = messages.next().await {
        let msg = msg.expect("message");
        assert_eq!(msg.subject.as_str(), MonitorChangedV1::SUBJECT);
        let decoded = MonitorChangedV1::from_bytes(&msg.payload).expect("decodes");
        let msg_id = msg
            .headers
            .as_ref()
            .and_then(|h| h.get(async_nats::header::NATS_MESSAGE_ID))
            .map(|v| v.as_str().to_string())
            .expect("Nats-Msg-Id");
        msg_ids.push(msg_id);
        changes.push((decoded.monitor_id, decoded.change));
    }
    assert_eq!(
        changes,
        vec![
            (id, MonitorChange::Upserted),
            (id, MonitorChange::Upserted),
            (id, MonitorChange::Deleted)
        ]
    );
    msg_ids.sort();
    msg_ids.dedup();
    assert_eq!(msg_ids.len(), 3, "each change has its own message id");
}
