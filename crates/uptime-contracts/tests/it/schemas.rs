//! Pins every published message version.
//!
//! 1. `proto-schemas/<name>.json` must equal the schema generated from the Rust
//!    type, so the types cannot drift from the published interface.
//! 2. `proto-schemas/examples/<name>.json` must equal the serialisation of a
//!    fixed sample message, so the wire form cannot change by accident, and
//!    the sample must validate against its schema.
//!
//! After an intentional, additive change (a new version), regenerate with
//! `UPTIME_BLESS=1 cargo test -p uptime-contracts --test schemas` and review the diff.

use chrono::{TimeZone, Utc};
use std::path::PathBuf;
use uptime_contracts::*;
use uuid::Uuid;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../proto-schemas")
}

fn bless() -> bool {
    std::env::var("UPTIME_BLESS").is_ok_and(|v| v == "1")
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap() + "\n"
}

fn check_file(path: PathBuf, expected: String) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &expected).unwrap();
        return;
    }
    let actual = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPTIME_BLESS=1 to create it)",
            path.display()
        )
    });
    assert_eq!(
        actual,
        expected,
        "{} differs from the Rust type: a published version changed in place",
        path.display()
    );
}

#[test]
fn committed_schemas_match_the_types() {
    for (name, subject, mut schema) in all_schemas() {
        schema["$id"] = format!("https://uptime.example/proto-schemas/{name}.json").into();
        schema["description"] = format!("Published on `{subject}`.").into();
        check_file(dir().join(format!("{name}.json")), pretty(&schema));
    }
}

fn at(h: u32, m: u32, s: u32) -> chrono::DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 22, h, m, s).unwrap()
}

