//! dns checks must not map the deployment's internal network (issue 19):
//! while private targets are refused, answers holding non-public addresses
//! are refused without being repeated, addresses inside what a failure shows
//! are redacted, and checks naming no server ask the operator's tenant
//! resolvers instead of the checker's own. With private targets allowed
//! everything reads as before.
//!
//! The testkit DNS servers listen on 127.0.0.1: as tenant resolvers they are
//! the operator's and not screened; as a check's `dns_server` they need the
//! allowlist, as any loopback server does.

use crate::common::{spec_of, Harness, RunningChecker};
use checker::settings::CheckerSettings;
use uptime_contracts::{
    CheckOptions, CheckOutcome, CheckSpec, DnsQuery, DnsRecordType, MonitorKind,
};
use uptime_testkit::dns::{DnsServer, Record, Zone};

/// Public addresses (in no non-public range); nothing connects to them.
const PUBLIC: &str = "1.2.3.4";
const OTHER_PUBLIC: &str = "5.6.7.8";

/// A check of `record_type` for `target`, asking `server` or, with `None`,
/// the checker's shared resolver.
fn dns_spec(
    target: &str,
    record_type: DnsRecordType,
    expected: &[&str],
    server: Option<&DnsServer>,
) -> CheckSpec {
    CheckSpec {
        options: CheckOptions {
            dns: Some(DnsQuery {
                record_type,
                expected: expected.iter().map(|e| e.to_string()).collect(),
                server: server.map(|s| s.addr().to_string()),
            }),
            ..Default::default()
        },
        ..spec_of(MonitorKind::Dns, target)
    }
}

/// What a cluster's resolver might answer: internal addresses and names.
fn internal_zone() -> Zone {
    Zone::new("internal.test")
        .record("db", Record::A("10.0.0.5".parse().unwrap()))
        .record("lo", Record::A("127.0.0.1".parse().unwrap()))
        .record("mixed", Record::A(PUBLIC.parse().unwrap()))
        .record("mixed", Record::A("10.0.0.5".parse().unwrap()))
        .record("v6", Record::Aaaa("fd00::5".parse().unwrap()))
        .record("mapped", Record::Aaaa("::ffff:10.0.0.5".parse().unwrap()))
        .record("alias", Record::Cname("db".into()))
        .record(
            "ext",
            Record::Cname("ip-10-0-0-5.hosts.internal.test.".into()),
        )
        .record("@", Record::Mx(10, "10-0-0-5.mx.internal.test.".into()))
        .record("@", Record::Txt(vec!["v=spf1 ip4:10.0.0.5 -all".into()]))
        .record("www", Record::A(PUBLIC.parse().unwrap()))
}

/// Settings refusing private targets whose checks naming no server ask
/// `tenant_resolvers`.
fn strict(h: &Harness, name: &str, tenant_resolvers: &[&DnsServer]) -> CheckerSettings {
    let mut settings = h.settings(name);
    settings.safety.allow_private_targets = false;
    settings.checker.dns.tenant_resolvers = tenant_resolvers.iter().map(|s| s.addr()).collect();
    settings
}

/// Publishes every spec and returns (error, raw result JSON) in order,
/// asserting each failed.
async fn failures(h: &Harness, specs: &[CheckSpec]) -> Vec<(String, String)> {
    let mut ids = Vec::new();
    for spec in specs {
        ids.push(h.publish_due(spec.clone()).await.check_id);
    }
    let mut out = Vec::new();
    for (spec, id) in specs.iter().zip(ids) {
        let (_, json) = h.raw_result_of(id).await;
        assert_eq!(json["outcome"], "fail", "{spec:?}: {json}");
        let error = json["error"].as_str().expect("a failure has an error");
        out.push((error.to_string(), json.to_string()));
    }
    out
}

#[tokio::test]
async fn a_non_public_answer_is_refused_and_never_repeated() {
    let h = Harness::start().await;
    let resolver = DnsServer::start(vec![internal_zone()]).await;
    let checker = RunningChecker::start(strict(&h, "strict", &[&resolver])).await;

    use DnsRecordType::*;
    let cases = [
        (
            dns_spec("db.internal.test", A, &[], None),
            "db.internal.test",
            "a private address",
        ),
        // The expected value is no oracle: refused all the same.
        (
            dns_spec("db.internal.test", A, &["10.0.0.5"], None),
            "db.internal.test",
            "a private address",
        ),
        (
            dns_spec("lo.internal.test", A, &[], None),
            "lo.internal.test",
            "a loopback address",
        ),
        // One non-public address among public ones is enough.
        (
            dns_spec("mixed.internal.test", A, &[PUBLIC], None),
            "mixed.internal.test",
            "a private address",
        ),
        (
            dns_spec("v6.internal.test", Aaaa, &[], None),
            "v6.internal.test",
            "a private address",
        ),
        (
            dns_spec("mapped.internal.test", Aaaa, &[], None),
            "mapped.internal.test",
            "a private address",
        ),
        // Through a CNAME: the addresses of its target.
        (
            dns_spec("alias.internal.test", A, &[], None),
            "alias.internal.test",
            "a private address",
        ),
    ];
    let specs: Vec<CheckSpec> = cases.iter().map(|(s, _, _)| s.clone()).collect();
    for ((spec, name, class), (error, json)) in cases.iter().zip(failures(&h, &specs).await) {
        assert_eq!(
            error,
            format!("answer refused: {name} resolves to {class}, which dns checks may not reveal"),
            "{spec:?}"
        );
        for address in ["10.0.0.5", "127.0.0.1"] {
            assert!(!json.contains(address), "{address} in {json}");
        }
        // (Not searched in the whole JSON: a random check id may hold them.)
        assert!(
            !error.contains("fd00") && !error.contains("ffff"),
            "{error}"
        );
        let parsed: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(
            parsed["latency_ms"].is_u64(),
            "the resolver answered: {json}"
        );
    }
    assert_eq!(
        resolver.queries(),
        cases.len(),
        "the tenant resolver answered every check"
    );
    checker.stop().await;
}

