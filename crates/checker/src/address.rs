//! Which addresses a check may reach. Monitoring is a request-forgery
//! machine by design (users name URLs, we fetch them), so unless the
//! deployment allows private targets, a check never connects to loopback,
//! private, link-local, shared (CGNAT), metadata or otherwise non-public
//! addresses. The rule is applied to every address a name resolves to
//! ([`crate::resolver`]), to literal IP hosts before the request, and to every
//! redirect ([`crate::http_check`]).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::Arc;
use url::{Host, Url};

/// Why an address is not public.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressClass {
    Loopback,
    /// RFC 1918 IPv4, IPv6 unique local (fc00::/7) and site-local (fec0::/10).
    Private,
    LinkLocal,
    /// 100.64.0.0/10, carrier-grade NAT.
    SharedCgnat,
    Unspecified,
    Multicast,
    Broadcast,
    Documentation,
    /// Benchmarking, IETF protocol assignments, future use, discard-only.
    Reserved,
    /// A cloud provider's instance metadata service.
    Metadata,
}

impl fmt::Display for AddressClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AddressClass::Loopback => "loopback",
            AddressClass::Private => "private",
            AddressClass::LinkLocal => "link-local",
            AddressClass::SharedCgnat => "in the shared (CGNAT) range",
            AddressClass::Unspecified => "unspecified",
            AddressClass::Multicast => "multicast",
            AddressClass::Broadcast => "broadcast",
            AddressClass::Documentation => "reserved for documentation",
            AddressClass::Reserved => "reserved",
            AddressClass::Metadata => "a cloud metadata address",
        })
    }
}

/// The class of a non-public address; `None` for a public one.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = u32::MAX.checked_shl(32 - prefix).unwrap_or(0);
    u32::from(ip) & mask == u32::from(Ipv4Addr::from(net)) & mask
}

fn in_v6(ip: Ipv6Addr, net: [u16; 8], prefix: u32) -> bool {
    let mask = u128::MAX.checked_shl(128 - prefix).unwrap_or(0);
    u128::from(ip) & mask == u128::from(Ipv6Addr::from(net)) & mask
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    use AddressClass::*;
    // Most specific first: the metadata address sits inside link-local.
    let class = if ip == Ipv4Addr::new(169, 254, 169, 254) {
        Metadata
    } else if in_v4(ip, [0, 0, 0, 0], 8) {
        // 0.0.0.0/8 "this network"; connecting to 0.0.0.0 reaches localhost.
        Unspecified
    } else if ip.is_loopback() {
        Loopback
    } else if ip.is_private() {
        Private
    } else if ip.is_link_local() {
        LinkLocal
    } else if in_v4(ip, [100, 64, 0, 0], 10) {
        SharedCgnat
    } else if ip.is_broadcast() {
        Broadcast
    } else if ip.is_multicast() {
        Multicast
    } else if ip.is_documentation() {
        Documentation
    } else if in_v4(ip, [192, 0, 0, 0], 24)
        || in_v4(ip, [198, 18, 0, 0], 15)
        || in_v4(ip, [240, 0, 0, 0], 4)
    {
        Reserved
    } else {
        return None;
    };
    Some(class)
}

