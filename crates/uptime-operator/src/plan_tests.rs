use super::*;
use crate::resources::{SecretField, SecretKeyRef};
use chrono::TimeZone;
use serde_json::json;
use std::collections::BTreeMap;

fn at(secs: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
}

fn timing() -> Timing {
    Timing {
        reapply_every: Duration::from_secs(600),
        observe_every: Duration::from_secs(60),
        retry_refused: Duration::from_secs(30),
        retry_unreachable: Duration::from_secs(10),
    }
}

fn view(kind: Kind, body: Value) -> ResourceView {
    let Value::Object(body) = body else {
        panic!("an object")
    };
    ResourceView {
        kind,
        namespace: "payments".into(),
        name: "api".into(),
        uid: None,
        generation: Some(1),
        deleting: false,
        has_finalizer: true,
        body,
        secret_fields: Vec::new(),
        status: ResourceStatus::default(),
    }
}

fn monitor() -> ResourceView {
    view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "target": "https://example.com"}),
    )
}

fn seen(id: i64) -> Observed {
    Observed {
        id,
        state: Some("up".into()),
        last_checked_at: Some(at(-5)),
        open_incident_id: None,
    }
}

/// The view after the API accepted it at `when`.
fn applied(mut v: ResourceView, when: DateTime<Utc>) -> ResourceView {
    v.status = status_after(&v, "", &Outcome::Applied(seen(7)), when);
    v
}

#[test]
fn refs_are_namespace_dot_name_with_the_prefix() {
    assert_eq!(api_ref("", "payments", "api").unwrap(), "payments.api");
    assert_eq!(
        api_ref("prod.", "payments", "api").unwrap(),
        "prod.payments.api"
    );
    let long = "a".repeat(250);
    let problem = api_ref("", "payments", &long).unwrap_err();
    assert_eq!(problem.reason, "InvalidName");
    assert_eq!(
        api_ref("Prod.", "payments", "api").unwrap_err().reason,
        "InvalidName"
    );
    assert!(api_ref("-", "payments", "api").is_err());
}

#[test]
fn a_new_resource_gets_the_finalizer_before_anything_is_applied() {
    let mut v = monitor();
    v.has_finalizer = false;
    assert_eq!(next_step(&v, "", &timing(), at(0)), Step::AddFinalizer);
    v.has_finalizer = true;
    assert_eq!(
        next_step(&v, "", &timing(), at(0)),
        Step::Apply {
            api_ref: "payments.api".into()
        }
    );
}

#[test]
fn an_applied_monitor_is_observed_until_reapply_time() {
    let v = applied(monitor(), at(0));
    assert_eq!(
        next_step(&v, "", &timing(), at(30)),
        Step::Observe { id: 7 }
    );
    assert_eq!(
        next_step(&v, "", &timing(), at(600)),
        Step::Apply {
            api_ref: "payments.api".into()
        }
    );
}

#[test]
fn an_applied_contact_waits_until_reapply_time() {
    let v = applied(
        view(
            Kind::AlertContact,
            json!({"name": "On call", "type": "email"}),
        ),
        at(0),
    );
    assert_eq!(
        next_step(&v, "", &timing(), at(100)),
        Step::Idle {
            wait: Duration::from_secs(500)
        }
    );
}

#[test]
fn an_edited_spec_is_applied_again() {
    let mut v = applied(monitor(), at(0));
    v.generation = Some(2);
    assert!(matches!(
        next_step(&v, "", &timing(), at(1)),
        Step::Apply { .. }
    ));
}

#[test]
fn a_refused_spec_is_applied_again_on_the_next_visit() {
    let mut v = applied(monitor(), at(0));
    v.generation = Some(2);
    v.status = status_after(
        &v,
        "",
        &Outcome::Refused {
            message: "HTTP 400".into(),
        },
        at(1),
    );
    assert!(matches!(
        next_step(&v, "", &timing(), at(2)),
        Step::Apply { .. }
    ));
}

