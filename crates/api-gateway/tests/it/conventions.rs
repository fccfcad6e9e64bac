//! Issue 20: the HTTP conventions client generators rely on: `Location` on
//! every 201, unknown query parameters refused, one pagination style.

use crate::check_support::insert_heartbeat_monitor;
use crate::common::{spawn_app, TestApp};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// Sends a POST and returns the status, the `Location` header and the body.
async fn post_located(
    app: &TestApp,
    path: &str,
    key: &str,
    body: Value,
) -> (StatusCode, Option<String>, Value) {
    let res = app
        .client
        .post(app.url(path))
        .bearer_auth(key)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = res.status();
    let location = res
        .headers()
        .get("location")
        .map(|v| v.to_str().unwrap().to_string());
    (status, location, res.json().await.unwrap())
}

#[tokio::test]
async fn every_201_says_where_the_created_resource_is() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let creates = [
        (
            "/api/v1/monitors",
            json!({"name": "site", "type": "http", "target": "https://example.com"}),
            "/api/v1/monitors",
        ),
        (
            "/api/v1/alert-contacts",
            json!({"name": "ops", "type": "slack", "value": "https://hooks.slack.com/services/T/B/x"}),
            "/api/v1/alert-contacts",
        ),
        (
            "/api/v1/api-keys",
            json!({"name": "ci"}),
            "/api/v1/api-keys",
        ),
        (
            "/api/v1/invitations",
            json!({"email": "new@example.com", "role": "viewer"}),
            "/api/v1/invitations",
        ),
        (
            "/api/v1/status-pages",
            json!({"slug": "located", "title": "Located"}),
            "/api/v1/status-pages",
        ),
    ];
    for (path, body, collection) in creates {
        let (status, location, created) = post_located(&app, path, &key, body).await;
        assert_eq!(status, StatusCode::CREATED, "{path}: {created}");
        let id = created["id"].as_i64().unwrap();
        assert_eq!(
            location.as_deref(),
            Some(format!("{collection}/{id}").as_str()),
            "{path}"
        );
        // The location answers with the resource itself.
        let (status, read) = app.get(&location.unwrap(), &key).await;
        assert_eq!(status, StatusCode::OK, "{path}: {read}");
        assert_eq!(read["id"], id, "{path}");
    }
    // A bulk create made many: the location is the monitors' list.
    let (status, location, created) = post_located(
        &app,
        "/api/v1/monitors/bulk",
        &key,
        json!({"monitors": [{"name": "a", "type": "heartbeat"}, {"name": "b", "type": "heartbeat"}]}),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(location.as_deref(), Some("/api/v1/monitors"));

    // The document declares the header on every 201.
    let (_, spec) = app.get("/api/v1/openapi.json", &key).await;
    let mut created_answers = 0;
    for (path, item) in spec["paths"].as_object().unwrap() {
        for (method, op) in item.as_object().unwrap() {
            if let Some(created) = op["responses"].get("201") {
                created_answers += 1;
                assert!(
                    created["headers"]["Location"]["schema"].is_object(),
                    "{method} {path}: 201 without a Location header: {created}"
                );
            }
        }
    }
    // The creates above, the bulk create, status pages', maintenance
    // windows' and escalation policies' (whose Location
    // tests/it/escalation_policies.rs reads back), and the five PUTs by
    // ref (whose Location tests/it/apply.rs and tests/it/by_ref.rs read
    // back).
    assert_eq!(created_answers, 15);
}

fn refused(status: StatusCode, body: &Value, param: &str) {
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["error"], "invalid query parameters", "{body}");
    let details = body["details"].as_array().unwrap();
    assert!(
        details.iter().any(|d| d["field"] == param),
        "{param} named: {body}"
    );
}

