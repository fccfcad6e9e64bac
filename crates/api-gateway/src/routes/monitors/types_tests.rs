//! The bodies read as the derived flat structs they replaced read them:
//! the same values, and the same errors (messages taken from those
//! structs), which the API answers with.

use super::*;
use crate::routes::monitors::kinds::keyword::KeywordType;
use crate::routes::monitors::monitor_type::MonitorType;
use serde_json::json;

fn create(body: serde_json::Value) -> Result<CreateMonitor, String> {
    serde_json::from_value(body).map_err(|e| e.to_string())
}

fn update(body: serde_json::Value) -> Result<UpdateMonitor, String> {
    serde_json::from_value(body).map_err(|e| e.to_string())
}

const EVERY_FIELD: &str = "`name`, `type`, `target`, `interval_secs`, `timeout_secs`, \
    `keyword`, `keyword_type`, `expected_status`, `confirmation_count`, `ssl_warn_days`, \
    `latency_warn_ms`, `alert_contact_ids`, `active`, `method`, `headers`, `body`, \
    `basic_auth`, `assertions`, `dns_record_type`, `dns_expected`, `dns_server`, \
    `tls_fingerprint_sha256`, `schedule`, `timezone`, `regions`, `quorum`, `labels`, \
    `reminder_interval_secs`, `reminder_max`, `depends_on`, `flap_threshold`, \
    `flap_window_secs`, `flap_stable_secs`, `ref`";

#[test]
fn an_unknown_field_is_answered_with_every_field_in_the_bodys_order() {
    let body = json!({"name": "a", "type": "http", "zzz": 1});
    let expected = format!("unknown field `zzz`, expected one of {EVERY_FIELD}");
    assert_eq!(create(body.clone()).unwrap_err(), expected);
    assert_eq!(update(body).unwrap_err(), expected);
}

#[test]
fn name_and_type_are_required_by_creates_only() {
    assert_eq!(
        create(json!({"type": "http"})).unwrap_err(),
        "missing field `name`"
    );
    assert_eq!(
        create(json!({"name": "a"})).unwrap_err(),
        "missing field `type`"
    );
    assert!(update(json!({})).is_ok());
}

#[test]
fn values_are_read_by_their_types_as_before() {
    assert_eq!(
        create(json!({"name": "a", "type": "http", "method": "TRACE"})).unwrap_err(),
        "unknown variant `TRACE`, expected one of `GET`, `HEAD`, `POST`, `PUT`, `PATCH`, \
         `DELETE`, `OPTIONS`"
    );
    assert_eq!(
        create(json!("x")).unwrap_err(),
        "invalid type: string \"x\", expected struct CreateMonitor"
    );
    assert_eq!(
        update(json!("x")).unwrap_err(),
        "invalid type: string \"x\", expected struct UpdateMonitor"
    );
}

#[test]
fn an_array_is_read_as_the_fields_in_order() {
    assert_eq!(
        create(json!([])).unwrap_err(),
        "invalid length 0, expected struct CreateMonitor with 34 elements"
    );
    let mut values = vec![json!("a"), json!("tls")];
    values.extend(std::iter::repeat_n(json!(null), 32));
    let read = create(serde_json::Value::Array(values)).unwrap();
    assert_eq!(
        (read.first.name.as_str(), read.first.kind),
        ("a", MonitorType::Tls)
    );
    assert!(update(json!([])).is_ok(), "every PATCH field has a default");
}

#[test]
fn each_field_reaches_its_group() {
    let read = create(json!({
        "quorum": 2,
        "name": "a",
        "type": "http",
        "keyword_type": "not_contains",
        "active": false,
        "method": "POST",
        "dns_server": "1.1.1.1",
        "tls_fingerprint_sha256": "ab",
        "schedule": "* * * * *",
    }))
    .unwrap();
    assert_eq!(read.placement.quorum, Some(2));
    assert_eq!(
        read.kinds.keyword.keyword_type,
        Some(KeywordType::NotContains)
    );
    assert_eq!(read.rest.active, Some(false));
    assert_eq!(read.kinds.http.method, Some(http::HttpMethod::Post));
    assert_eq!(read.kinds.dns.dns_server.as_deref(), Some("1.1.1.1"));
    assert_eq!(read.kinds.tls.tls_fingerprint_sha256.as_deref(), Some("ab"));
    assert_eq!(read.kinds.heartbeat.schedule.as_deref(), Some("* * * * *"));

    let patch = update(json!({"type": null, "body": null, "regions": ["eu"]})).unwrap();
    assert_eq!(
        patch.first.kind,
        Some(None),
        "null is kept apart from absent"
    );
    assert_eq!(patch.kinds.http.body, Some(None));
    assert_eq!(patch.kinds.http.method, None);
    assert_eq!(patch.placement.regions, Some(Some(vec!["eu".to_string()])));
}
