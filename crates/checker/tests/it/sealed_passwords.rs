//! Issue 19: a check-due.v5 carries its basic-auth password sealed; the
//! checker opens it with its keyring just before the request. A password
//! that does not open is a failed check saying why, never the secret; a
//! dead-lettered v5 holds only ciphertext.

use crate::common::*;
use std::time::Duration;
use uptime_contracts::{
    streams, BasicAuthV1, CheckDueV5, CheckOutcome, CheckSpecV2, HttpRequestV1, Message,
    MonitorKind,
};
use uptime_secrets::{Keyring, Purpose, Zeroizing};
use uptime_testkit::target::TargetServer;
use uuid::Uuid;

const PASSWORD: &str = "hunter2-secret";

fn with_basic_auth(mut spec: CheckSpecV2) -> CheckSpecV2 {
    spec.options.http = Some(HttpRequestV1 {
        basic_auth: Some(BasicAuthV1 {
            username: "probe".into(),
            password: None,
        }),
        ..Default::default()
    });
    spec
}

/// A version-5 due check of `spec` in the default region, its password
/// sealed by `keyring`.
fn due_v5(spec: CheckSpecV2, keyring: &Keyring) -> CheckDueV5 {
    let sealed = keyring
        .seal(Purpose::HTTP_BASIC_AUTH_PASSWORD, PASSWORD)
        .unwrap();
    let v4 = due_v4(spec, "default", Uuid::new_v4(), 1);
    CheckDueV5 {
        check_id: v4.check_id,
        monitor_id: v4.monitor_id,
        definition_version: v4.definition_version,
        interval_secs: v4.interval_secs,
        trigger: v4.trigger,
        due_at: v4.due_at,
        spec: v4.spec.sealed(Some(sealed)),
        region: v4.region,
        round_id: v4.round_id,
    }
}

async fn publish(h: &Harness, due: &CheckDueV5) {
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

    let due = due_v5(
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
    let unknown = due_v5(
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

    let sealed = due_v5(with_basic_auth(http_spec(&target.url("/"))), &keyring);
    publish(&h, &sealed).await;
    let plain = due_v5(http_spec(&target.url("/")), &keyring);
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
    let due = due_v5(spec, &uptime_testkit::secrets::test_keyring());
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
