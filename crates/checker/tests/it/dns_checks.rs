//! dns checks against a real authoritative DNS server on loopback
//! (`uptime_testkit::dns`): answers of every record type, expected values,
//! NXDOMAIN, failing servers, a server that never answers, and the address
//! rule for the server a check names.

use crate::common::{spec_of, Harness, RunningChecker};
use uptime_contracts::{
    CheckOptions, CheckOutcome, CheckResult, CheckSpec, DnsQuery, DnsRecordType, MonitorKind,
};
use uptime_testkit::dns::{DnsServer, Failure, Record, Zone};

/// A check of `record_type` for `target`, asking `server`.
fn dns_spec(
    target: &str,
    record_type: DnsRecordType,
    expected: &[&str],
    server: &str,
) -> CheckSpec {
    CheckSpec {
        options: CheckOptions {
            dns: Some(DnsQuery {
                record_type,
                expected: expected.iter().map(|e| e.to_string()).collect(),
                server: Some(server.into()),
            }),
            ..Default::default()
        },
        ..spec_of(MonitorKind::Dns, target)
    }
}

fn example_zone() -> Zone {
    Zone::new("example.test")
        .record("www", Record::A("192.0.2.1".parse().unwrap()))
        .record("www", Record::A("192.0.2.2".parse().unwrap()))
        .record("www", Record::Aaaa("2001:db8::1".parse().unwrap()))
        .record("alias", Record::Cname("www".into()))
        .record("away", Record::Cname("elsewhere.other.".into()))
        .record("@", Record::Mx(10, "mail".into()))
        .record("@", Record::Mx(20, "backup".into()))
        .record("mail", Record::A("192.0.2.25".parse().unwrap()))
        .record("@", Record::Txt(vec!["v=spf1 ".into(), "-all".into()]))
        .record("@", Record::Ns("ns1".into()))
        .record("@", Record::Ns("ns2.example.test.".into()))
        // Public (the rest are documentation addresses, which checks refusing
        // private targets refuse in answers too).
        .record("public", Record::A("1.2.3.4".parse().unwrap()))
}

/// Publishes every spec, then returns their results in the same order.
async fn check_all(h: &Harness, specs: Vec<CheckSpec>) -> Vec<CheckResult> {
    let mut ids = Vec::new();
    for spec in specs {
        ids.push(h.publish_due(spec).await.check_id);
    }
    let mut results = Vec::new();
    for id in ids {
        results.push(h.result_of(id).await);
    }
    results
}

#[tokio::test]
async fn every_record_type_is_answered_and_its_expected_values_found() {
    let h = Harness::start().await;
    let dns = DnsServer::start(vec![example_zone()]).await;
    let server = dns.addr().to_string();
    let checker = RunningChecker::start(h.settings("c")).await;

    use DnsRecordType::*;
    // Each expected value is written differently from the served record,
    // as users do.
    let cases = [
        dns_spec("www.example.test", A, &[], &server),
        dns_spec("www.example.test", A, &["192.0.2.2", "192.0.2.1"], &server),
        dns_spec("www.example.test.", Aaaa, &["2001:db8:0:0::1"], &server),
        dns_spec("alias.example.test", Cname, &["WWW.Example.Test"], &server),
        // A through the CNAME: the addresses of its target.
        dns_spec("alias.example.test", A, &["192.0.2.1"], &server),
        dns_spec(
            "example.test",
            Mx,
            &["10 mail.example.test.", "backup.example.test"],
            &server,
        ),
        dns_spec("example.test", Txt, &["v=spf1 -all"], &server),
        dns_spec(
            "Example.Test",
            Ns,
            &["ns1.example.test", "ns2.example.test."],
            &server,
        ),
    ];
    let results = check_all(&h, cases.to_vec()).await;
    for (spec, result) in cases.iter().zip(&results) {
        assert_eq!(result.outcome, CheckOutcome::Pass, "{spec:?}: {result:?}");
        assert_eq!(result.error, None);
        assert!(result.latency_ms.is_some(), "{result:?}");
        assert_eq!(result.http_status, None);
    }
    checker.stop().await;
}