#[test]
fn deletion_deletes_by_ref_then_releases() {
    let mut v = applied(monitor(), at(0));
    v.deleting = true;
    assert_eq!(
        next_step(&v, "", &timing(), at(1)),
        Step::Delete {
            api_ref: "payments.api".into(),
            known_id: Some(7)
        }
    );
    v.has_finalizer = false;
    assert_eq!(next_step(&v, "", &timing(), at(1)), Step::Done);
    // A name too long for a ref never reached the API.
    let mut never = monitor();
    never.name = "a".repeat(250);
    never.deleting = true;
    assert_eq!(next_step(&never, "", &timing(), at(1)), Step::Release);
}

#[test]
fn a_name_too_long_for_a_ref_is_refused_without_asking_the_api() {
    let mut v = monitor();
    v.name = "a".repeat(250);
    assert!(
        matches!(next_step(&v, "", &timing(), at(0)), Step::Refuse(p) if p.reason == "InvalidName")
    );
}

#[test]
fn the_body_names_referenced_resources_by_id_and_carries_the_secrets() {
    let mut v = view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "target": "https://example.com",
               "alert_contact_refs": ["team-mail", "oncall", "oncall"], "depends_on_refs": ["core"],
               "basic_auth": {"username": "probe"}}),
    );
    v.secret_fields = vec![SecretField {
        field: "basic_auth.password".into(),
        secret_key_ref: SecretKeyRef {
            name: "probe".into(),
            key: "password".into(),
        },
    }];
    let wanted = referenced(&v);
    assert_eq!(
        wanted.iter().cloned().collect::<Vec<_>>(),
        vec![
            (Kind::Monitor, "core".to_string()),
            (Kind::AlertContact, "oncall".to_string()),
            (Kind::AlertContact, "team-mail".to_string()),
        ]
    );
    let ids = BTreeMap::from([
        ((Kind::AlertContact, "oncall".to_string()), 12),
        ((Kind::AlertContact, "team-mail".to_string()), 5),
        ((Kind::Monitor, "core".to_string()), 40),
    ]);
    let keys = secret_keys(&v);
    assert_eq!(keys.len(), 1);
    let secrets = keys
        .into_iter()
        .map(|k| (k, "s3cret".to_string()))
        .collect();
    let body = apply_body(&v, &ids, &secrets).unwrap();
    assert_eq!(
        body,
        json!({"name": "API", "type": "http", "target": "https://example.com",
               "alert_contact_ids": [5, 12], "depends_on": [40],
               "basic_auth": {"username": "probe", "password": "s3cret"}})
    );
}

#[test]
fn a_reference_not_applied_yet_is_named() {
    let v = view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "alert_contact_refs": ["oncall"]}),
    );
    let problem = apply_body(&v, &BTreeMap::new(), &BTreeMap::new()).unwrap_err();
    assert_eq!(problem.reason, "ReferenceNotReady");
    assert!(
        problem.message.contains("alert_contact_refs") && problem.message.contains("oncall"),
        "{}",
        problem.message
    );
}

#[test]
fn a_spec_never_mixes_names_and_ids() {
    let v = view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "alert_contact_refs": [], "alert_contact_ids": [1]}),
    );
    assert_eq!(
        apply_body(&v, &BTreeMap::new(), &BTreeMap::new())
            .unwrap_err()
            .reason,
        "InvalidSpec"
    );
}

#[test]
fn a_missing_secret_names_the_secret_and_the_field() {
    let mut v = view(
        Kind::AlertContact,
        json!({"name": "Pager", "type": "pagerduty"}),
    );
    v.secret_fields = vec![SecretField {
        field: "secret".into(),
        secret_key_ref: SecretKeyRef {
            name: "pagerduty".into(),
            key: "routing-key".into(),
        },
    }];
    let problem = apply_body(&v, &BTreeMap::new(), &BTreeMap::new()).unwrap_err();
    assert_eq!(problem.reason, "SecretNotFound");
    assert!(
        problem.message.contains("routing-key"),
        "{}",
        problem.message
    );
    assert!(problem.message.contains("pagerduty"), "{}", problem.message);
}

#[test]
fn a_secret_under_a_scalar_is_refused() {
    let mut v = view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "basic_auth": "x"}),
    );
    v.secret_fields = vec![SecretField {
        field: "basic_auth.password".into(),
        secret_key_ref: SecretKeyRef {
            name: "s".into(),
            key: "k".into(),
        },
    }];
    let secrets = secret_keys(&v)
        .into_iter()
        .map(|k| (k, "v".to_string()))
        .collect();
    assert_eq!(
        apply_body(&v, &BTreeMap::new(), &secrets)
            .unwrap_err()
            .reason,
        "InvalidSpec"
    );
}

