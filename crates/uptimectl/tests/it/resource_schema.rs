//! The committed JSON Schema of the resource files is the one generated
//! from the gateway's OpenAPI document: it cannot drift from the API.
//! `UPTIMECTL_BLESS=1 cargo nextest run -p uptimectl -E 'test(committed_schema)'`
//! rewrites it after an API change.

use std::path::Path;
use uptimectl::resource_schema::{generate, to_text, SCHEMA_PATH};

#[test]
fn the_committed_schema_is_the_one_generated_from_the_gateways_openapi_document() {
    let generated = generate(api_gateway::openapi::document());
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(SCHEMA_PATH);
    if std::env::var_os("UPTIMECTL_BLESS").is_some() {
        std::fs::write(&path, to_text(&generated)).expect("the schema is written");
    }
    let committed: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("the schema is committed"))
            .expect("the committed schema is JSON");
    // Compared as JSON values: key order is not the schema's meaning.
    assert!(
        committed == generated,
        "{SCHEMA_PATH} is not what the gateway's OpenAPI document gives; \
         rerun this test with UPTIMECTL_BLESS=1 and commit the file"
    );
    jsonschema::validator_for(&generated).expect("the schema compiles");
    for kind in uptimectl::kinds::Kind::ALL {
        assert!(
            generated["$defs"][kind.create_schema()].is_object(),
            "{} has its spec",
            kind.name()
        );
    }
}

/// The committed schema validates files before any server sees them, for
/// every deployment: it holds the alert rules to their absolute minimum (a
/// deployment's floor is its own, 300 s and 60 s by default, and its
/// server's 400 names it), so a file a lower-floored deployment accepts is
/// never refused here.
#[test]
fn the_schema_refuses_no_alert_rule_a_deployment_may_accept() {
    let validators = uptimectl::resource_schema::SpecValidators::get();
    let monitor = |rules: serde_json::Value| {
        let mut spec =
            serde_json::json!({"name": "m", "type": "http", "target": "https://example.com"});
        spec.as_object_mut()
            .unwrap()
            .extend(rules.as_object().unwrap().clone());
        validators.errors(uptimectl::kinds::Kind::Monitor, &spec)
    };
    let low = serde_json::json!({"reminder_interval_secs": 5, "flap_threshold": 3,
                                 "flap_window_secs": 2, "flap_stable_secs": 2});
    assert_eq!(monitor(low), Vec::<(String, String)>::new());
    let errors = monitor(serde_json::json!({"reminder_interval_secs": 0}));
    assert!(
        errors
            .iter()
            .any(|(field, _)| field == "spec.reminder_interval_secs"),
        "{errors:?}"
    );
}