#[tokio::test]
async fn unknown_query_parameters_are_refused_naming_them() {
    let app = spawn_app().await;
    let (user_id, key) = app.new_user("ops").await;
    let (status, monitor) = app
        .post(
            "/api/v1/monitors",
            &key,
            json!({"name": "hb", "type": "heartbeat"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{monitor}");
    let id = monitor["id"].as_i64().unwrap();

    // Lists: known parameters still work, an unknown one is named.
    assert_eq!(
        app.get("/api/v1/monitors?limit=5", &key).await.0,
        StatusCode::OK
    );
    let (status, body) = app.get("/api/v1/monitors?limit=5&sort=name", &key).await;
    refused(status, &body, "sort");
    // Routes without any query parameter refuse every one.
    for path in [
        format!("/api/v1/monitors/{id}?expand=results"),
        "/api/v1/usage?verbose=1".to_string(),
        "/api/v1/regions?x".to_string(),
        "/api/v1/api-keys?page=2".to_string(),
    ] {
        let (status, body) = app.get(&path, &key).await;
        let param = path.split('?').nth(1).unwrap().split('=').next().unwrap();
        refused(status, &body, param);
    }
    // Writes are refused before anything changes.
    let (status, body) = app
        .post(
            "/api/v1/monitors?dry_run=true",
            &key,
            json!({"name": "x", "type": "heartbeat"}),
        )
        .await;
    refused(status, &body, "dry_run");
    let (status, body) = app
        .delete(&format!("/api/v1/monitors/{id}?force=1"), &key)
        .await;
    refused(status, &body, "force");
    let (_, list) = app.get("/api/v1/monitors", &key).await;
    assert_eq!(list["monitors"].as_array().unwrap().len(), 1, "{list}");

    // The key is judged first, as with bodies.
    let (status, _) = app
        .call(Method::GET, "/api/v1/monitors?sort=name", None, None)
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // Heartbeat pings take any query string: cron tools add cache busters
    // and run ids.
    let (_, token) = insert_heartbeat_monitor(&app.state.pool, user_id, 'c', true).await;
    let (status, body) = app
        .call(
            Method::GET,
            &format!("/api/v1/heartbeat/{token}?rid=42&t=1700000000"),
            None,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

/// Status and kind fields are enums in the document, so generated clients
/// get enum types rather than strings.
#[tokio::test]
async fn status_and_kind_fields_are_enums() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, spec) = app.get("/api/v1/openapi.json", &key).await;
    let schemas = spec["components"]["schemas"].as_object().unwrap();
    let enum_values = |field: &Value| -> Option<Value> {
        let named = |reference: &Value| {
            let name = reference.as_str()?.rsplit('/').next()?;
            schemas.get(name)?.get("enum").cloned()
        };
        field
            .get("enum")
            .cloned()
            .or_else(|| named(&field["$ref"]))
            .or_else(|| {
                field["oneOf"]
                    .as_array()?
                    .iter()
                    .find_map(|variant| named(&variant["$ref"]))
            })
    };
    let mut checked = 0;
    for (name, schema) in schemas {
        for (field, property) in schema["properties"].as_object().into_iter().flatten() {
            if [
                "type",
                "status",
                "kind",
                "trigger",
                "verdict",
                "outcome",
                "event_type",
                "seen",
                "keyword_type",
            ]
            .contains(&field.as_str())
            {
                checked += 1;
                assert!(
                    enum_values(property).is_some(),
                    "{name}.{field} is not an enum: {property}"
                );
            }
        }
    }
    assert!(checked >= 15, "{checked}");
    let values =
        |name: &str, field: &str| enum_values(&schemas[name]["properties"][field]).unwrap();
    assert_eq!(
        values("CheckResultResponse", "status"),
        json!(["up", "degraded", "down"])
    );
    assert_eq!(
        values("CheckResultResponse", "trigger"),
        json!(["scheduled", "manual", "heartbeat"])
    );
    assert_eq!(
        values("DeliveryLog", "status"),
        json!(["pending", "delivered", "failed"])
    );
    assert_eq!(
        values("RoundResponse", "verdict"),
        json!(["up", "degraded", "down"])
    );
}

/// The main operations show a request and an answer.
#[tokio::test]
async fn the_main_operations_have_examples() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("ops").await;
    let (_, spec) = app.get("/api/v1/openapi.json", &key).await;
    let mut found = std::collections::HashMap::new();
    for item in spec["paths"].as_object().unwrap().values() {
        for op in item.as_object().unwrap().values() {
            found.insert(op["operationId"].as_str().unwrap().to_string(), op.clone());
        }
    }
    let json = |v: &Value| v["content"]["application/json"]["example"].clone();
    for (id, status, body) in [
        ("createMonitor", "201", true),
        ("updateMonitor", "200", true),
        ("getMonitor", "200", false),
        ("listMonitors", "200", false),
        ("createContact", "201", true),
        ("listContacts", "200", false),
        ("createApiKey", "201", true),
        ("listApiKeys", "200", false),
    ] {
        let op = &found[id];
        assert!(
            json(&op["responses"][status]).is_object(),
            "{id}: no {status} example"
        );
        if body {
            assert!(
                json(&op["requestBody"]).is_object(),
                "{id}: no request example"
            );
        }
    }
}