#[tokio::test]
async fn a_missing_expected_value_fails_naming_what_was_asked_and_seen() {
    let h = Harness::start().await;
    let dns = DnsServer::start(vec![example_zone()]).await;
    let server = dns.addr().to_string();
    let checker = RunningChecker::start(h.settings("c")).await;

    use DnsRecordType::*;
    let cases = [
        (
            dns_spec("www.example.test", A, &["192.0.2.1", "192.0.2.9"], &server),
            "expected 192.0.2.9 in the A answer for www.example.test, got 192.0.2.1, 192.0.2.2",
        ),
        // Only the A records count, not the CNAME on the way to them.
        (
            dns_spec("alias.example.test", A, &["192.0.2.9"], &server),
            "expected 192.0.2.9 in the A answer for alias.example.test, got 192.0.2.1, 192.0.2.2",
        ),
        (
            dns_spec("example.test", Mx, &["30 mail.example.test"], &server),
            "expected 30 mail.example.test in the MX answer for example.test, \
             got 10 mail.example.test, 20 backup.example.test",
        ),
        (
            dns_spec("example.test", Txt, &["v=spf1 +all"], &server),
            "expected \"v=spf1 +all\" in the TXT answer for example.test, got \"v=spf1 -all\"",
        ),
        (
            dns_spec("alias.example.test", Cname, &["mail.example.test"], &server),
            "expected mail.example.test in the CNAME answer for alias.example.test, \
             got www.example.test",
        ),
        (
            dns_spec("www.example.test", Aaaa, &["192.0.2.1"], &server),
            "expected value \"192.0.2.1\" is not an IPv6 address (AAAA check)",
        ),
    ];
    let results = check_all(&h, cases.iter().map(|(s, _)| s.clone()).collect()).await;
    for ((spec, error), result) in cases.iter().zip(&results) {
        assert_eq!(result.outcome, CheckOutcome::Fail, "{spec:?}: {result:?}");
        assert_eq!(result.error.as_deref(), Some(*error), "{spec:?}");
    }
    checker.stop().await;
}

#[tokio::test]
async fn unknown_names_and_empty_answers_fail_clearly() {
    let h = Harness::start().await;
    let dns = DnsServer::start(vec![example_zone()]).await;
    let server = dns.addr().to_string();
    let checker = RunningChecker::start(h.settings("c")).await;

    use DnsRecordType::*;
    let cases = [
        (
            dns_spec("nope.example.test", A, &[], &server),
            "nope.example.test does not exist (NXDOMAIN)",
        ),
        (
            dns_spec("mail.example.test", Aaaa, &[], &server),
            "mail.example.test has no AAAA records (NOERROR, empty answer)",
        ),
        // The CNAME's target is in no zone of the server, which refuses it.
        (
            dns_spec("away.example.test", A, &[], &server),
            "the A query for away.example.test (via CNAME, elsewhere.other) failed: \
             the server answered REFUSED",
        ),
    ];
    let results = check_all(&h, cases.iter().map(|(s, _)| s.clone()).collect()).await;
    for ((spec, error), result) in cases.iter().zip(&results) {
        assert_eq!(result.outcome, CheckOutcome::Fail, "{spec:?}: {result:?}");
        assert_eq!(result.error.as_deref(), Some(*error), "{spec:?}");
        assert!(
            result.latency_ms.is_some(),
            "the server answered: {result:?}"
        );
    }
    checker.stop().await;
}

