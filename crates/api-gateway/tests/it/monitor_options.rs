//! Issue 12 in the monitor API: the http options (method, headers, body,
//! basic auth with a write-only password, assertions) and every rule that
//! refuses them, by the field it names.

use crate::check_support::stream_messages;
use crate::common::{spawn_app, TestApp};
use crate::monitor_kinds::{assert_invalid, create, patch, stored, with, MONITORS};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use uptime_contracts::{streams, DueCheck, HttpMethod};

const SECRET: &str = "s3cr3t-Pa55-w0rd";

fn http() -> Value {
    json!({"name": "api", "type": "http", "target": "https://api.example.com/health"})
}

#[tokio::test]
async fn http_options_round_trip_and_defaults_store_nothing() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;

    // Today's request body: the options show their defaults, nothing is stored.
    let plain = create(&app, &key, http()).await;
    assert_eq!(plain["method"], "GET");
    assert_eq!(plain["headers"], json!([]));
    assert_eq!(plain["assertions"], json!([]));
    for field in [
        "body",
        "basic_auth",
        "dns_record_type",
        "tls_fingerprint_sha256",
    ] {
        assert!(plain.get(field).is_some_and(Value::is_null), "{field}");
    }
    assert_eq!(stored(&app, &plain["id"]).await, (None, None));

    let req = with(
        http(),
        json!({
            "method": "POST",
            "headers": [
                {"name": "Content-Type", "value": "application/json"},
                {"name": "X-Tag", "value": "a"},
                {"name": "X-Tag", "value": "b"}
            ],
            "body": "{\"ping\": true}",
            "assertions": [
                {"source": "status_code", "comparison": "less_than", "target": 300},
                {"source": "json_body", "property": "$.checks[0].ok", "comparison": "equals", "target": "true"},
                {"source": "header", "property": "content-type", "comparison": "contains", "target": "json"},
                {"source": "text_body", "comparison": "matches", "target": "^\\{"},
                {"source": "response_time", "comparison": "less_than", "target": 1500.5},
                {"source": "text_body", "comparison": "not_empty"}
            ]
        }),
    );
    let m = create(&app, &key, req.clone()).await;
    assert_eq!(m["method"], "POST");
    assert_eq!(m["headers"], req["headers"]);
    assert_eq!(m["body"], "{\"ping\": true}");
    let assertions = m["assertions"].as_array().unwrap();
    assert_eq!(assertions.len(), 6);
    assert_eq!(
        assertions[0],
        json!({"source": "status_code", "property": null, "comparison": "less_than", "target": "300"})
    );
    assert_eq!(assertions[4]["target"], "1500.5");
    assert!(assertions[5]["target"].is_null());
    let (_, got) = app.get(&format!("{MONITORS}/{}", m["id"]), &key).await;
    assert_eq!(got, m);

    // Keyword monitors take them too.
    let kw = create(
        &app,
        &key,
        json!({"name": "kw", "type": "keyword", "target": "https://example.com/", "keyword": "ok", "method": "HEAD"}),
    )
    .await;
    assert_eq!(kw["method"], "HEAD");

    // PATCH: given fields replace, null resets; back to the defaults, the
    // column is NULL again, as for monitors made before the options.
    let version = m["definition_version"].as_i64().unwrap();
    let m2 = patch(
        &app,
        &key,
        &m["id"],
        json!({"headers": [{"name": "Accept", "value": "*/*"}]}),
    )
    .await;
    assert_eq!(m2["headers"], json!([{"name": "Accept", "value": "*/*"}]));
    assert_eq!(m2["method"], "POST");
    assert_eq!(m2["definition_version"], version + 1);
    let m3 = patch(
        &app,
        &key,
        &m["id"],
        json!({"method": null, "headers": null, "body": null, "assertions": []}),
    )
    .await;
    assert_eq!(
        (
            &m3["method"],
            &m3["headers"],
            &m3["body"],
            &m3["assertions"]
        ),
        (&json!("GET"), &json!([]), &Value::Null, &json!([]))
    );
    assert_eq!(stored(&app, &m["id"]).await, (None, None));
    // A rename of a monitor with options does not change its checks.
    let named = patch(&app, &key, &m2["id"], json!({"name": "renamed"})).await;
    assert_eq!(named["definition_version"], m3["definition_version"]);
}

