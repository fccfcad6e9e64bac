//! tls checks against real TLS servers on loopback, with certificates made
//! for each test: valid, expired, for another name, near expiry, pinned; and
//! the address rule.

use crate::common::{spec_of, Harness, RunningChecker};
use checker::settings::CheckerSettings;
use chrono::{DateTime, SecondsFormat, Utc};
use sha2::{Digest, Sha256};
use tempfile::NamedTempFile;
use uptime_contracts::{CheckOutcome, CheckResult, CheckSpec, MonitorKind, TlsOptions};
use uptime_testkit::tls_target::{LeafOptions, TlsTarget};

/// Settings trusting `target`'s CA; the file must outlive the checker's start.
fn trusting(h: &Harness, target: &TlsTarget) -> (CheckerSettings, NamedTempFile) {
    let ca = NamedTempFile::new().unwrap();
    std::fs::write(ca.path(), target.ca_pem()).unwrap();
    let mut settings = h.settings("c");
    settings.checker.extra_root_ca_pem = Some(ca.path().to_path_buf());
    (settings, ca)
}

fn tls_spec(target: &str) -> CheckSpec {
    spec_of(MonitorKind::Tls, target)
}

fn pinned_spec(target: &str, fingerprint: &str) -> CheckSpec {
    let mut spec = tls_spec(target);
    spec.options.tls = Some(TlsOptions {
        fingerprint_sha256: Some(fingerprint.into()),
    });
    spec
}

/// Runs `spec` on a checker trusting `target`'s CA.
async fn check_trusting(target: &TlsTarget, spec: CheckSpec) -> CheckResult {
    let h = Harness::start().await;
    let (settings, _ca) = trusting(&h, target);
    let checker = RunningChecker::start(settings).await;
    let result = h.result_of(h.publish_due(spec).await.check_id).await;
    checker.stop().await;
    result
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

#[tokio::test]
async fn a_valid_certificate_passes_and_reports_its_expiry() {
    let h = Harness::start().await;
    let target = TlsTarget::start_valid().await;
    let (settings, _ca) = trusting(&h, &target);
    let checker = RunningChecker::start(settings).await;

    let port = target.addr().port();
    let forms = [
        target.host_port(),
        target.host_port_with("localhost"),
        format!("https://localhost:{port}/ignored/path"),
    ];
    let mut dues = Vec::new();
    for form in &forms {
        dues.push(h.publish_due(tls_spec(form)).await);
    }
    for due in dues {
        let result = h.result_of(due.check_id).await;
        let target_text = &due.spec.target;
        assert_eq!(
            result.outcome,
            CheckOutcome::Pass,
            "{target_text}: {result:?}"
        );
        assert_eq!(result.error, None);
        assert_eq!(
            result.ssl_expires_at,
            Some(target.not_after()),
            "{target_text}"
        );
        assert!(result.latency_ms.is_some());
        assert_eq!(result.http_status, None);
    }
    assert_eq!(target.handshakes(), 3);
    checker.stop().await;
}

#[tokio::test]
async fn an_expired_certificate_fails_with_its_expiry() {
    let not_after = Utc::now() - chrono::Duration::days(1);
    let target = TlsTarget::start(LeafOptions {
        not_before: Utc::now() - chrono::Duration::days(30),
        ..LeafOptions::expiring_at(not_after)
    })
    .await;

    let result = check_trusting(&target, tls_spec(&target.host_port())).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error,
        Some(format!(
            "TLS handshake failed: certificate expired at {}",
            rfc3339(target.not_after())
        ))
    );
    assert_eq!(target.handshakes(), 0);
}

#[tokio::test]
async fn a_certificate_for_another_name_fails() {
    let target = TlsTarget::start(LeafOptions {
        dns_names: vec!["other.example".into()],
        ip_addresses: vec![],
        ..LeafOptions::valid()
    })
    .await;

    let result = check_trusting(&target, tls_spec(&target.host_port_with("localhost"))).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    let error = result.error.expect("an error");
    assert!(
        error.starts_with(
            "TLS handshake failed: invalid peer certificate: certificate not valid for name \"localhost\""
        ),
        "{error}"
    );
    assert!(error.contains("other.example"), "{error}");
}

