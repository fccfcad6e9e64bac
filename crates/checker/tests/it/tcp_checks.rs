//! tcp checks against real loopback listeners: a connection is up, a closed
//! port is down, and the address rule applies to literal addresses and to
//! names after resolution.

use crate::common::{spec_of, Harness, RunningChecker};
use futures::FutureExt;
use tokio::net::TcpListener;
use uptime_contracts::{CheckOutcome, MonitorKind};

async fn listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

/// Whether a connection reached `listener` (one made before the result was
/// published waits in its backlog, so polling once is enough).
fn was_contacted(listener: &TcpListener) -> bool {
    listener.accept().now_or_never().is_some()
}

#[tokio::test]
async fn an_open_port_passes_with_its_connect_time() {
    let h = Harness::start().await;
    let (listener, port) = listener().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let by_ip = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("127.0.0.1:{port}")))
        .await;
    let by_name = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("localhost:{port}")))
        .await;
    for due in [by_ip, by_name] {
        let result = h.result_of(due.check_id).await;
        assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
        assert_eq!(result.error, None);
        assert!(result.latency_ms.is_some(), "{result:?}");
        assert_eq!(result.http_status, None);
        assert_eq!(result.ssl_expires_at, None);
    }
    assert!(was_contacted(&listener));
    checker.stop().await;
}

#[tokio::test]
async fn a_closed_port_fails_as_refused() {
    let h = Harness::start().await;
    // A port that was just free: nothing listens there.
    let port = listener().await.1;
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("127.0.0.1:{port}")))
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(result.error.as_deref(), Some("connection refused"));
    assert_eq!(result.latency_ms, None);
    checker.stop().await;
}

#[tokio::test]
async fn loopback_is_refused_unless_private_targets_are_allowed() {
    let h = Harness::start().await;
    let (listener, port) = listener().await;
    let mut settings = h.settings("c");
    settings.safety.allow_private_targets = false;
    let checker = RunningChecker::start(settings).await;

    let literal = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("127.0.0.1:{port}")))
        .await;
    let named = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("localhost:{port}")))
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
    assert!(!was_contacted(&listener), "the target was never contacted");
    checker.stop().await;
}

#[tokio::test]
async fn an_allowlisted_private_address_may_be_checked() {
    let h = Harness::start().await;
    let (_listener, port) = listener().await;
    let mut settings = h.settings("c");
    settings.safety.allow_private_targets = false;
    settings.checker.private_allowlist = vec!["127.0.0.1".parse().unwrap()];
    let checker = RunningChecker::start(settings).await;

    let allowed = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("127.0.0.1:{port}")))
        .await;
    // 127.0.0.2 is loopback too, but not on the list.
    let other = h
        .publish_due(spec_of(MonitorKind::Tcp, &format!("127.0.0.2:{port}")))
        .await;

    let allowed = h.result_of(allowed.check_id).await;
    assert_eq!(allowed.outcome, CheckOutcome::Pass, "{allowed:?}");
    let other = h.result_of(other.check_id).await;
    assert_eq!(
        other.error.as_deref(),
        Some("target address 127.0.0.2 is loopback")
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_target_without_a_port_fails_clearly() {
    let h = Harness::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let due = h
        .publish_due(spec_of(MonitorKind::Tcp, "example.com"))
        .await;
    let result = h.result_of(due.check_id).await;

    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error.as_deref(),
        Some("target \"example.com\" has no port (expected host:port)")
    );
    checker.stop().await;
}
