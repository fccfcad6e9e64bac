//! Issue 19: a check-due.v5 carries its basic-auth password sealed; the
//! checker opens it with its keyring just before the request. A password
//! that does not open is a failed check saying why, never the secret; a
//! dead-lettered v5 holds only ciphertext.

use crate::common::*;
use std::time::Duration;
use uptime_contracts::{
    streams, BasicAuth, CheckOutcome, CheckSpec, DueCheck, HttpRequest, Message, MonitorKind,
};
use uptime_secrets::{Keyring, Purpose, Zeroizing};
use uptime_testkit::target::TargetServer;

const PASSWORD: &str = "hunter2-secret";

fn with_basic_auth(mut spec: CheckSpec) -> CheckSpec {
    spec.options.http = Some(HttpRequest {
        basic_auth: Some(BasicAuth {
            username: "probe".into(),
            password_sealed: None,
        }),
        ..Default::default()
    });
    spec
}

/// A due check of `spec` in the default region, its password sealed by
/// `keyring`.
fn due_sealed(spec: CheckSpec, keyring: &Keyring) -> DueCheck {
    let sealed = keyring
        .seal(Purpose::HTTP_BASIC_AUTH_PASSWORD, PASSWORD)
        .unwrap();
    let mut due = due_now(spec);
    due.spec = due.spec.sealed(Some(sealed));
    due
}

async fn publish(h: &Harness, due: &DueCheck) {
    let mut headers = async_nats::HeaderMap::new();
    headers.insert(uptime_contracts::MSG_ID_HEADER, due.check_id.to_string());
    uptime_contracts::bus::publish_on(&h.js, due.subject(), headers, due)
        .await
        .expect("publish")
        .await
        .expect("stored");
}

#[tokio::test]
async fn a_sealed_password_opens_just_for_the_request() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    target.require_basic_auth("probe", PASSWORD);
    target.record_requests();
    let checker = RunningChecker::start(h.settings("c1")).await;

    let due = due_sealed(
        with_basic_auth(http_spec(&target.url("/private"))),
        &uptime_testkit::secrets::test_keyring(),
    );
    let wire = String::from_utf8(due.to_bytes().to_vec()).unwrap();
    assert!(!wire.contains(PASSWORD), "{wire}");
    publish(&h, &due).await;
    let (_, result) = h.raw_result_of(due.check_id).await;
    assert_eq!(result["outcome"], "pass", "{result}");
    assert_eq!(result["http_status"], 200);
    assert_eq!(target.requests().len(), 1);

    // Sealed with a key this checker does not have: down, saying which key.
    let elsewhere = Keyring::new("k9", [("k9", Zeroizing::new([9u8; 32]))]).unwrap();
    let unknown = due_sealed(
        with_basic_auth(http_spec(&target.url("/private"))),
        &elsewhere,
    );
    publish(&h, &unknown).await;
    let (_, result) = h.raw_result_of(unknown.check_id).await;
    assert_eq!(result["outcome"], "fail", "{result}");
    let error = result["error"].as_str().unwrap();
    assert_eq!(
        error,
        "basic auth: the password cannot be opened: sealed with key \"k9\", \
         which is not configured here (secrets.keys)"
    );
    assert_eq!(
        target.requests().len(),
        1,
        "no request without the password"
    );
    assert!(!result.to_string().contains(PASSWORD));
    checker.stop().await;
}

#[tokio::test]
async fn without_a_key_only_checks_with_a_password_fail() {
    let h = Harness::start().await;
    let target = TargetServer::start().await;
    let mut settings = h.settings("c1");
    settings.secrets = Default::default();
    let checker = RunningChecker::start(settings).await;
    let keyring = uptime_testkit::secrets::test_keyring();

    let sealed = due_sealed(with_basic_auth(http_spec(&target.url("/"))), &keyring);
    publish(&h, &sealed).await;
    let plain = due_sealed(http_spec(&target.url("/")), &keyring);
    publish(&h, &plain).await;
    assert_eq!(
        h.result_of(plain.check_id).await.outcome,
        CheckOutcome::Pass
    );
    let failed = h.result_of(sealed.check_id).await;
    assert_eq!(failed.outcome, CheckOutcome::Fail);
    assert!(
        failed.error.as_deref().unwrap().contains("no secrets key"),
        "{failed:?}"
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_dead_lettered_version_five_check_holds_only_ciphertext() {
    let h = Harness::start().await;
    let checker = RunningChecker::start(h.settings("c1")).await;
    // A heartbeat has no check to run: dead-lettered as it came.
    let spec = with_basic_auth(spec_of(MonitorKind::Heartbeat, "nightly backup"));
    let due = due_sealed(spec, &uptime_testkit::secrets::test_keyring());
    publish(&h, &due).await;
    let dead = h.js.get_stream(streams::DEAD_STREAM).await.unwrap();
    let subject = streams::dead::subject_for(&due.subject());
    let deadline = tokio::time::Instant::now() + RESULT_DEADLINE;
    let message = loop {
        if let Ok(message) = dead.get_last_raw_message_by_subject(&subject).await {
            break message;
        }
        assert!(tokio::time::Instant::now() < deadline, "not dead-lettered");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let payload = String::from_utf8(message.payload.to_vec()).unwrap();
    assert!(payload.contains("password_sealed"), "{payload}");
    assert!(!payload.contains(PASSWORD), "{payload}");
    checker.stop().await;
}
