//! Issue 12 in the monitor API: the tcp, tls, dns and icmp types, their
//! targets and options, the address rules they share with http targets, and
//! the document describing them. The http options (request, basic auth,
//! assertions) are in `monitor_options`.

use crate::check_support::stream_messages;
use crate::common::{spawn_app, spawn_app_with, TestApp};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, DueCheck, MonitorKind};

pub const MONITORS: &str = "/api/v1/monitors";

/// Every option field a monitor response has (null where the type has none).
pub const OPTION_FIELDS: [&str; 9] = [
    "method",
    "headers",
    "body",
    "basic_auth",
    "assertions",
    "dns_record_type",
    "dns_expected",
    "dns_server",
    "tls_fingerprint_sha256",
];

pub async fn create(app: &TestApp, key: &str, body: Value) -> Value {
    let (status, created) = app.post(MONITORS, key, body.clone()).await;
    assert_eq!(status, StatusCode::CREATED, "{body} -> {created}");
    created
}

pub async fn patch(app: &TestApp, key: &str, id: &Value, body: Value) -> Value {
    let (status, patched) = app
        .patch(&format!("{MONITORS}/{id}"), key, body.clone())
        .await;
    assert_eq!(status, StatusCode::OK, "{body} -> {patched}");
    patched
}

/// `base` with `extra`'s fields set on it.
pub fn with(mut base: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        base[k] = v.clone();
    }
    base
}

/// Asserts a 400 `invalid request body` whose details name `field`.
pub fn assert_invalid(status: StatusCode, body: &Value, field: &str, request: &Value) {
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

/// The stored `check_options` of a monitor and its stored password, opened
/// with the test key: passwords are stored sealed only (issue 19), never in
/// the legacy plain-text column.
pub async fn stored(app: &TestApp, id: &Value) -> (Option<Value>, Option<String>) {
    use uptime_db::schema::monitors;
    let mut conn = uptime_db::pool::conn(&app.state.pool).await.unwrap();
    let (options, plain, sealed): (Option<Value>, Option<String>, Option<String>) = monitors::table
        .filter(monitors::id.eq(id.as_i64().unwrap()))
        .select((
            monitors::check_options,
            monitors::http_password,
            monitors::http_password_sealed,
        ))
        .first(&mut conn)
        .await
        .unwrap();
    assert_eq!(plain, None, "a password stored in plain text");
    let opened = sealed.map(|sealed| {
        uptime_testkit::secrets::test_keyring()
            .open(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, &sealed)
            .expect("the stored password opens with the test key")
            .to_string()
    });
    (options, opened)
}

pub fn kind(kind: &str, target: &str) -> Value {
    json!({"name": kind, "type": kind, "target": target})
}

#[tokio::test]
async fn each_new_type_is_created_read_and_patched() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;

    let tcp = create(&app, &key, kind("tcp", "db.example.com:5432")).await;
    assert_eq!(
        (&tcp["type"], &tcp["target"]),
        (&json!("tcp"), &json!("db.example.com:5432"))
    );
    for field in OPTION_FIELDS {
        assert!(tcp.get(field).is_some_and(Value::is_null), "{field}: {tcp}");
    }
    assert_eq!(stored(&app, &tcp["id"]).await, (None, None));
    let (_, got) = app.get(&format!("{MONITORS}/{}", tcp["id"]), &key).await;
    assert_eq!(got, tcp);

    let fingerprint = vec!["AB"; 32].join(":");
    let tls = create(
        &app,
        &key,
        with(
            kind("tls", "https://example.com/login"),
            json!({"tls_fingerprint_sha256": fingerprint}),
        ),
    )
    .await;
    assert_eq!(tls["tls_fingerprint_sha256"], "ab".repeat(32));
    assert_eq!(
        stored(&app, &tls["id"]).await.0,
        Some(json!({"tls": {"fingerprint_sha256": "ab".repeat(32)}}))
    );
    let tls_plain = create(&app, &key, kind("tls", "mail.example.com:993")).await;
    assert!(tls_plain["tls_fingerprint_sha256"].is_null());

    let dns = create(
        &app,
        &key,
        with(
            kind("dns", "example.com"),
            json!({"dns_record_type": "MX", "dns_expected": ["10 mail.example.com."], "dns_server": "9.9.9.9:53"}),
        ),
    )
    .await;
    assert_eq!(dns["dns_record_type"], "MX");
    assert_eq!(dns["dns_expected"], json!(["10 mail.example.com."]));
    assert_eq!(dns["dns_server"], "9.9.9.9:53");
    assert!(dns["method"].is_null() && dns["tls_fingerprint_sha256"].is_null());
    // The defaults are shown, and stored as nothing.
    let dns_default = create(&app, &key, kind("dns", "_dmarc.example.com")).await;
    assert_eq!(dns_default["dns_record_type"], "A");
    assert_eq!(dns_default["dns_expected"], json!([]));
    assert!(dns_default["dns_server"].is_null());
    assert_eq!(stored(&app, &dns_default["id"]).await, (None, None));

    let icmp = create(&app, &key, kind("icmp", "2001:db8::1")).await;
    assert_eq!(icmp["target"], "2001:db8::1");
    create(&app, &key, kind("icmp", "router.example.net")).await;

    // PATCH: a new target starts the monitor again; options merge.
    let v = tcp["definition_version"].as_i64().unwrap();
    let tcp2 = patch(
        &app,
        &key,
        &tcp["id"],
        json!({"target": "[2001:db8::5]:22"}),
    )
    .await;
    assert_eq!(tcp2["target"], "[2001:db8::5]:22");
    assert_eq!(tcp2["definition_version"], v + 1);
    let dns2 = patch(
        &app,
        &key,
        &dns["id"],
        json!({"dns_record_type": null, "dns_server": null}),
    )
    .await;
    assert_eq!(dns2["dns_record_type"], "A");
    assert_eq!(dns2["dns_expected"], json!(["10 mail.example.com."]));
    assert!(dns2["dns_server"].is_null());
    assert_eq!(
        dns2["definition_version"],
        dns["definition_version"].as_i64().unwrap() + 1
    );
    // A rename changes nothing a check does.
    let dns3 = patch(&app, &key, &dns["id"], json!({"name": "mx"})).await;
    assert_eq!(dns3["definition_version"], dns2["definition_version"]);
    let tls2 = patch(
        &app,
        &key,
        &tls["id"],
        json!({"tls_fingerprint_sha256": null}),
    )
    .await;
    assert!(tls2["tls_fingerprint_sha256"].is_null());
    assert_eq!(stored(&app, &tls["id"]).await.0, None);

    // Another type drops the options the new type has no use for.
    let switched = patch(
        &app,
        &key,
        &dns["id"],
        json!({"type": "tcp", "target": "example.com:53"}),
    )
    .await;
    for field in OPTION_FIELDS {
        assert!(switched[field].is_null(), "{field}: {switched}");
    }
    assert_eq!(stored(&app, &dns["id"]).await, (None, None));
}