fn samples() -> Vec<(&'static str, serde_json::Value)> {
    let check_id = Uuid::parse_str("7d8f2c1e-4b7a-5c3d-9e1f-0a2b3c4d5e6f").unwrap();
    let event_id = Uuid::parse_str("3f1e2d4c-5b6a-5978-8877-665544332211").unwrap();
    let check = CheckRef {
        check_id,
        trigger: Trigger::Scheduled,
        checked_at: at(10, 15, 0),
        status: MonitorStatus::Down,
        latency_ms: Some(812),
        http_status: Some(503),
        error: Some("expected status 200, got 503".into()),
    };
    fn v<M: Message>(m: M) -> (&'static str, serde_json::Value) {
        (M::SCHEMA, serde_json::to_value(m).unwrap())
    }
    let spec = CheckSpec {
        kind: MonitorKind::Http,
        target: "https://example.com/api/health".into(),
        timeout_secs: uptime_contracts::TimeoutSecs::of(10),
        expected_status: uptime_contracts::ExpectedStatus::of(200),
        keyword: None,
        keyword_type: None,
        options: CheckOptions {
            http: Some(HttpRequest {
                method: HttpMethod::Post,
                headers: vec![Header {
                    name: "Content-Type".into(),
                    value: "application/json".into(),
                }],
                body: Some("{\"probe\":true}".into()),
                // A value the api-gateway's keyring made; no key here opens it.
                basic_auth: Some(BasicAuth {
                    username: "monitor".into(),
                    password_sealed: Some(
                        "v1.k1.q83vEjRWeJC7ze8S0Ykg3eP0mVoKsqMBp6b0KcJMDd3oLVU".into(),
                    ),
                }),
            }),
            assertions: vec![
                Assertion {
                    source: AssertionSource::JsonBody,
                    property: Some("$.status".into()),
                    comparison: Comparison::Equals,
                    target: Some("ok".into()),
                },
                Assertion {
                    source: AssertionSource::ResponseTime,
                    property: None,
                    comparison: Comparison::LessThan,
                    target: Some("500".into()),
                },
            ],
            dns: None,
            tls: None,
        },
    };
    let monitor_v2 = MonitorRef {
        id: 43,
        user_id: 7,
        name: "Example database port".into(),
        kind: MonitorKind::Tcp,
        target: Some("db.example.com:5432".into()),
    };
    let round_id = Uuid::parse_str("5a4b3c2d-1e0f-5a9b-8c7d-6e5f4a3b2c1d").unwrap();
    let eu_check = check_id_in_round(round_id, "eu", 3);
    let regional = vec![
        v(DueCheck {
            check_id: eu_check,
            monitor_id: 42,
            definition_version: 3,
            interval_secs: 60,
            trigger: Trigger::Scheduled,
            due_at: at(10, 15, 0),
            spec,
            region: "eu".into(),
            round_id,
        }),
        v(CheckResult {
            check_id: eu_check,
            monitor_id: 42,
            definition_version: 3,
            trigger: Trigger::Scheduled,
            due_at: Some(at(10, 15, 0)),
            checked_at: at(10, 15, 0),
            outcome: CheckOutcome::Fail,
            latency_ms: None,
            http_status: None,
            error: Some("connection refused".into()),
            ssl_expires_at: None,
            reporter: "checker-eu-1".into(),
            region: "eu".into(),
            round_id: Some(round_id),
        }),
        v(StateChangedV3 {
            event_id,
            monitor: MonitorRef {
                id: 42,
                user_id: 7,
                name: "Example database port".into(),
                kind: MonitorKind::Tcp,
                target: Some("db.example.com:5432".into()),
            },
            previous_status: MonitorStatus::Up,
            status: MonitorStatus::Down,
            occurred_at: at(10, 15, 6),
            previous_since: Some(at(8, 0, 0)),
            consecutive_failures: 1,
            check: CheckRef {
                check_id: eu_check,
                trigger: Trigger::Scheduled,
                checked_at: at(10, 15, 0),
                status: MonitorStatus::Down,
                latency_ms: None,
                http_status: None,
                error: Some("connection refused".into()),
            },
            round: Some(Round {
                round_id,
                quorum: 2,
                regions: vec![
                    RegionOutcome {
                        region: "eu".into(),
                        seen: RegionSeen::Failed,
                        check_id: Some(eu_check),
                        latency_ms: None,
                        http_status: None,
                        error: Some("connection refused".into()),
                    },
                    RegionOutcome {
                        region: "us".into(),
                        seen: RegionSeen::Failed,
                        check_id: Some(check_id_in_round(round_id, "us", 3)),
                        latency_ms: Some(5000),
                        http_status: None,
                        error: Some("timed out after 5 s".into()),
                    },
                    RegionOutcome {
                        region: "ap".into(),
                        seen: RegionSeen::Passed,
                        check_id: Some(check_id_in_round(round_id, "ap", 3)),
                        latency_ms: Some(41),
                        http_status: None,
                        error: None,
                    },
                ],
                note: None,
            }),
        }),
    ];
    let mut all = vec![
        v(StateChange {
            event_id,
            monitor: monitor_v2.clone(),
            previous_status: MonitorStatus::Down,
            status: MonitorStatus::Down,
            occurred_at: at(10, 45, 0),
            previous_since: Some(at(10, 15, 0)),
            consecutive_failures: 31,
            check: check.clone(),
            round: None,
            alert: AlertKind::Reminder,
            incident_id: Some(Uuid::parse_str("0f9e8d7c-6b5a-5493-8271-605f4e3d2c1b").unwrap()),
            down_for_secs: Some(1800),
            held: None,
            blocked_by: vec![],
            held_children: 3,
            labels: [("env".to_string(), "prod".to_string())]
                .into_iter()
                .collect(),
            in_maintenance: false,
        }),
        v(SslWarning {
            event_id,
            monitor: MonitorRef {
                kind: MonitorKind::Tls,
                target: Some("db.example.com:5432".into()),
                ..monitor_v2
            },
            ssl_expires_at: at(23, 59, 59),
            days_left: 0,
            warn_days: 30,
            occurred_at: at(10, 15, 1),
            check: check.clone(),
        }),
        v(CheckResultV2 {
            check_id,
            monitor_id: 42,
            definition_version: 3,
            trigger: Trigger::Scheduled,
            due_at: Some(at(10, 15, 0)),
            checked_at: at(10, 15, 0),
            outcome: CheckOutcome::Fail,
            latency_ms: Some(812),
            http_status: Some(503),
            error: Some("expected status 200, got 503".into()),
            ssl_expires_at: Some(at(23, 59, 59)),
            reporter: "checker-7f9c".into(),
        }),
        v(MonitorChangedV1 {
            monitor_id: 42,
            change: MonitorChange::Upserted,
            changed_at: at(10, 0, 0),
        }),
        v(ApiKeyRevokedV1 {
            key_id: 12,
            user_id: 7,
            key_sha256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08".into(),
            revoked_at: at(10, 20, 0),
        }),
        v(audit::AuditRecordedV1 {
            event_id: Uuid::parse_str("5a4b3c2d-1e0f-4a9b-8c7d-6e5f4a3b2c1d").unwrap(),
            id: 901,
            org_id: 7,
            actor_user_id: 9,
            key_prefix: "upt_8fKq".into(),
            address: Some("203.0.113.7".into()),
            at: at(10, 21, 0),
            action: "update".into(),
            resource_kind: "monitor".into(),
            resource_id: Some(42),
            changes: serde_json::json!({
                "name": {"before": "Shop", "after": "Shop checkout"},
                "active": {"before": true, "after": false},
            }),
        }),
    ];
    all.extend(regional);
    all
}

