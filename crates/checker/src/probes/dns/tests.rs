//! The shared resolver (checks without a server), pointed at a test server
//! in place of the system's: the checker's integration tests cannot replace
//! `/etc/resolv.conf`.

use super::*;
use hickory_resolver::config::NameServerConfigGroup;
use uptime_contracts::{CheckOutcome, DnsQueryV1, MonitorKind};
use uptime_testkit::dns::{DnsServer, Failure, Record, Zone};

fn probe_asking(server: &DnsServer) -> DnsProbe {
    let config = ResolverConfig::from_parts(
        None,
        vec![],
        NameServerConfigGroup::from_ips_clear(&[server.addr().ip()], server.addr().port(), true),
    );
    DnsProbe::with_system_config(
        AddressPolicy::new(false, vec![]),
        config,
        ResolverOpts::default(),
    )
}

fn a_check(target: &str) -> CheckSpecV2 {
    CheckSpecV2 {
        kind: MonitorKind::Dns,
        target: target.into(),
        timeout_secs: 10,
        expected_status: 200,
        keyword: None,
        keyword_type: None,
        options: uptime_contracts::CheckOptionsV1 {
            dns: Some(DnsQueryV1 {
                expected: vec!["192.0.2.1".into()],
                ..Default::default()
            }),
            ..Default::default()
        },
    }
}

#[tokio::test]
async fn the_shared_resolver_asks_every_time() {
    let server = DnsServer::start(vec![
        Zone::new("example.test").record("www", Record::A("192.0.2.1".parse().unwrap()))
    ])
    .await;
    // Private targets are refused, yet this loopback resolver is asked: the
    // system resolver is the deployment's own, not a user's target.
    let probe = probe_asking(&server);
    let spec = a_check("www.example.test");

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