#[tokio::test]
async fn targets_are_checked_by_type() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let long_label = format!("{}.com", "a".repeat(64));
    let cases: Vec<(&str, Option<&str>)> = vec![
        ("tcp", None),
        ("tcp", Some("example.com")),
        ("tcp", Some("example.com:0")),
        ("tcp", Some("example.com:65536")),
        ("tcp", Some("::1:22")),
        ("tcp", Some("[::1]")),
        ("tcp", Some("http://example.com:80")),
        ("tcp", Some("exa mple.com:80")),
        ("tcp", Some("2130706433:80")),
        ("tls", None),
        ("tls", Some("http://example.com/")),
        ("tls", Some("https://user:pw@example.com/")),
        ("tls", Some("example.com")),
        ("dns", None),
        ("dns", Some("192.0.2.1")),
        ("dns", Some("a..example.com")),
        ("dns", Some(&long_label)),
        ("dns", Some("bücher.example")),
        ("dns", Some("example.com:53")),
        ("icmp", None),
        ("icmp", Some("[::1]")),
        ("icmp", Some("example.com:80")),
        ("icmp", Some("https://example.com/")),
    ];
    for (kind, target) in cases {
        let req = json!({"name": "x", "type": kind, "target": target});
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, "target", &req);
    }
    // A PATCH to another type checks the kept target by the new type's rule.
    let http = create(
        &app,
        &key,
        json!({"name": "site", "type": "http", "target": "https://example.com/"}),
    )
    .await;
    let req = json!({"type": "tcp"});
    let (status, body) = app
        .patch(&format!("{MONITORS}/{}", http["id"]), &key, req.clone())
        .await;
    assert_invalid(status, &body, "target", &req);
}

#[tokio::test]
async fn options_of_another_type_are_refused() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let http = json!({"name": "x", "type": "http", "target": "https://example.com/"});
    let cases = [
        (kind("tcp", "example.com:22"), "method", json!("POST")),
        (kind("tcp", "example.com:22"), "headers", json!([])),
        (kind("icmp", "example.com"), "body", json!("{}")),
        (
            kind("dns", "example.com"),
            "basic_auth",
            json!({"username": "u"}),
        ),
        (kind("tls", "example.com:443"), "assertions", json!([])),
        (http.clone(), "dns_record_type", json!("A")),
        (http.clone(), "dns_expected", json!(["1.2.3.4"])),
        (http.clone(), "dns_server", json!("9.9.9.9")),
        (http, "tls_fingerprint_sha256", json!("ab".repeat(32))),
        (
            kind("dns", "example.com"),
            "tls_fingerprint_sha256",
            json!("ab".repeat(32)),
        ),
        (
            json!({"name": "x", "type": "heartbeat"}),
            "method",
            json!("GET"),
        ),
    ];
    for (base, field, value) in cases {
        let req = with(base, json!({ field: value }));
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
        let message = body["details"][0]["message"].as_str().unwrap();
        assert!(message.starts_with("is only for"), "{message}");
    }
    // On PATCH too.
    let tcp = create(&app, &key, kind("tcp", "example.com:22")).await;
    let req = json!({"dns_server": "9.9.9.9"});
    let (status, body) = app
        .patch(&format!("{MONITORS}/{}", tcp["id"]), &key, req.clone())
        .await;
    assert_invalid(status, &body, "dns_server", &req);
}