/// Asserts `body` shows no password anywhere.
fn assert_no_secret(body: &Value) {
    assert!(!body.to_string().contains(SECRET), "password shown: {body}");
}

async fn queued_password(app: &TestApp, key: &str, id: &Value) -> Option<String> {
    let (status, body) = app
        .call(
            Method::POST,
            &format!("{MONITORS}/{id}/check"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let queued = stream_messages(&app.state.js, streams::CHECKS_STREAM).await;
    let (_, _, payload) = queued
        .iter()
        .rev()
        .find(|(_, _, p)| p["monitor_id"] == *id)
        .expect("a due check of the monitor");
    // Issue 19: on the wire, the password is sealed (check-due.v5).
    assert_no_secret(payload);
    let due: DueCheck = serde_json::from_value(payload.clone()).unwrap();
    let http = due.spec.options.http.expect("the request");
    assert_eq!(http.method, HttpMethod::Get);
    http.basic_auth
        .expect("basic auth")
        .password_sealed
        .map(|sealed| {
            uptime_testkit::secrets::test_keyring()
                .open(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, &sealed)
                .expect("opens with the test key")
                .to_string()
        })
}

#[tokio::test]
async fn the_basic_auth_password_is_write_only() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let req = with(
        http(),
        json!({"basic_auth": {"username": "monitor", "password": SECRET}}),
    );
    let m = create(&app, &key, req).await;
    assert_no_secret(&m);
    assert_eq!(
        m["basic_auth"],
        json!({"username": "monitor", "password_set": true})
    );
    let (options, password) = stored(&app, &m["id"]).await;
    assert_eq!(password.as_deref(), Some(SECRET));
    assert!(!options.unwrap().to_string().contains(SECRET));

    let (_, got) = app.get(&format!("{MONITORS}/{}", m["id"]), &key).await;
    assert_no_secret(&got);
    assert_eq!(got["basic_auth"], m["basic_auth"]);
    let (_, list) = app.get(MONITORS, &key).await;
    assert_no_secret(&list);
    assert_eq!(list["monitors"][0]["basic_auth"]["password_set"], true);
    let (status, bulk) = app
        .post(
            &format!("{MONITORS}/bulk"),
            &key,
            json!({"monitors": [with(http(), json!({"basic_auth": {"username": "b", "password": SECRET}}))]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{bulk}");
    assert_no_secret(&bulk);
    assert_eq!(bulk["monitors"][0]["basic_auth"]["password_set"], true);

    // The checker gets it, sealed, in the due check only.
    assert_eq!(
        queued_password(&app, &key, &m["id"]).await.as_deref(),
        Some(SECRET)
    );

    // A new user name without a password keeps the stored password.
    let renamed = patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "other"}}),
    )
    .await;
    assert_no_secret(&renamed);
    assert_eq!(
        renamed["basic_auth"],
        json!({"username": "other", "password_set": true})
    );
    assert_eq!(stored(&app, &m["id"]).await.1.as_deref(), Some(SECRET));
    // `""` removes the password, null removes both.
    let no_password = patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "other", "password": ""}}),
    )
    .await;
    assert_eq!(no_password["basic_auth"]["password_set"], false);
    assert_eq!(stored(&app, &m["id"]).await.1, None);
    patch(
        &app,
        &key,
        &m["id"],
        json!({"basic_auth": {"username": "x", "password": SECRET}}),
    )
    .await;
    let cleared = patch(&app, &key, &m["id"], json!({"basic_auth": null})).await;
    assert!(cleared["basic_auth"].is_null());
    assert_eq!(stored(&app, &m["id"]).await, (None, None));

    // Another type drops user name and password.
    let bulk_id = &bulk["monitors"][0]["id"];
    patch(
        &app,
        &key,
        bulk_id,
        json!({"type": "tcp", "target": "example.com:443"}),
    )
    .await;
    assert_eq!(stored(&app, bulk_id).await, (None, None));
}

