//! icmp checks: echo requests to loopback (over an unprivileged ICMP socket
//! where the kernel allows one, else a raw socket: tests run as root), the
//! address rule, and names that do not resolve.

use crate::common::{spec_of, Harness, RunningChecker};
use uptime_contracts::{CheckOutcome, MonitorKind};

#[tokio::test]
async fn loopback_answers_when_private_targets_are_allowed() {
    let h = Harness::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let by_ip = h.publish_due(spec_of(MonitorKind::Icmp, "127.0.0.1")).await;
    let by_name = h.publish_due(spec_of(MonitorKind::Icmp, "localhost")).await;
    for due in [by_ip, by_name] {
        let result = h.result_of(due.check_id).await;
        assert_eq!(
            result.outcome,
            CheckOutcome::Pass,
            "{}: {result:?}",
            due.spec.target
        );
        assert_eq!(result.error, None);
        assert!(result.latency_ms.is_some(), "{result:?}");
    }
    checker.stop().await;
}

#[tokio::test]
async fn loopback_is_refused_unless_private_targets_are_allowed() {
    let h = Harness::start().await;
    let mut settings = h.settings("c");
    settings.safety.allow_private_targets = false;
    let checker = RunningChecker::start(settings).await;

    let literal = h.publish_due(spec_of(MonitorKind::Icmp, "127.0.0.1")).await;
    let named = h.publish_due(spec_of(MonitorKind::Icmp, "localhost")).await;

    let literal = h.result_of(literal.check_id).await;
    assert_eq!(literal.outcome, CheckOutcome::Fail);
    assert_eq!(
        literal.error.as_deref(),
        Some("target address 127.0.0.1 is loopback")
    );
    assert_eq!(literal.latency_ms, None);
    let named = h.result_of(named.check_id).await;
    assert_eq!(named.outcome, CheckOutcome::Fail);
    assert_eq!(
        named.error.as_deref(),
        Some("localhost resolves to a loopback address, which checks may not reach")
    );
    checker.stop().await;
}

#[tokio::test]
async fn a_name_that_does_not_resolve_fails_clearly() {
    let h = Harness::start().await;
    let checker = RunningChecker::start(h.settings("c")).await;

    let unknown = h
        .publish_due(spec_of(MonitorKind::Icmp, "no-such-host.invalid"))
        .await;
    let with_port = h
        .publish_due(spec_of(MonitorKind::Icmp, "example.com:80"))
        .await;

    let unknown = h.result_of(unknown.check_id).await;
    assert_eq!(unknown.outcome, CheckOutcome::Fail);
    let error = unknown.error.expect("an error");
    assert!(
        error.starts_with("DNS lookup of no-such-host.invalid failed"),
        "{error}"
    );
    let with_port = h.result_of(with_port.check_id).await;
    assert_eq!(
        with_port.error.as_deref(),
        Some("target \"example.com:80\" must be a host name or an IP address, without a port")
    );
    checker.stop().await;
}