#[tokio::test]
async fn addresses_inside_what_a_failure_shows_are_redacted() {
    let h = Harness::start().await;
    let resolver = DnsServer::start(vec![internal_zone()]).await;
    let checker = RunningChecker::start(strict(&h, "strict", &[&resolver])).await;

    use DnsRecordType::*;
    let specs = [
        dns_spec("internal.test", Txt, &["v=spf1 -all"], None),
        dns_spec("ext.internal.test", Cname, &["www.internal.test"], None),
        dns_spec("internal.test", Mx, &["mail.internal.test"], None),
    ];
    let results = failures(&h, &specs).await;
    let errors: Vec<&str> = results.iter().map(|(e, _)| e.as_str()).collect();
    assert_eq!(
        errors,
        [
            "expected \"v=spf1 -all\" in the TXT answer for internal.test, \
             got \"v=spf1 ip4:[non-public address] -all\"",
            "expected www.internal.test in the CNAME answer for ext.internal.test, \
             got ip-[non-public address].hosts.internal.test",
            "expected mail.internal.test in the MX answer for internal.test, \
             got 10 [non-public address].mx.internal.test",
        ]
    );
    for (_, json) in &results {
        assert!(
            !json.contains("10.0.0.5") && !json.contains("10-0-0-5"),
            "{json}"
        );
    }
    checker.stop().await;
}

#[tokio::test]
async fn checks_naming_no_server_ask_the_tenant_resolvers() {
    let h = Harness::start().await;
    let www = |address: &str| {
        Zone::new("example.test").record("www", Record::A(address.parse().unwrap()))
    };
    let tenant = DnsServer::start(vec![www(PUBLIC)]).await;
    let own = DnsServer::start(vec![www(OTHER_PUBLIC), internal_zone()]).await;
    let mut settings = strict(&h, "tenant", &[&tenant]);
    // Both listen on 127.0.0.1: allowed, so that a check may name `own`.
    settings.checker.private_allowlist = vec![own.addr().ip()];
    let checker = RunningChecker::start(settings).await;

    use DnsRecordType::*;
    let mut ids = Vec::new();
    for spec in [
        dns_spec("www.example.test", A, &[PUBLIC], None),
        dns_spec("www.example.test", A, &[OTHER_PUBLIC], Some(&own)),
    ] {
        ids.push(h.publish_due(spec).await.check_id);
    }
    for id in ids {
        let result = h.result_of(id).await;
        assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");
    }
    // Which one answered, as the tenant reads it; and the check's own server
    // is screened by answer too (its address is allowed, 10.0.0.5 is not).
    let specs = [
        dns_spec("www.example.test", A, &[OTHER_PUBLIC], None),
        dns_spec("db.internal.test", A, &[], Some(&own)),
    ];
    let errors: Vec<String> = failures(&h, &specs)
        .await
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(
        errors,
        [
            "expected 5.6.7.8 in the A answer for www.example.test, got 1.2.3.4",
            "answer refused: db.internal.test resolves to a private address, \
             which dns checks may not reveal",
        ]
    );
    assert_eq!((tenant.queries(), own.queries()), (2, 2));
    checker.stop().await;
}

#[tokio::test]
async fn with_private_targets_allowed_answers_read_as_before() {
    let h = Harness::start().await;
    let resolver = DnsServer::start(vec![internal_zone()]).await;
    // The harness allows private targets.
    let checker = RunningChecker::start(h.settings("open")).await;

    use DnsRecordType::*;
    let pass = dns_spec("db.internal.test", A, &["10.0.0.5"], Some(&resolver));
    let result = h.result_of(h.publish_due(pass).await.check_id).await;
    assert_eq!(result.outcome, CheckOutcome::Pass, "{result:?}");

    let specs = [
        dns_spec("db.internal.test", A, &["10.0.0.6"], Some(&resolver)),
        dns_spec("internal.test", Txt, &["v=spf1 -all"], Some(&resolver)),
    ];
    let errors: Vec<String> = failures(&h, &specs)
        .await
        .into_iter()
        .map(|(e, _)| e)
        .collect();
    assert_eq!(
        errors,
        [
            "expected 10.0.0.6 in the A answer for db.internal.test, got 10.0.0.5",
            "expected \"v=spf1 -all\" in the TXT answer for internal.test, \
             got \"v=spf1 ip4:10.0.0.5 -all\"",
        ]
    );
    checker.stop().await;
}
