//! The shared resolver (checks without a server), pointed at a test server
//! in place of the system's: the checker's integration tests cannot replace
//! `/etc/resolv.conf`. Also what [`answer`] and [`screen`] do together
//! (screen sits below answer and knows no `Value`).

use super::*;
use hickory_resolver::config::NameServerConfigGroup;
use uptime_contracts::{CheckOutcome, DnsQuery, MonitorKind};
use uptime_testkit::dns::{DnsServer, Failure, Record, Zone};

/// Public addresses (in no non-public range), answered and never reached.
const PUBLIC: &str = "1.2.3.4";
const OTHER_PUBLIC: &str = "5.6.7.8";

/// A probe refusing private targets whose system resolver is `system`, and
/// with `tenant_resolvers`.
fn probe_asking(system: &DnsServer, tenant_resolvers: &[SocketAddr]) -> DnsProbe {
    let config = ResolverConfig::from_parts(
        None,
        vec![],
        NameServerConfigGroup::from_ips_clear(&[system.addr().ip()], system.addr().port(), true),
    );
    DnsProbe::with_system_config(
        AddressPolicy::new(false, vec![]),
        config,
        ResolverOpts::default(),
        tenant_resolvers,
    )
}

fn check_of(target: &str, expected: &[&str]) -> CheckSpec {
    CheckSpec {
        kind: MonitorKind::Dns,
        target: target.into(),
        timeout_secs: uptime_contracts::TimeoutSecs::of(10),
        expected_status: uptime_contracts::ExpectedStatus::of(200),
        keyword: None,
        keyword_type: None,
        options: uptime_contracts::CheckOptions {
            dns: Some(DnsQuery {
                expected: expected.iter().map(|e| e.to_string()).collect(),
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

fn a(ip: &str) -> Record {
    Record::A(ip.parse().unwrap())
}

#[tokio::test]
async fn the_shared_resolver_asks_every_time() {
    let server = DnsServer::start(vec![Zone::new("example.test").record("www", a(PUBLIC))]).await;
    // Private targets are refused, yet this loopback resolver is asked: the
    // system resolver is the deployment's own, not a user's target.
    let probe = probe_asking(&server, &[]);
    let spec = check_of("www.example.test", &[PUBLIC]);

    let first = probe.check(&spec).await;
    assert_eq!(first.outcome, CheckOutcome::Pass, "{first:?}");
    let second = probe.check(&spec).await;
    assert_eq!(second.outcome, CheckOutcome::Pass, "{second:?}");
    assert_eq!(server.queries(), 2, "each check asks the server");

    // An answer cached from the checks before would hide the failure.
    server.fail_all(Some(Failure::ServFail));
    let failed = probe.check(&spec).await;
    assert_eq!(failed.outcome, CheckOutcome::Fail);
    assert_eq!(
        failed.error.as_deref(),
        Some("the A query for www.example.test failed: the server answered SERVFAIL")
    );
}

#[tokio::test]
async fn the_system_resolver_s_answers_give_a_verdict_and_nothing_more_when_strict() {
    let system = DnsServer::start(vec![Zone::new("cluster.test")
        .record("db", a("10.0.0.5"))
        .record("www", a(PUBLIC))
        .record("away", Record::Cname("elsewhere.other.".into()))
        .record("ext", Record::Cname("ip-10-0-0-7.db.example.".into()))])
    .await;
    let probe = probe_asking(&system, &[]);

    for (spec, error) in [
        // Refused whatever was expected: no oracle either.
        (
            check_of("db.cluster.test", &[]),
            "answer refused: db.cluster.test resolves to a private address, \
             which dns checks may not reveal",
        ),
        (
            check_of("db.cluster.test", &["10.0.0.5"]),
            "answer refused: db.cluster.test resolves to a private address, \
             which dns checks may not reveal",
        ),
        (
            check_of("www.cluster.test", &[OTHER_PUBLIC]),
            "expected 5.6.7.8 in the A answer for www.cluster.test, \
             got 1 record (not listed: answered by the deployment's own resolver)",
        ),
        (
            check_of("away.cluster.test", &[]),
            "the A query for away.cluster.test (via CNAME) failed: the server answered REFUSED",
        ),
    ] {
        let report = probe.check(&spec).await;
        assert_eq!(report.outcome, CheckOutcome::Fail, "{spec:?}");
        assert_eq!(report.error.as_deref(), Some(error), "{spec:?}");
        assert!(report.latency_ms.is_some(), "answered: {report:?}");
    }

    // A name's value is compared all the same.
    let cname = CheckSpec {
        options: uptime_contracts::CheckOptions {
            dns: Some(DnsQuery {
                record_type: uptime_contracts::DnsRecordType::Cname,
                expected: vec!["ip-10-0-0-7.db.example".into()],
                server: None,
            }),
            ..Default::default()
        },
        ..check_of("ext.cluster.test", &[])
    };
    let report = probe.check(&cname).await;
    assert_eq!(report.outcome, CheckOutcome::Pass, "{report:?}");
}

#[tokio::test]
async fn tenant_resolvers_are_asked_in_place_of_the_system_s() {
    let zone = |address| {
        Zone::new("example.test")
            .record("www", a(address))
            .record("away", Record::Cname("ip-10-0-0-7.other.".into()))
    };
    let system = DnsServer::start(vec![zone(PUBLIC)]).await;
    let tenant = DnsServer::start(vec![zone(OTHER_PUBLIC)]).await;
    // A loopback tenant resolver: the operator's, so not screened.
    let probe = probe_asking(&system, &[tenant.addr()]);

    let report = probe
        .check(&check_of("www.example.test", &[OTHER_PUBLIC]))
        .await;
    assert_eq!(report.outcome, CheckOutcome::Pass, "{report:?}");
    // What a resolver knowing nothing internal answered is shown, minus
    // non-public addresses.
    for (spec, error) in [
        (
            check_of("www.example.test", &[PUBLIC]),
            "expected 1.2.3.4 in the A answer for www.example.test, got 5.6.7.8",
        ),
        (
            check_of("away.example.test", &[]),
            "the A query for away.example.test (via CNAME, ip-[non-public address].other) \
             failed: the server answered REFUSED",
        ),
    ] {
        let report = probe.check(&spec).await;
        assert_eq!(report.error.as_deref(), Some(error), "{spec:?}");
    }
    assert_eq!(system.queries(), 0, "the system resolver is never asked");
    // Four: the CNAME's target is a query of its own.
    assert_eq!(tenant.queries(), 4);
}

#[test]
fn servers_are_ip_or_ip_and_port() {
    assert_eq!(
        parse_server("192.0.2.53"),
        Ok("192.0.2.53:53".parse().unwrap())
    );
    assert_eq!(
        parse_server(" 192.0.2.53:5353 "),
        Ok("192.0.2.53:5353".parse().unwrap())
    );
    assert_eq!(
        parse_server("2001:db8::53"),
        Ok("[2001:db8::53]:53".parse().unwrap())
    );
    assert_eq!(
        parse_server("[2001:db8::53]:5353"),
        Ok("[2001:db8::53]:5353".parse().unwrap())
    );
    assert_eq!(
        parse_server("dns.example.com"),
        Err("dns server \"dns.example.com\" is not an IP address or ip:port".into())
    );
}

#[test]
fn names_in_an_answer_are_judged_by_their_addresses_not_their_text() {
    let policy = AddressPolicy::new(false, vec![]);
    let screen = Screen::new(&policy, false);
    // Names are judged by the addresses they resolve to, not here.
    let seen = [Value::Name("10.0.0.5.nip.io".into())];
    assert_eq!(
        screen.refused_answer("n.test", seen.iter().filter_map(Value::address)),
        None
    );
}

#[test]
fn while_private_targets_are_refused_listed_values_lose_non_public_addresses() {
    let strict = AddressPolicy::new(false, vec![]);
    let expected = answer::parse_expected(DnsRecordType::Txt, &["v=spf1 -all".into()]).unwrap();
    let seen = [Value::Txt("v=spf1 ip4:10.0.0.5 ip4:1.1.1.1 -all".into())];
    // A tenant resolver or the check's own server answered: listed.
    assert_eq!(
        answer::compare(
            DnsRecordType::Txt,
            "example.com",
            &expected,
            &seen,
            &Screen::new(&strict, false)
        ),
        Err(
            "expected \"v=spf1 -all\" in the TXT answer for example.com, \
             got \"v=spf1 ip4:[non-public address] ip4:1.1.1.1 -all\""
                .into()
        )
    );
    // The deployment's own resolver answered: counted, not listed.
    let seen = [
        Value::Name("db.internal.example".into()),
        Value::Name("ip-10-0-0-5.internal.example".into()),
    ];
    let expected =
        answer::parse_expected(DnsRecordType::Cname, &["www.example.com".into()]).unwrap();
    assert_eq!(
        answer::compare(
            DnsRecordType::Cname,
            "alias.example.com",
            &expected,
            &seen,
            &Screen::new(&strict, true)
        ),
        Err(
            "expected www.example.com in the CNAME answer for alias.example.com, \
             got 2 records (not listed: answered by the deployment's own resolver)"
                .into()
        )
    );
}

#[test]
fn an_address_cut_by_the_bound_is_still_redacted() {
    let strict = AddressPolicy::new(false, vec![]);
    let screen = Screen::new(&strict, false);
    // The address straddles the 100th character.
    let text = format!(
        "{}10.123.123.123{}",
        "x".repeat(answer::MAX_VALUE_CHARS - 5),
        "y".repeat(5000)
    );
    let shown = answer::redacted(&text, &screen);
    assert!(!shown.contains("10.1"), "{shown}");
    assert!(shown.ends_with('…'), "{shown}");
    // A cut text whose redaction shortened it below the bound is still
    // marked as cut.
    let long = "fd00:1111:2222:3333:4444:5555:6666:7777 ";
    let text = format!("{}{}", long.repeat(3), "z".repeat(100));
    let shown = answer::redacted(&text, &screen);
    assert!(shown.ends_with('…'), "{shown}");
    assert!(!shown.contains("fd00"), "{shown}");
}