fn classify_v6(ip: Ipv6Addr) -> Option<AddressClass> {
    use AddressClass::*;
    if ip == Ipv6Addr::new(0xfd00, 0x0ec2, 0, 0, 0, 0, 0, 0x0254) {
        return Some(Metadata);
    }
    if ip.is_unspecified() {
        return Some(Unspecified);
    }
    if ip.is_loopback() {
        return Some(Loopback);
    }
    // Forms that carry an IPv4 address reach that address (directly, or
    // through a NAT64 or 6to4 gateway): judge the IPv4 address.
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let class = if in_v6(ip, [0xfc00, 0, 0, 0, 0, 0, 0, 0], 7)
        || in_v6(ip, [0xfec0, 0, 0, 0, 0, 0, 0, 0], 10)
    {
        Private
    } else if in_v6(ip, [0xfe80, 0, 0, 0, 0, 0, 0, 0], 10) {
        LinkLocal
    } else if ip.is_multicast() {
        Multicast
    } else if in_v6(ip, [0x2001, 0x0db8, 0, 0, 0, 0, 0, 0], 32)
        || in_v6(ip, [0x3fff, 0, 0, 0, 0, 0, 0, 0], 20)
    {
        Documentation
    } else if in_v6(ip, [0x0100, 0, 0, 0, 0, 0, 0, 0], 64)
        || in_v6(ip, [0x0064, 0xff9b, 0x0001, 0, 0, 0, 0, 0], 48)
    {
        // Discard-only, and local-use NAT64 (which maps to whatever the site chose).
        Reserved
    } else {
        return None;
    };
    Some(class)
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), well-known NAT64 (`64:ff9b::a.b.c.d`) or 6to4 (`2002:aabb:ccdd::`) address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = Ipv4Addr::from((bits & 0xffff_ffff) as u32);
    if let Some(mapped) = ip.to_ipv4_mapped() {
        Some(mapped)
    } else if bits >> 32 == 0 || in_v6(ip, [0x0064, 0xff9b, 0, 0, 0, 0, 0, 0], 96) {
        Some(low32)
    } else if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        Some(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32))
    } else {
        None
    }
}

/// Why a target may not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefused {
    #[error("target address {ip} is {class}")]
    Address { ip: IpAddr, class: AddressClass },
    #[error("target scheme {0:?} is not http or https")]
    Scheme(String),
    #[error("target URL has no host")]
    NoHost,
}

/// The deployment's rule for target addresses. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AddressPolicy {
    allow_private: bool,
    /// Private addresses allowed anyway (compared after unmapping IPv4-mapped IPv6).
    allowlist: Arc<[IpAddr]>,
}

impl AddressPolicy {
    pub fn new(allow_private: bool, allowlist: Vec<IpAddr>) -> Self {
        let allowlist = allowlist.into_iter().map(canonical).collect();
        Self {
            allow_private,
            allowlist,
        }
    }

    /// `Ok` when a check may connect to `ip`.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), TargetRefused> {
        if self.allow_private || self.allowlist.contains(&canonical(ip)) {
            return Ok(());
        }
        match classify(ip) {
            None => Ok(()),
            Some(class) => Err(TargetRefused::Address { ip, class }),
        }
    }

    /// `Ok` when `url` is http(s) and, if its host is a literal IP, that IP
    /// may be reached. Named hosts are judged after resolution instead.
    pub fn check_url(&self, url: &Url) -> Result<(), TargetRefused> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(TargetRefused::Scheme(other.to_string())),
        }
        match url.host() {
            None => Err(TargetRefused::NoHost),
            Some(Host::Domain(_)) => Ok(()),
            Some(Host::Ipv4(v4)) => self.check_ip(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.check_ip(IpAddr::V6(v6)),
        }
    }
}

fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map(IpAddr::V4)
            .unwrap_or(IpAddr::V6(v6)),
        v4 => v4,
    }
}

#[cfg(test)]
mod tests {
    use super::AddressClass::*;
    use super::*;

    fn class_of(ip: &str) -> Option<AddressClass> {
        classify(ip.parse().unwrap())
    }

