//! The classes of non-public addresses, and the classifier. Pure: no I/O.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

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
    /// A cloud provider's instance metadata (or platform) service.
    Metadata,
}

/// As a predicate: "target address 10.0.0.1 is private".
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

impl AddressClass {
    /// As a noun: "example.internal resolves to a private address".
    pub fn noun(self) -> &'static str {
        match self {
            AddressClass::Loopback => "a loopback address",
            AddressClass::Private => "a private address",
            AddressClass::LinkLocal => "a link-local address",
            AddressClass::SharedCgnat => "an address in the shared (CGNAT) range",
            AddressClass::Unspecified => "an unspecified address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "a broadcast address",
            AddressClass::Documentation => "an address reserved for documentation",
            AddressClass::Reserved => "a reserved address",
            AddressClass::Metadata => "a cloud metadata address",
        }
    }
}

/// The class of a non-public address; `None` for a public one.
pub fn classify(ip: IpAddr) -> Option<AddressClass> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

/// The class of a host name that is internal by definition, whatever DNS
/// says: `localhost` and `*.localhost` (RFC 6761) and Google's metadata name.
/// Every other name is judged on its addresses, after resolution.
pub fn classify_name(name: &str) -> Option<AddressClass> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        Some(AddressClass::Loopback)
    } else if name == "metadata.google.internal" {
        Some(AddressClass::Metadata)
    } else {
        None
    }
}

/// The class of a URL's host as written: a literal address, or a name that is
/// internal by definition ([`classify_name`]). For validating URLs without
/// resolving them; whoever connects judges the resolved addresses too.
pub fn classify_host(host: &url::Host<&str>) -> Option<AddressClass> {
    match host {
        url::Host::Ipv4(v4) => classify_v4(*v4),
        url::Host::Ipv6(v6) => classify_v6(*v6),
        url::Host::Domain(name) => classify_name(name),
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

/// Instance metadata and platform services: AWS, GCP, Azure and OpenStack
/// (169.254.169.254, inside link-local), Alibaba Cloud (inside the shared
/// range) and Azure's WireServer, a public address that only answers inside
/// Azure, where it hands out VM configuration.
const METADATA_V4: [Ipv4Addr; 3] = [
    Ipv4Addr::new(169, 254, 169, 254),
    Ipv4Addr::new(100, 100, 100, 200),
    Ipv4Addr::new(168, 63, 129, 16),
];

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    use AddressClass::*;
    // Most specific first: metadata addresses sit inside other classes.
    let class = if METADATA_V4.contains(&ip) {
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
        || in_v6(ip, [0x2001, 0x0002, 0, 0, 0, 0, 0, 0], 48)
        || in_v6(ip, [0x0064, 0xff9b, 0x0001, 0, 0, 0, 0, 0], 48)
    {
        // Discard-only, benchmarking, and local-use NAT64 (which maps to
        // whatever the site chose).
        Reserved
    } else {
        return None;
    };
    Some(class)
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-translated
/// (`::ffff:0:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), well-known NAT64
/// (`64:ff9b::a.b.c.d`), 6to4 (`2002:aabb:ccdd::`) or Teredo address (whose
/// last 32 bits are the client's address inverted; a Teredo host sends to
/// that address directly).
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let bits = u128::from(ip);
    let low32 = (bits & 0xffff_ffff) as u32;
    if let Some(mapped) = ip.to_ipv4_mapped() {
        Some(mapped)
    } else if bits >> 32 == 0
        || bits >> 32 == 0xffff_0000
        || in_v6(ip, [0x0064, 0xff9b, 0, 0, 0, 0, 0, 0], 96)
    {
        Some(Ipv4Addr::from(low32))
    } else if in_v6(ip, [0x2002, 0, 0, 0, 0, 0, 0, 0], 16) {
        Some(Ipv4Addr::from(((bits >> 80) & 0xffff_ffff) as u32))
    } else if in_v6(ip, [0x2001, 0, 0, 0, 0, 0, 0, 0], 32) {
        Some(Ipv4Addr::from(!low32))
    } else {
        None
    }
}

#[cfg(test)]
mod tests;
