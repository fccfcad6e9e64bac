//! The http options as stored and answered, and what their defaults store.

use super::http;
use crate::common::spawn_app;
use crate::monitor_kinds::{create, patch, stored, with, MONITORS};
use serde_json::{json, Value};

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