    #[test]
    fn ipv4_ranges_are_classified() {
        let cases = [
            ("127.0.0.1", Some(Loopback)),
            ("127.255.255.254", Some(Loopback)),
            ("10.0.0.1", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.255", Some(Private)),
            ("192.168.1.1", Some(Private)),
            ("169.254.1.1", Some(LinkLocal)),
            ("169.254.169.254", Some(Metadata)),
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
            ("192.0.0.8", Some(Reserved)),
            ("240.0.0.1", Some(Reserved)),
            // Neighbours of the ranges above are public.
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("8.8.8.8", None),
            ("1.1.1.1", None),
            ("93.184.215.14", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(class_of(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_ranges_are_classified() {
        let cases = [
            ("::1", Some(Loopback)),
            ("::", Some(Unspecified)),
            ("fc00::1", Some(Private)),
            ("fdff:ffff::1", Some(Private)),
            ("fec0::1", Some(Private)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fd00:ec2::254", Some(Metadata)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Documentation)),
            ("3fff::1", Some(Documentation)),
            ("100::1", Some(Reserved)),
            ("2606:4700:4700::1111", None),
            ("2001:4860:4860::8888", None),
        ];
        for (ip, expected) in cases {
            assert_eq!(class_of(ip), expected, "{ip}");
        }
    }

    #[test]
    fn ipv6_forms_of_ipv4_addresses_are_judged_by_the_ipv4_address() {
        assert_eq!(class_of("::ffff:127.0.0.1"), Some(Loopback));
        assert_eq!(class_of("::ffff:169.254.169.254"), Some(Metadata));
        assert_eq!(class_of("::ffff:10.1.2.3"), Some(Private));
        assert_eq!(class_of("::10.1.2.3"), Some(Private));
        assert_eq!(class_of("64:ff9b::192.168.0.1"), Some(Private));
        // 2002:7f00:0001:: is 6to4 for 127.0.0.1.
        assert_eq!(class_of("2002:7f00:1::"), Some(Loopback));
        assert_eq!(class_of("::ffff:8.8.8.8"), None);
        assert_eq!(class_of("64:ff9b::8.8.8.8"), None);
    }

    #[test]
    fn policy_refuses_private_addresses_unless_allowed() {
        let strict = AddressPolicy::new(false, vec![]);
        let err = strict.check_ip("10.0.0.1".parse().unwrap()).unwrap_err();
        assert_eq!(err.to_string(), "target address 10.0.0.1 is private");
        assert!(strict.check_ip("8.8.8.8".parse().unwrap()).is_ok());

        let open = AddressPolicy::new(true, vec![]);
        assert!(open.check_ip("127.0.0.1".parse().unwrap()).is_ok());
        assert!(open.check_ip("169.254.169.254".parse().unwrap()).is_ok());
    }

    #[test]
    fn allowlist_admits_exactly_its_addresses_in_either_notation() {
        let policy = AddressPolicy::new(false, vec!["10.0.0.5".parse().unwrap()]);
        assert!(policy.check_ip("10.0.0.5".parse().unwrap()).is_ok());
        assert!(policy.check_ip("::ffff:10.0.0.5".parse().unwrap()).is_ok());
        assert!(policy.check_ip("10.0.0.6".parse().unwrap()).is_err());
    }

    #[test]
    fn urls_are_judged_by_scheme_and_literal_host() {
        let strict = AddressPolicy::new(false, vec![]);
        let check = |u: &str| strict.check_url(&Url::parse(u).unwrap());
        assert!(
            check("https://example.com/").is_ok(),
            "names are judged later"
        );
        assert_eq!(
            check("ftp://example.com/").unwrap_err(),
            TargetRefused::Scheme("ftp".into())
        );
        assert_eq!(
            check("http://127.0.0.1:8080/").unwrap_err().to_string(),
            "target address 127.0.0.1 is loopback"
        );
        assert_eq!(
            check("http://[::1]/").unwrap_err().to_string(),
            "target address ::1 is loopback"
        );
        // The URL parser normalises odd IPv4 spellings, so they are caught too.
        assert_eq!(
            check("http://2130706433/").unwrap_err().to_string(),
            "target address 127.0.0.1 is loopback"
        );
        assert_eq!(
            check("http://0x7f.1/").unwrap_err().to_string(),
            "target address 127.0.0.1 is loopback"
        );
        assert_eq!(
            check("http://[::ffff:a9fe:a9fe]/").unwrap_err().to_string(),
            "target address ::ffff:169.254.169.254 is a cloud metadata address"
        );
    }
}
