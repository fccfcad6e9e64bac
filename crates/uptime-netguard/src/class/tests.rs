use super::AddressClass::*;
use super::*;

fn class_of(ip: &str) -> Option<AddressClass> {
    classify(ip.parse().unwrap())
}

fn assert_classes(cases: &[(&str, Option<AddressClass>)]) {
    for (ip, expected) in cases {
        assert_eq!(class_of(ip), *expected, "{ip}");
    }
}

#[test]
fn ipv4_ranges_are_classified() {
    assert_classes(&[
        ("127.0.0.1", Some(Loopback)),
        ("127.255.255.254", Some(Loopback)),
        ("10.0.0.1", Some(Private)),
        ("172.16.0.1", Some(Private)),
        ("172.31.255.255", Some(Private)),
        ("192.168.1.1", Some(Private)),
        ("169.254.1.1", Some(LinkLocal)),
        ("100.64.0.1", Some(SharedCgnat)),
        ("100.127.255.255", Some(SharedCgnat)),
        ("0.0.0.0", Some(Unspecified)),
        ("0.1.2.3", Some(Unspecified)),
        ("224.0.0.1", Some(Multicast)),
        ("239.255.255.255", Some(Multicast)),
        ("255.255.255.255", Some(Broadcast)),
        ("192.0.2.10", Some(Documentation)),
        ("198.51.100.10", Some(Documentation)),
        ("203.0.113.10", Some(Documentation)),
        ("198.18.0.1", Some(Reserved)),
        ("198.19.255.255", Some(Reserved)),
        ("192.0.0.8", Some(Reserved)),
        ("240.0.0.1", Some(Reserved)),
        // Neighbours of the ranges above are public.
        ("172.15.255.255", None),
        ("172.32.0.0", None),
        ("100.63.255.255", None),
        ("100.128.0.0", None),
        ("198.17.255.255", None),
        ("198.20.0.0", None),
        ("8.8.8.8", None),
        ("1.1.1.1", None),
        ("93.184.215.14", None),
    ]);
}

#[test]
fn cloud_metadata_addresses_are_their_own_class() {
    assert_classes(&[
        // AWS, GCP, Azure, OpenStack (inside link-local).
        ("169.254.169.254", Some(Metadata)),
        // AWS over IPv6 (inside unique local).
        ("fd00:ec2::254", Some(Metadata)),
        // Alibaba Cloud (inside the shared range).
        ("100.100.100.200", Some(Metadata)),
        // Azure's platform endpoint (WireServer, DNS): a public address that
        // only answers inside Azure, where it hands out VM configuration.
        ("168.63.129.16", Some(Metadata)),
        ("168.63.129.17", None),
    ]);
}

#[test]
fn ipv6_ranges_are_classified() {
    assert_classes(&[
        ("::1", Some(Loopback)),
        ("::", Some(Unspecified)),
        ("fc00::1", Some(Private)),
        ("fdff:ffff::1", Some(Private)),
        ("fe80::1", Some(LinkLocal)),
        ("febf::1", Some(LinkLocal)),
        ("ff02::1", Some(Multicast)),
        ("ff0e::1", Some(Multicast)),
        ("2001:db8::1", Some(Documentation)),
        ("3fff::1", Some(Documentation)),
        ("100::1", Some(Reserved)),
        // Benchmarking, the IPv6 twin of 198.18.0.0/15.
        ("2001:2::1", Some(Reserved)),
        ("2001:2:0:ffff::1", Some(Reserved)),
        // Local-use NAT64 maps to whatever the site chose.
        ("64:ff9b:1::a00:1", Some(Reserved)),
        ("2606:4700:4700::1111", None),
        ("2001:4860:4860::8888", None),
        ("2001:3::1", None),
    ]);
}

#[test]
fn site_local_addresses_are_private() {
    // Deprecated (RFC 3879) but still routed inside some sites.
    assert_classes(&[
        ("fec0::1", Some(Private)),
        ("feff:ffff::1", Some(Private)),
        ("fec0:0:0:ffff::1", Some(Private)),
    ]);
}

#[test]
fn ipv4_mapped_and_translated_addresses_are_judged_by_the_ipv4_address() {
    assert_classes(&[
        ("::ffff:127.0.0.1", Some(Loopback)),
        ("::ffff:169.254.169.254", Some(Metadata)),
        ("::ffff:10.1.2.3", Some(Private)),
        ("::ffff:8.8.8.8", None),
        // IPv4-translated (SIIT, RFC 2765): `::ffff:0:a.b.c.d`.
        ("::ffff:0:127.0.0.1", Some(Loopback)),
        ("::ffff:0:a9fe:a9fe", Some(Metadata)),
        ("::ffff:0:8.8.8.8", None),
    ]);
}