#[tokio::test]
async fn every_http_option_rule_refuses_naming_the_field() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let header = |name: &str, value: &str| json!({"headers": [{"name": name, "value": value}]});
    let assertion = |a: Value| json!({ "assertions": [a] });
    let auth = |username: &str, password: &str| json!({"basic_auth": {"username": username, "password": password}});
    let cases = [
        (
            json!({"headers": vec![json!({"name": "X-A", "value": "1"}); 21]}),
            "headers",
        ),
        (header("Bad Name", "1"), "headers[0].name"),
        (header("", "1"), "headers[0].name"),
        (header(&"X".repeat(129), "1"), "headers[0].name"),
        (header("Host", "example.org"), "headers[0].name"),
        (header("content-length", "5"), "headers[0].name"),
        (header("Transfer-Encoding", "chunked"), "headers[0].name"),
        (header("X-Evil", "a\r\nX-Injected: 1"), "headers[0].value"),
        (header("X-A", &"v".repeat(1025)), "headers[0].value"),
        (header("X-A", "café"), "headers[0].value"),
        (
            with(header("Authorization", "Bearer t"), auth("u", "p")),
            "headers[0].name",
        ),
        (json!({"body": ""}), "body"),
        (json!({"body": "b".repeat(16 * 1024 + 1)}), "body"),
        (auth("", "p"), "basic_auth.username"),
        (auth("a:b", "p"), "basic_auth.username"),
        (auth(&"u".repeat(257), "p"), "basic_auth.username"),
        (auth("u", &"p".repeat(257)), "basic_auth.password"),
        (auth("u", "a\nb"), "basic_auth.password"),
        (
            json!({"assertions": vec![json!({"source": "text_body", "comparison": "not_empty"}); 21]}),
            "assertions",
        ),
        (
            assertion(json!({"source": "status_code", "comparison": "contains", "target": "20"})),
            "assertions[0].comparison",
        ),
        (
            assertion(json!({"source": "response_time", "comparison": "equals", "target": 5})),
            "assertions[0].comparison",
        ),
        (
            assertion(json!({"source": "header", "comparison": "equals", "target": "x"})),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "header", "property": "Bad Name", "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "status", "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "$.a[", "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": format!("$.{}", "a".repeat(256)), "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(json!({"source": "text_body", "property": "x", "comparison": "not_empty"})),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "$..*..*..*", "comparison": "equals", "target": "x"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "$[?@.a[?@.b[?@.c]]]", "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "$.checks[?match(@.name, 'd.*')]", "comparison": "not_empty"}),
            ),
            "assertions[0].property",
        ),
        (
            assertion(json!({"source": "text_body", "comparison": "equals"})),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "text_body", "comparison": "is_empty", "target": "x"})),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "text_body", "comparison": "contains", "target": ""})),
            "assertions[0].target",
        ),
        (
            assertion(
                json!({"source": "text_body", "comparison": "contains", "target": "t".repeat(1025)}),
            ),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "status_code", "comparison": "equals", "target": 600})),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "status_code", "comparison": "equals", "target": "ok"})),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "status_code", "comparison": "equals", "target": 200.5})),
            "assertions[0].target",
        ),
        (
            assertion(json!({"source": "response_time", "comparison": "less_than", "target": -1})),
            "assertions[0].target",
        ),
        (
            assertion(
                json!({"source": "response_time", "comparison": "less_than", "target": 120001}),
            ),
            "assertions[0].target",
        ),
        (
            assertion(
                json!({"source": "json_body", "property": "$.n", "comparison": "greater_than", "target": "many"}),
            ),
            "assertions[0].target",
        ),
        (
            assertion(
                json!({"source": "text_body", "comparison": "matches", "target": "(unclosed"}),
            ),
            "assertions[0].target",
        ),
        (
            assertion(
                json!({"source": "text_body", "comparison": "matches", "target": "(?:\\w{100}){100}"}),
            ),
            "assertions[0].target",
        ),
    ];
    for (extra, field) in cases {
        let req = with(http(), extra);
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, field, &req);
    }

    // Just inside every bound.
    let m = create(
        &app,
        &key,
        with(
            http(),
            json!({
                "headers": vec![json!({"name": "X".repeat(128), "value": "v ~x".repeat(256)}); 20],
                "body": "é".repeat(8 * 1024),
                "basic_auth": {"username": "ü".repeat(256), "password": "p".repeat(256)},
                "assertions": vec![json!({"source": "text_body", "comparison": "matches", "target": "a".repeat(1024)}); 20]
            }),
        ),
    )
    .await;
    assert_eq!(m["headers"].as_array().unwrap().len(), 20);

    // A PATCH is held to the same rules, and a bulk item names its index.
    let req = header("Host", "x");
    let (status, body) = app
        .patch(&format!("{MONITORS}/{}", m["id"]), &key, req.clone())
        .await;
    assert_invalid(status, &body, "headers[0].name", &req);
    let req = json!({"monitors": [http(), with(http(), header("Connection", "close"))]});
    let (status, body) = app
        .post(&format!("{MONITORS}/bulk"), &key, req.clone())
        .await;
    assert_invalid(status, &body, "monitors[1].headers[0].name", &req);
}