#[test]
fn examples_are_pinned_and_valid() {
    let schemas: std::collections::HashMap<_, _> =
        all_schemas().into_iter().map(|(n, _, s)| (n, s)).collect();
    let samples = samples();
    assert_eq!(
        samples.len(),
        schemas.len(),
        "every message version has an example"
    );
    for (name, sample) in samples {
        check_file(
            dir().join("examples").join(format!("{name}.json")),
            pretty(&sample),
        );
        let validator = jsonschema::validator_for(&schemas[name]).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&sample)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{name}: {errors:?}");
    }
}

#[test]
fn schemas_reject_what_consumers_could_not_read() {
    let schema = schema_of::<CheckResult>();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let mut bad = samples()
        .into_iter()
        .find(|(n, _)| *n == CheckResult::SCHEMA)
        .unwrap()
        .1;
    bad["outcome"] = "maybe".into();
    assert!(!validator.is_valid(&bad));
    bad["outcome"] = "pass".into();
    bad.as_object_mut().unwrap().remove("check_id");
    assert!(!validator.is_valid(&bad));
}

#[test]
fn results_require_the_definition_version() {
    for (name, schema) in [
        (CheckResultV2::SCHEMA, schema_of::<CheckResultV2>()),
        (CheckResult::SCHEMA, schema_of::<CheckResult>()),
    ] {
        let validator = jsonschema::validator_for(&schema).unwrap();
        let mut bad = samples().into_iter().find(|(n, _)| *n == name).unwrap().1;
        assert!(validator.is_valid(&bad), "{name}: the sample is valid");
        bad["definition_version"] = 0.into();
        assert!(!validator.is_valid(&bad), "{name}: versions start at 1");
        bad.as_object_mut().unwrap().remove("definition_version");
        assert!(!validator.is_valid(&bad), "{name}: the version is required");
    }
}

#[test]
fn subjects_live_under_one_prefix_and_in_a_stream() {
    let streams = streams::all(1);
    for (_, subject, _) in all_schemas() {
        assert!(subject.starts_with("uptime."), "{subject}");
        let covered = streams.iter().any(|s| {
            s.subjects.iter().any(|pat| {
                let prefix = pat.trim_end_matches('>');
                subject.starts_with(prefix)
            })
        });
        if CORE_NATS_SUBJECTS.contains(&subject) {
            assert!(
                !covered,
                "{subject} is core NATS only, yet a stream captures it"
            );
        } else {
            assert!(covered, "{subject} is captured by no stream");
        }
    }
}

/// A due check on the wire has no place for a plaintext password: the
/// current version's schema names `password_sealed` and no `password`
/// anywhere.
#[test]
fn a_due_check_carries_no_plaintext_password() {
    fn property_names(schema: &serde_json::Value, out: &mut Vec<String>) {
        match schema {
            serde_json::Value::Object(map) => {
                if let Some(serde_json::Value::Object(props)) = map.get("properties") {
                    out.extend(props.keys().cloned());
                }
                map.values().for_each(|v| property_names(v, out));
            }
            serde_json::Value::Array(items) => items.iter().for_each(|v| property_names(v, out)),
            _ => {}
        }
    }
    let mut names = Vec::new();
    property_names(&schema_of::<DueCheck>(), &mut names);
    assert!(names.iter().any(|n| n == "password_sealed"), "{names:?}");
    assert!(!names.iter().any(|n| n == "password"), "{names:?}");
    let (_, sample) = samples()
        .into_iter()
        .find(|(n, _)| *n == DueCheck::SCHEMA)
        .unwrap();
    assert!(!sample.to_string().contains("\"password\""), "{sample}");
}