#[tokio::test]
async fn a_failing_server_fails_the_check_and_every_check_asks_again() {
    let h = Harness::start().await;
    let dns = DnsServer::start(vec![
        example_zone(),
        Zone::failing("broken.test", Failure::ServFail),
        Zone::failing("closed.test", Failure::Refused),
    ])
    .await;
    let server = dns.addr().to_string();
    let checker = RunningChecker::start(h.settings("c")).await;

    use DnsRecordType::*;
    let cases = [
        (
            dns_spec("www.broken.test", A, &[], &server),
            "the A query for www.broken.test failed: the server answered SERVFAIL",
        ),
        (
            dns_spec("closed.test", Mx, &[], &server),
            "the MX query for closed.test failed: the server answered REFUSED",
        ),
        (
            dns_spec("www.unserved.test", A, &[], &server),
            "the A query for www.unserved.test failed: the server answered REFUSED",
        ),
    ];
    let results = check_all(&h, cases.iter().map(|(s, _)| s.clone()).collect()).await;
    for ((spec, error), result) in cases.iter().zip(&results) {
        assert_eq!(result.outcome, CheckOutcome::Fail, "{spec:?}: {result:?}");
        assert_eq!(result.error.as_deref(), Some(*error), "{spec:?}");
    }

    // The same check, before, during and after an outage: nothing cached.
    let www = dns_spec("www.example.test", A, &["192.0.2.1"], &server);
    let queries_before = dns.queries();
    let up = check_all(&h, vec![www.clone()]).await;
    assert_eq!(up[0].outcome, CheckOutcome::Pass, "{up:?}");
    dns.fail_all(Some(Failure::ServFail));
    let down = check_all(&h, vec![www.clone()]).await;
    assert_eq!(
        down[0].error.as_deref(),
        Some("the A query for www.example.test failed: the server answered SERVFAIL")
    );
    dns.fail_all(None);
    let up_again = check_all(&h, vec![www]).await;
    assert_eq!(up_again[0].outcome, CheckOutcome::Pass, "{up_again:?}");
    assert_eq!(dns.queries() - queries_before, 3, "one query per check");
    checker.stop().await;
}

#[tokio::test]
async fn a_server_that_never_answers_times_out() {
    let h = Harness::start().await;
    // Bound and never read: queries vanish.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let checker = RunningChecker::start(h.settings("c")).await;

    let spec = CheckSpec {
        timeout_secs: uptime_contracts::TimeoutSecs::of(1),
        ..dns_spec(
            "www.example.test",
            DnsRecordType::A,
            &[],
            &silent.local_addr().unwrap().to_string(),
        )
    };
    let result = check_all(&h, vec![spec]).await.remove(0);
    assert_eq!(result.outcome, CheckOutcome::Fail);
    assert_eq!(
        result.error.as_deref(),
        Some("the A query for www.example.test timed out after 1 s")
    );
    assert_eq!(result.latency_ms, None, "nothing answered");
    checker.stop().await;
}

#[tokio::test]
async fn a_loopback_dns_server_is_refused_unless_private_targets_are_allowed() {
    let h = Harness::start().await;
    let dns = DnsServer::start(vec![example_zone()]).await;
    let mut settings = h.settings("strict");
    settings.safety.allow_private_targets = false;
    let strict = RunningChecker::start(settings).await;

    use DnsRecordType::*;
    let cases = [
        (
            dns_spec("www.example.test", A, &[], &dns.addr().to_string()),
            "dns server refused: target address 127.0.0.1 is loopback".to_string(),
        ),
        // The port defaults to 53; refused before anything is sent.
        (
            dns_spec("www.example.test", A, &[], "::1"),
            "dns server refused: target address ::1 is loopback".to_string(),
        ),
        (
            dns_spec("www.example.test", A, &[], "169.254.169.254"),
            "dns server refused: target address 169.254.169.254 is a cloud metadata address"
                .to_string(),
        ),
        (
            dns_spec("www.example.test", A, &[], "dns.example.test"),
            "dns server \"dns.example.test\" is not an IP address or ip:port".to_string(),
        ),
    ];
    let results = check_all(&h, cases.iter().map(|(s, _)| s.clone()).collect()).await;
    for ((spec, error), result) in cases.iter().zip(&results) {
        assert_eq!(result.outcome, CheckOutcome::Fail, "{spec:?}: {result:?}");
        assert_eq!(result.error.as_deref(), Some(error.as_str()), "{spec:?}");
    }
    assert_eq!(dns.queries(), 0, "a refused server is never asked");
    strict.stop().await;

    // The same server where the deployment allows this one address.
    let mut settings = h.settings("allowlisted");
    settings.safety.allow_private_targets = false;
    settings.checker.private_allowlist = vec![dns.addr().ip()];
    let allowlisted = RunningChecker::start(settings).await;
    let public = dns_spec("public.example.test", A, &[], &dns.addr().to_string());
    let results = check_all(&h, vec![public]).await;
    assert_eq!(results[0].outcome, CheckOutcome::Pass, "{results:?}");
    assert_eq!(dns.queries(), 1);
    allowlisted.stop().await;
}
