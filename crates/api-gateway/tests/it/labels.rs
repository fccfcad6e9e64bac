//! Monitor labels and keys with a label selector: validation naming the
//! field, labels in every monitor body, `?label=` filters ANDed, audit
//! entries before -> after, and a selector key that reaches only its
//! monitors (404 for the others, 403 for a monitor it would lose).

use crate::common::{spawn_app, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn create(app: &TestApp, key: &str, name: &str, labels: Value) -> Value {
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            key,
            json!({"name": name, "type": "http", "target": "http://127.0.0.1:9/", "labels": labels}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

fn names(page: &Value) -> Vec<String> {
    page["monitors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["name"].as_str().unwrap().to_string())
        .collect()
}

fn fields(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["field"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn labels_are_validated_shown_and_filtered() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;

    let pay = create(
        &app,
        &key,
        "pay",
        json!({"team": "payments", "env": "prod"}),
    )
    .await;
    assert_eq!(pay["labels"], json!({"env": "prod", "team": "payments"}));
    create(
        &app,
        &key,
        "search",
        json!({"team": "search", "env": "prod"}),
    )
    .await;
    let (status, plain) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "plain", "type": "tcp", "target": "127.0.0.1:9"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(plain["labels"], json!({}));

    // Bad keys and values: 400 naming each.
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "x", "type": "http", "target": "http://127.0.0.1:9/",
                   "labels": {"-bad": "x", "env": "not ok", "Example.com/x": "y"}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(
        fields(&body),
        ["labels.-bad", "labels.Example.com/x", "labels.env"]
    );
    let many: serde_json::Map<String, Value> =
        (0..33).map(|i| (format!("k{i}"), json!("v"))).collect();
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "x", "type": "http", "target": "http://127.0.0.1:9/", "labels": many}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["labels"]);
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "x", "type": "http", "target": "http://127.0.0.1:9/", "labels": {"a": 1}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

    // Filters: several ANDed; a bad one is a 400 naming `label`.
    let (_, page) = app.get("/api/v1/monitors?label=env=prod", &key).await;
    assert_eq!(names(&page), ["pay", "search"]);
    let (_, page) = app
        .get("/api/v1/monitors?label=env=prod&label=team=payments", &key)
        .await;
    assert_eq!(names(&page), ["pay"]);
    let (_, page) = app.get("/api/v1/monitors?label=team=none", &key).await;
    assert_eq!(names(&page), Vec::<String>::new());
    let (_, page) = app
        .get("/api/v1/monitors?limit=1&label=env=prod", &key)
        .await;
    assert_eq!(names(&page), ["pay"]);
    let cursor = page["next_cursor"].as_str().unwrap().to_string();
    let (_, page) = app
        .get(
            &format!("/api/v1/monitors?limit=1&label=env=prod&cursor={cursor}"),
            &key,
        )
        .await;
    assert_eq!(names(&page), ["search"]);
    for bad in ["label=env", "label=a%20b=c", "label=env=a&label=env=b"] {
        let (status, body) = app.get(&format!("/api/v1/monitors?{bad}"), &key).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{bad}: {body}");
        assert_eq!(fields(&body), ["label"], "{bad}");
    }

    // PATCH replaces them (and moves no definition version); null clears.
    let id = pay["id"].as_i64().unwrap();
    let path = format!("/api/v1/monitors/{id}");
    let (status, body) = app
        .patch(
            &path,
            &key,
            json!({"labels": {"team": "payments", "env": "staging"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["labels"],
        json!({"env": "staging", "team": "payments"})
    );
    assert_eq!(body["definition_version"], pay["definition_version"]);
    let (_, page) = app.get("/api/v1/monitors?label=env=prod", &key).await;
    assert_eq!(names(&page), ["search"]);
    let (status, body) = app.patch(&path, &key, json!({"name": "pay2"})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        body["labels"],
        json!({"env": "staging", "team": "payments"})
    );
    let (status, body) = app
        .patch(&path, &key, json!({"labels": {"env": "x y"}}))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["labels.env"]);

    // The audit entry shows the labels before -> after.
    let (_, log) = app
        .get(
            &format!(
                "/api/v1/audit-log?resource_kind=monitor&resource_id={id}&action=update&limit=100"
            ),
            &key,
        )
        .await;
    let entries = log["entries"].as_array().unwrap();
    let labelled = entries
        .iter()
        .find(|e| e["changes"].get("labels").is_some())
        .unwrap_or_else(|| panic!("no entry with labels: {log}"));
    assert_eq!(
        labelled["changes"]["labels"],
        json!({"before": {"env": "prod", "team": "payments"},
               "after": {"env": "staging", "team": "payments"}})
    );

    let (status, body) = app.patch(&path, &key, json!({"labels": null})).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(body["labels"], json!({}));
    let (_, got) = app.get(&path, &key).await;
    assert_eq!(got["labels"], json!({}));
}

#[tokio::test]
async fn bulk_creates_carry_labels() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (status, body) = app
        .post(
            "/api/v1/monitors/bulk",
            &key,
            json!({"monitors": [
                {"name": "a", "type": "tcp", "target": "127.0.0.1:9", "labels": {"env": "prod"}},
                {"name": "b", "type": "tcp", "target": "127.0.0.1:9"},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["monitors"][0]["labels"], json!({"env": "prod"}));
    assert_eq!(body["monitors"][1]["labels"], json!({}));
    let (status, body) = app
        .post(
            "/api/v1/monitors/bulk",
            &key,
            json!({"monitors": [
                {"name": "c", "type": "tcp", "target": "127.0.0.1:9", "labels": {"env": "-"}},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["monitors[0].labels.env"]);
    let (_, page) = app.get("/api/v1/monitors?label=env=prod", &key).await;
    assert_eq!(names(&page), ["a"]);
}

#[tokio::test]
async fn a_key_with_a_selector_reaches_only_its_monitors() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let pay = create(
        &app,
        &key,
        "pay",
        json!({"team": "payments", "env": "prod"}),
    )
    .await;
    let search = create(&app, &key, "search", json!({"team": "search"})).await;
    let (pay_id, search_id) = (pay["id"].as_i64().unwrap(), search["id"].as_i64().unwrap());

    let (status, ci) = app
        .post(
            "/api/v1/api-keys",
            &key,
            json!({"name": "ci", "scope": "write", "label_selector": {"team": "payments"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{ci}");
    assert_eq!(ci["label_selector"], json!({"team": "payments"}));
    let ci_key = ci["key"].as_str().unwrap().to_string();
    let (status, body) = app
        .post(
            "/api/v1/api-keys",
            &key,
            json!({"name": "bad", "label_selector": {"team": "no way"}}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(fields(&body), ["label_selector.team"]);

    // Sees only its monitors; every other monitor route is a 404.
    let (_, page) = app.get("/api/v1/monitors", &ci_key).await;
    assert_eq!(names(&page), ["pay"]);
    let (_, page) = app.get("/api/v1/monitors?label=env=prod", &ci_key).await;
    assert_eq!(names(&page), ["pay"]);
    let other = format!("/api/v1/monitors/{search_id}");
    for path in [
        other.clone(),
        format!("{other}/results"),
        format!("{other}/rounds"),
        format!("{other}/uptime/daily"),
    ] {
        let (status, _) = app.get(&path, &ci_key).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        let (status, _) = app.get(&path, &key).await;
        assert_eq!(status, StatusCode::OK, "{path} with the full key");
    }
    let (status, _) = app.patch(&other, &ci_key, json!({"name": "mine"})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app
        .post(&format!("{other}/check"), &ci_key, json!({}))
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.delete(&other, &ci_key).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = app.get(&other, &key).await;
    assert_eq!(status, StatusCode::OK, "still there");

    // Its own monitors: readable and changeable while they keep its labels.
    let mine = format!("/api/v1/monitors/{pay_id}");
    let (status, _) = app.get(&mine, &ci_key).await;
    assert_eq!(status, StatusCode::OK);
    let (status, body) = app
        .patch(
            &mine,
            &ci_key,
            json!({"labels": {"team": "payments", "env": "dev"}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = app
        .patch(&mine, &ci_key, json!({"labels": {"team": "search"}}))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(fields(&body), ["labels"]);

    // Creates: only monitors it can reach afterwards.
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &ci_key,
            json!({"name": "n", "type": "tcp", "target": "127.0.0.1:9"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(fields(&body), ["labels"]);
    let (status, body) = app
        .post(
            "/api/v1/monitors",
            &ci_key,
            json!({"name": "n", "type": "tcp", "target": "127.0.0.1:9", "labels": {"team": "payments"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = app
        .post(
            "/api/v1/monitors/bulk",
            &ci_key,
            json!({"monitors": [
                {"name": "b1", "type": "tcp", "target": "127.0.0.1:9", "labels": {"team": "payments"}},
                {"name": "b2", "type": "tcp", "target": "127.0.0.1:9"},
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (_, page) = app.get("/api/v1/monitors", &ci_key).await;
    assert_eq!(names(&page), ["pay", "n"], "nothing of the refused bulk");

    // Keys it issues are at least as narrow (its own selector by default).
    let (status, body) = app
        .post("/api/v1/api-keys", &ci_key, json!({"name": "sub"}))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["label_selector"], json!({"team": "payments"}));
    let (status, body) = app
        .post(
            "/api/v1/api-keys",
            &ci_key,
            json!({"name": "wide", "label_selector": {"env": "prod"}}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(fields(&body), ["label_selector"]);
    let (status, body) = app
        .post(
            "/api/v1/api-keys",
            &ci_key,
            json!({"name": "narrow", "label_selector": {"team": "payments", "env": "prod"}}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}