#[tokio::test]
async fn dns_and_tls_options_are_bounded() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let dns = kind("dns", "example.com");
    let tls = kind("tls", "example.com:443");
    let cases = [
        (
            dns.clone(),
            json!({"dns_expected": vec!["1.2.3.4"; 21]}),
            "dns_expected",
        ),
        (
            dns.clone(),
            json!({"dns_expected": ["ok", ""]}),
            "dns_expected[1]",
        ),
        (
            dns.clone(),
            json!({"dns_expected": [" "]}),
            "dns_expected[0]",
        ),
        (
            dns.clone(),
            json!({"dns_expected": ["a".repeat(256)]}),
            "dns_expected[0]",
        ),
        (
            dns.clone(),
            json!({"dns_server": "dns.example.com"}),
            "dns_server",
        ),
        (
            dns.clone(),
            json!({"dns_server": "9.9.9.9:0"}),
            "dns_server",
        ),
        (
            dns.clone(),
            json!({"dns_server": "[2620:fe::fe]"}),
            "dns_server",
        ),
        (
            dns.clone(),
            json!({"dns_server": "9.9.9.9:53:53"}),
            "dns_server",
        ),
        (
            tls.clone(),
            json!({"tls_fingerprint_sha256": "abc"}),
            "tls_fingerprint_sha256",
        ),
        (
            tls.clone(),
            json!({"tls_fingerprint_sha256": "a".repeat(63)}),
            "tls_fingerprint_sha256",
        ),
        (
            tls,
            json!({"tls_fingerprint_sha256": "g".repeat(64)}),
            "tls_fingerprint_sha256",
        ),
    ];
    for (base, extra, field) in cases {
        let req = with(base, extra);
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }
    // Just inside the bounds.
    create(
        &app,
        &key,
        with(
            dns,
            json!({"dns_expected": vec!["v".repeat(255); 20], "dns_server": "[2620:fe::fe]:5353", "dns_record_type": "TXT"}),
        ),
    )
    .await;
}

#[tokio::test]
async fn private_targets_and_dns_servers_are_refused_unless_allowed() {
    let strict = spawn_app_with(|s| s.safety.allow_private_targets = false).await;
    let (_, key) = strict.new_user("ops").await;
    let refused = [
        (kind("tcp", "127.0.0.1:22"), "target"),
        (kind("tcp", "localhost:5432"), "target"),
        (kind("tcp", "[::1]:22"), "target"),
        (kind("tcp", "169.254.169.254:80"), "target"),
        (kind("tcp", "10.0.0.1:5432"), "target"),
        (kind("tls", "https://192.168.1.1/"), "target"),
        (kind("tls", "172.16.0.1:443"), "target"),
        (kind("icmp", "127.0.0.1"), "target"),
        (kind("icmp", "fe80::1"), "target"),
        (kind("icmp", "metadata.google.internal"), "target"),
        (kind("dns", "localhost"), "target"),
        (
            with(
                kind("dns", "example.com"),
                json!({"dns_server": "127.0.0.53"}),
            ),
            "dns_server",
        ),
        (
            with(
                kind("dns", "example.com"),
                json!({"dns_server": "10.0.0.2:53"}),
            ),
            "dns_server",
        ),
        (
            with(
                kind("dns", "example.com"),
                json!({"dns_server": "[fd00::1]:53"}),
            ),
            "dns_server",
        ),
    ];
    for (req, field) in &refused {
        let (status, body) = strict.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, req);
        assert!(
            body["details"][0]["message"]
                .as_str()
                .unwrap()
                .starts_with("must not point to"),
            "{body}"
        );
    }
    for req in [
        kind("tcp", "93.184.216.34:443"),
        kind("icmp", "example.com"),
        with(kind("dns", "example.com"), json!({"dns_server": "9.9.9.9"})),
    ] {
        create(&strict, &key, req).await;
    }

    let lax = spawn_app().await;
    let (_, key) = lax.new_user("ops").await;
    for (req, _) in refused {
        create(&lax, &key, req).await;
    }
}

#[tokio::test]
async fn a_manual_check_of_a_tcp_monitor_is_queued_as_check_due_v3() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let tcp = create(&app, &key, kind("tcp", "127.0.0.1:5432")).await;
    let (status, body) = app
        .call(
            Method::POST,
            &format!("{MONITORS}/{}/check", tcp["id"]),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let queued = stream_messages(&app.state.js, streams::CHECKS_STREAM).await;
    assert_eq!(queued.len(), 1, "{queued:?}");
    assert_eq!(queued[0].0, "uptime.checks.due.v5.default");
    let due: DueCheck = serde_json::from_value(queued[0].2.clone()).unwrap();
    assert_eq!(due.monitor_id, tcp["id"].as_i64().unwrap());
    assert_eq!(due.spec.kind, MonitorKind::Tcp);
    assert_eq!(due.spec.target, "127.0.0.1:5432");
    assert!(due.spec.options.is_empty(), "{:?}", due.spec.options);
}
