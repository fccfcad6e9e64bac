//! Monitors' alert rules through the API: defaults, bounds naming their
//! field, `depends_on` limited to the organisation's monitors and refused
//! when it closes a cycle, and incidents showing the new fields.

use crate::common::{spawn_app, spawn_app_with, TestApp};
use reqwest::StatusCode;
use serde_json::{json, Value};

async fn create(app: &TestApp, key: &str, extra: Value) -> (StatusCode, Value) {
    let mut body = json!({"name": "m", "type": "http", "target": "http://127.0.0.1:9/"});
    body.as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    app.post("/api/v1/monitors", key, body).await
}

fn fields(body: &Value) -> Vec<String> {
    body["details"]
        .as_array()
        .unwrap_or_else(|| panic!("details in {body}"))
        .iter()
        .map(|d| d["field"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn rules_are_off_by_default_bounded_and_kept_across_patches() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (status, plain) = create(&app, &key, json!({})).await;
    assert_eq!(status, StatusCode::CREATED, "{plain}");
    assert_eq!(plain["reminder_interval_secs"], Value::Null);
    assert_eq!(plain["depends_on"], json!([]));
    assert_eq!(plain["flap_threshold"], Value::Null);
    assert_eq!(plain["flap_window_secs"], 600);
    assert_eq!(plain["flap_stable_secs"], 900);
    assert_eq!(plain["flapping_since"], Value::Null);

    let (status, body) = create(
        &app,
        &key,
        json!({"reminder_interval_secs": 299, "reminder_max": 0, "flap_threshold": 1,
               "flap_window_secs": 59, "flap_stable_secs": 86401}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let mut named = fields(&body);
    named.sort();
    assert_eq!(
        named,
        [
            "flap_stable_secs",
            "flap_threshold",
            "flap_window_secs",
            "reminder_interval_secs",
            "reminder_max"
        ]
    );

    let id = plain["id"].as_i64().unwrap();
    let path = format!("/api/v1/monitors/{id}");
    let (status, set) = app
        .patch(
            &path,
            &key,
            json!({"reminder_interval_secs": 600, "reminder_max": 3, "flap_threshold": 5}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(
        (
            &set["reminder_interval_secs"],
            &set["reminder_max"],
            &set["flap_threshold"]
        ),
        (&json!(600), &json!(3), &json!(5))
    );
    let (_, renamed) = app.patch(&path, &key, json!({"name": "n"})).await;
    assert_eq!(renamed["reminder_interval_secs"], 600, "kept");
    let (_, cleared) = app
        .patch(&path, &key, json!({"reminder_interval_secs": null}))
        .await;
    assert_eq!(cleared["reminder_interval_secs"], Value::Null);
    assert_eq!(cleared["reminder_max"], 3);
}

#[tokio::test]
async fn depends_on_names_the_organisations_monitors_without_cycles() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (_, other_key) = app.new_user("other").await;
    let (_, theirs) = create(&app, &other_key, json!({})).await;
    let (_, a) = create(&app, &key, json!({})).await;
    let a = a["id"].as_i64().unwrap();

    let (status, body) = create(&app, &key, json!({"depends_on": [theirs["id"]]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["depends_on"]);

    let (status, b) = create(&app, &key, json!({"depends_on": [a]})).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    assert_eq!(b["depends_on"], json!([a]));
    let b = b["id"].as_i64().unwrap();
    let (_, c) = create(&app, &key, json!({"depends_on": [b]})).await;
    let c = c["id"].as_i64().unwrap();

    // a -> c -> b -> a.
    let (status, body) = app
        .patch(
            &format!("/api/v1/monitors/{a}"),
            &key,
            json!({"depends_on": [c]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["depends_on"]);
    let (status, body) = app
        .patch(
            &format!("/api/v1/monitors/{a}"),
            &key,
            json!({"depends_on": [a]}),
        )
        .await;
    assert_eq!(
        (status, fields(&body)),
        (StatusCode::BAD_REQUEST, vec!["depends_on".to_string()])
    );
    let (status, body) = create(&app, &key, json!({"depends_on": [a, a]})).await;
    assert_eq!(
        (status, fields(&body)),
        (StatusCode::BAD_REQUEST, vec!["depends_on".to_string()])
    );
    let (status, body) = create(
        &app,
        &key,
        json!({"depends_on": (1..=11).collect::<Vec<i64>>()}),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(fields(&body).contains(&"depends_on".to_string()));

    // A diamond is fine.
    let (status, body) = create(&app, &key, json!({"depends_on": [b, c]})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
}

#[tokio::test]
async fn a_deployment_may_lower_the_reminder_floor() {
    let app = spawn_app_with(|s| s.alert_rules.min_reminder_interval_secs = 1).await;
    let (_, key) = app.new_user("acme").await;
    let (status, body) = create(&app, &key, json!({"reminder_interval_secs": 2})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["reminder_interval_secs"], 2);
}

#[tokio::test]
async fn a_bulk_create_refuses_alert_rules_naming_the_item() {
    let app = spawn_app().await;
    let (_, key) = app.new_user("acme").await;
    let (status, body) = app
        .post(
            "/api/v1/monitors/bulk",
            &key,
            json!({"monitors": [
                {"name": "a", "type": "http", "target": "http://127.0.0.1:9/"},
                {"name": "b", "type": "http", "target": "http://127.0.0.1:9/", "flap_threshold": 3}
            ]}),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(fields(&body), ["monitors[1].flap_threshold"]);
}

/// Every `minimum` the served document gives `field`, wherever a schema
/// has it (create, update, apply and bulk bodies alike).
fn documented_minimums(doc: &Value, field: &str, found: &mut Vec<i64>) {
    match doc {
        Value::Object(map) => {
            if let Some(Value::Object(properties)) = map.get("properties") {
                if let Some(min) = properties.get(field).and_then(|p| p.get("minimum")) {
                    found.push(min.as_i64().unwrap_or(i64::MIN));
                }
            }
            for value in map.values() {
                documented_minimums(value, field, found);
            }
        }
        Value::Array(items) => items
            .iter()
            .for_each(|v| documented_minimums(v, field, found)),
        _ => {}
    }
}

/// A client validating against the served document accepts what this
/// deployment accepts: the floors it states are the configured ones, and
/// a value at the floor is created.
#[tokio::test]
async fn the_served_document_states_the_deployments_floors() {
    for (reminder_floor, flap_floor) in [(300, 60), (5, 2)] {
        let app = spawn_app_with(|s| {
            s.alert_rules.min_reminder_interval_secs = reminder_floor;
            s.alert_rules.min_flap_secs = flap_floor;
        })
        .await;
        let doc: Value = app
            .client
            .get(app.url("/api/v1/openapi.json"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        for (field, floor) in [
            ("reminder_interval_secs", reminder_floor),
            ("flap_window_secs", flap_floor),
            ("flap_stable_secs", flap_floor),
        ] {
            let mut found = Vec::new();
            documented_minimums(&doc["components"], field, &mut found);
            // At least the create and the update body.
            assert!(found.len() >= 2, "{field}: {found:?}");
            assert!(
                found.iter().all(|min| *min == i64::from(floor)),
                "{field} with a floor of {floor}: the document says {found:?}"
            );
        }
        let (_, key) = app.new_user("acme").await;
        let (status, body) = create(
            &app,
            &key,
            json!({"reminder_interval_secs": reminder_floor, "flap_threshold": 3,
                   "flap_window_secs": flap_floor, "flap_stable_secs": flap_floor}),
        )
        .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let (status, body) = create(
            &app,
            &key,
            json!({"reminder_interval_secs": reminder_floor - 1}),
        )
        .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
}