#[test]
fn ipv4_compatible_addresses_are_judged_by_the_ipv4_address() {
    assert_classes(&[
        ("::127.0.0.1", Some(Loopback)),
        ("::7f00:1", Some(Loopback)),
        ("::10.1.2.3", Some(Private)),
        ("::169.254.169.254", Some(Metadata)),
        ("::0.0.0.2", Some(Unspecified)),
        ("::8.8.8.8", None),
    ]);
}

#[test]
fn nat64_addresses_are_judged_by_the_ipv4_address() {
    assert_classes(&[
        ("64:ff9b::7f00:1", Some(Loopback)),
        ("64:ff9b::127.0.0.1", Some(Loopback)),
        ("64:ff9b::192.168.0.1", Some(Private)),
        ("64:ff9b::a9fe:a9fe", Some(Metadata)),
        ("64:ff9b::100.64.0.1", Some(SharedCgnat)),
        ("64:ff9b::8.8.8.8", None),
    ]);
}

#[test]
fn sixtofour_addresses_are_judged_by_the_ipv4_address() {
    // 2002:AABB:CCDD::/48 is the 6to4 network of A.B.C.D.
    assert_classes(&[
        ("2002:7f00:1::", Some(Loopback)),
        ("2002:7f00:1:5::1", Some(Loopback)),
        ("2002:a00:1::1", Some(Private)),
        ("2002:a9fe:a9fe::", Some(Metadata)),
        ("2002:808:808::1", None),
    ]);
}

#[test]
fn teredo_addresses_are_judged_by_the_client_ipv4_address() {
    // 2001:0:<server>:<flags>:<port ^ ffff>:<client ^ ffffffff> (RFC 4380);
    // a Teredo host sends straight to the client address, so judge that.
    assert_classes(&[
        // Client 127.0.0.1.
        ("2001:0:4136:e378:8000:63bf:80ff:fffe", Some(Loopback)),
        // Client 10.0.0.1.
        ("2001:0:4136:e378:8000:63bf:f5ff:fffe", Some(Private)),
        // Client 8.8.8.8, the server 65.54.227.120: public.
        ("2001:0:4136:e378:8000:63bf:f7f7:f7f7", None),
    ]);
}

#[test]
fn names_that_are_internal_by_definition_are_classified() {
    for (name, expected) in [
        ("localhost", Some(Loopback)),
        ("LOCALHOST.", Some(Loopback)),
        ("api.localhost", Some(Loopback)),
        ("metadata.google.internal", Some(Metadata)),
        ("example.com", None),
        ("notlocalhost", None),
        ("localhost.example.com", None),
    ] {
        assert_eq!(classify_name(name), expected, "{name}");
    }
}

#[test]
fn url_hosts_are_classified_as_written() {
    let host_class = |url: &str| {
        let url = url::Url::parse(url).unwrap();
        classify_host(&url.host().unwrap())
    };
    assert_eq!(host_class("http://127.0.0.1:8080/"), Some(Loopback));
    assert_eq!(host_class("http://[64:ff9b::7f00:1]/"), Some(Loopback));
    assert_eq!(host_class("http://[fec0::1]/"), Some(Private));
    assert_eq!(host_class("https://api.localhost/"), Some(Loopback));
    // The URL parser normalises odd IPv4 spellings, so they are caught too.
    assert_eq!(host_class("http://2130706433/"), Some(Loopback));
    assert_eq!(host_class("http://0x7f.1/"), Some(Loopback));
    assert_eq!(host_class("https://example.com/"), None);
    assert_eq!(host_class("https://93.184.216.34/"), None);
}

#[test]
fn every_class_reads_as_a_predicate_and_a_noun() {
    let all = [
        Loopback,
        Private,
        LinkLocal,
        SharedCgnat,
        Unspecified,
        Multicast,
        Broadcast,
        Documentation,
        Reserved,
        Metadata,
    ];
    for class in all {
        let noun = class.noun();
        assert!(
            noun.starts_with("a ") || noun.starts_with("an "),
            "{class:?}"
        );
        assert!(noun.contains("address"), "{class:?}");
        assert!(!class.to_string().is_empty());
    }
    assert_eq!(Private.noun(), "a private address");
    assert_eq!(SharedCgnat.to_string(), "in the shared (CGNAT) range");
}
