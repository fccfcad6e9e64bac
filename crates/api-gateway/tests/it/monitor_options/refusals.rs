//! Every rule that refuses an http option, by the field it names.

use super::http;
use crate::common::spawn_app;
use crate::monitor_kinds::{assert_invalid, create, with, MONITORS};
use serde_json::{json, Value};

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