#[tokio::test]
async fn an_untrusted_certificate_fails() {
    let h = Harness::start().await;
    let target = TlsTarget::start_valid().await;
    // No extra CA: the target's own CA is unknown.
    let checker = RunningChecker::start(h.settings("c")).await;

    let result = h
        .result_of(h.publish_due(tls_spec(&target.host_port())).await.check_id)
        .await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error.as_deref(),
        Some("TLS handshake failed: invalid peer certificate: UnknownIssuer")
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_certificate_near_expiry_passes_with_its_expiry() {
    // The recorder raises ssl.expiring from ssl_expires_at; the check passes.
    let target = TlsTarget::start(LeafOptions::expiring_at(
        Utc::now() + chrono::Duration::days(3),
    ))
    .await;

    let result = check_trusting(&target, tls_spec(&target.host_port())).await;

    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    assert_eq!(result.ssl_expires_at, Some(target.not_after()));
}

#[tokio::test]
async fn a_pinned_fingerprint_admits_only_its_certificate() {
    let h = Harness::start().await;
    let target = TlsTarget::start_valid().await;
    let (settings, _ca) = trusting(&h, &target);
    let checker = RunningChecker::start(settings).await;
    let actual = hex::encode(Sha256::digest(target.leaf_der()));
    let other = "ab".repeat(32);

    let matching = h
        .publish_due(pinned_spec(&target.host_port(), &actual))
        .await;
    let mismatching = h
        .publish_due(pinned_spec(&target.host_port(), &other))
        .await;
    let malformed = h
        .publish_due(pinned_spec(&target.host_port(), "not-a-fingerprint"))
        .await;

    let matching = h.result_of(matching.check_id).await;
    assert_eq!(matching.outcome, CheckOutcome::Pass, "{matching:?}");
    let mismatching = h.result_of(mismatching.check_id).await;
    assert_eq!(mismatching.outcome, CheckOutcome::Fail);
    assert_eq!(
        mismatching.error,
        Some(format!(
            "certificate fingerprint {actual} does not match the pinned fingerprint {other}"
        ))
    );
    let malformed = h.result_of(malformed.check_id).await;
    assert_eq!(malformed.outcome, CheckOutcome::Fail);
    assert_eq!(
        malformed.error.as_deref(),
        Some(
            "pinned certificate fingerprint \"not-a-fingerprint\" is not a SHA-256 (64 hex digits)"
        )
    );
    checker.stop().await;
}

#[tokio::test]
async fn private_targets_are_refused_unless_allowed() {
    let h = Harness::start().await;
    let target = TlsTarget::start_valid().await;
    let (mut settings, _ca) = trusting(&h, &target);
    settings.safety.allow_private_targets = false;
    let checker = RunningChecker::start(settings).await;

    let literal = h.publish_due(tls_spec(&target.host_port())).await;
    let named = h
        .publish_due(tls_spec(&format!(
            "https://localhost:{}/",
            target.addr().port()
        )))
        .await;

    let literal = h.result_of(literal.check_id).await;
    assert_eq!(literal.outcome, CheckOutcome::Fail);
    assert_eq!(
        literal.error.as_deref(),
        Some("target address 127.0.0.1 is loopback")
    );
    let named = h.result_of(named.check_id).await;
    assert_eq!(named.outcome, CheckOutcome::Fail);
    assert_eq!(
        named.error.as_deref(),
        Some("localhost resolves to a loopback address, which checks may not reach")
    );
    assert_eq!(target.connections(), 0, "the target was never contacted");
    checker.stop().await;
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_times_out() {
    let h = Harness::start().await;
    // Accepts connections (the kernel does) but never speaks TLS.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(CheckSpec {
            timeout_secs: uptime_contracts::TimeoutSecs::of(1),
            ..tls_spec(&silent.local_addr().unwrap().to_string())
        })
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.error.as_deref(), Some("timed out after 1 s"));
    checker.stop().await;
}
