//! A new monitor: its defaults per type, and every rule that refuses one.

use super::{assert_invalid, create, http_monitor, with, MONITORS};
use crate::common::{spawn_app, spawn_app_with};
use reqwest::StatusCode;
use serde_json::{json, Value};

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