/// Issue 19: JSONPaths whose cost no body bounds are refused with the
/// field and why; the common ones are taken.
#[tokio::test]
async fn jsonpaths_over_any_budget_are_refused_saying_why() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let asserting = |path: &str| {
        with(
            http(),
            json!({"assertions": [
                {"source": "status_code", "comparison": "equals", "target": 200},
                {"source": "json_body", "property": path, "comparison": "not_empty"}
            ]}),
        )
    };
    let deep = format!("$[?{}@{}]", "@[?".repeat(50), "]".repeat(50));
    for (path, says) in [
        (
            "$..*..*..*..*..*..*",
            "must have at most 2 descendant segments (..), filters included",
        ),
        ("$..a[?@..b..c]", "must have at most 2 descendant segments"),
        ("$[?@.a[?@.b[?@.c]]]", "must nest filters at most 2 deep"),
        // Parsing this would never end: refused before.
        (
            deep.as_str(),
            "must nest brackets and parentheses at most 8 deep",
        ),
        (
            "$[?search(@.status, 'down')]",
            "must not call the JSONPath function search(): select the value and compare it \
             with the matches comparison instead",
        ),
    ] {
        let req = asserting(path);
        let (status, body) = app.post(MONITORS, &key, req.clone()).await;
        assert_invalid(status, &body, "assertions[1].property", &req);
        let detail = body["details"]
            .as_array()
            .unwrap()
            .iter()
            .find(|d| d["field"] == "assertions[1].property")
            .unwrap();
        let message = detail["message"].as_str().unwrap();
        assert!(message.starts_with(says), "{path}: {message}");
    }
    for path in [
        "$.a.b",
        "$.items[*].status",
        "$.items[?@.status == 'down']",
        "$..id",
        "$..items[?@.id > 1]..name",
        "$['..'][?@['..'] == '..']",
    ] {
        let m = create(&app, &key, asserting(path)).await;
        assert_eq!(m["assertions"][1]["property"], path);
    }

    // The budgets are in the OpenAPI document.
    let doc: Value = app
        .client
        .get(app.url("/api/v1/openapi.json"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let schemas = &doc["components"]["schemas"];
    // Doc comments keep their line breaks.
    let text = |v: &Value| {
        let words: Vec<&str> = v.as_str().unwrap_or_default().split_whitespace().collect();
        words.join(" ")
    };
    let property = text(&schemas["AssertionInput"]["properties"]["property"]["description"]);
    for says in [
        "at most 2 descendant segments",
        "max(100000, 8 × the body's nodes)",
        "2 seconds",
        "`assertion N over its budget: …`",
    ] {
        assert!(property.contains(says), "{says} in {property}");
    }
    let comparisons = text(&schemas["AssertionComparison"]["description"]);
    assert!(
        comparisons.contains("`match()` and `search()` functions are refused"),
        "{comparisons}"
    );
}