#[test]
fn contact_refs_must_be_names() {
    let v = view(
        Kind::Monitor,
        json!({"name": "API", "type": "http", "alert_contact_refs": "oncall"}),
    );
    assert_eq!(
        apply_body(&v, &BTreeMap::new(), &BTreeMap::new())
            .unwrap_err()
            .reason,
        "InvalidSpec"
    );
}

#[test]
fn applied_status_holds_the_state_and_a_ready_condition() {
    let v = applied(monitor(), at(0));
    let s = &v.status;
    assert_eq!(s.id, Some(7));
    assert_eq!(s.api_ref.as_deref(), Some("payments.api"));
    assert_eq!(s.state.as_deref(), Some("up"));
    assert_eq!(s.observed_generation, Some(1));
    assert_eq!(s.last_applied_at, Some(at(0)));
    let ready = ready_condition(s).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("True", "Applied")
    );
    assert_eq!(ready.last_transition_time, at(0));
}

#[test]
fn a_refusal_keeps_what_exists_and_says_why() {
    let mut v = applied(monitor(), at(0));
    v.generation = Some(2);
    let s = status_after(
        &v,
        "",
        &Outcome::Refused {
            message: "HTTP 400: invalid request body: interval_secs: too small".into(),
        },
        at(10),
    );
    assert_eq!(s.id, Some(7), "the monitor of the last good spec stays");
    assert_eq!(s.observed_generation, Some(2));
    let ready = ready_condition(&s).unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("False", "Refused")
    );
    assert!(ready.message.contains("interval_secs"));
    assert_eq!(ready.last_transition_time, at(10));
    // The same refusal later keeps the transition time.
    let mut again = v.clone();
    again.status = s.clone();
    let s2 = status_after(
        &again,
        "",
        &Outcome::Refused {
            message: ready.message.clone(),
        },
        at(50),
    );
    assert_eq!(ready_condition(&s2).unwrap().last_transition_time, at(10));
    assert_eq!(s2, s);
}

#[test]
fn an_observation_updates_the_state_only() {
    let v = applied(monitor(), at(0));
    let down = Observed {
        id: 7,
        state: Some("down".into()),
        last_checked_at: Some(at(40)),
        open_incident_id: Some("0b7e...".into()),
    };
    let s = status_after(&v, "", &Outcome::Observed(down), at(45));
    assert_eq!(s.state.as_deref(), Some("down"));
    assert_eq!(s.open_incident_id.as_deref(), Some("0b7e..."));
    assert_eq!(s.last_applied_at, Some(at(0)));
    assert_eq!(s.conditions, v.status.conditions);
}

#[test]
fn requeue_follows_the_outcome() {
    let t = timing();
    assert_eq!(
        requeue_after(Kind::Monitor, &Outcome::Applied(seen(1)), &t),
        t.observe_every
    );
    assert_eq!(
        requeue_after(Kind::AlertContact, &Outcome::Applied(seen(1)), &t),
        t.reapply_every
    );
    assert_eq!(
        requeue_after(
            Kind::Monitor,
            &Outcome::Refused {
                message: String::new()
            },
            &t
        ),
        t.retry_refused
    );
    assert_eq!(
        requeue_after(
            Kind::Monitor,
            &Outcome::Unreachable {
                message: String::new()
            },
            &t
        ),
        t.retry_unreachable
    );
}

#[test]
fn api_errors_become_one_line() {
    let body = r#"{"error":"invalid request body","details":[{"field":"interval_secs","message":"must be at least 30"},{"field":"target","message":"required"}]}"#;
    assert_eq!(
        api_error_message(400, body),
        "HTTP 400: invalid request body: interval_secs: must be at least 30; target: required"
    );
    assert_eq!(
        api_error_message(502, "<html>bad gateway</html>"),
        "HTTP 502: <html>bad gateway</html>"
    );
    assert_eq!(api_error_message(404, ""), "HTTP 404");
    let long = format!(r#"{{"error":"{}"}}"#, "é".repeat(2000));
    let message = api_error_message(400, &long);
    assert!(message.len() <= MAX_MESSAGE_LEN && message.ends_with("..."));
}
