//! Which addresses alerts may be sent to. Webhook and Slack URLs are user
//! input: without these rules a user could make the service call its own
//! network (databases, cloud metadata). The rules apply to the addresses a
//! name resolves to, at connection time, so DNS tricks do not get around them.

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};

/// A destination that the safety rules refuse.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{host} resolves to {addr}, a loopback, private, link-local or metadata address, which alerts may not be sent to")]
pub struct ForbiddenAddress {
    pub host: String,
    pub addr: IpAddr,
}

/// Whether `ip` is loopback, private, link-local, metadata or otherwise not a
/// public unicast address.
pub fn is_forbidden(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => is_forbidden_v4(v4),
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_forbidden_v4(v4);
            }
            let first = v6.segments()[0];
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (first & 0xfe00) == 0xfc00 // unique local fc00::/7
                || (first & 0xffc0) == 0xfe80 // link-local fe80::/10
                || v6 == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) // AWS metadata (IPv6)
        }
    }
}

fn is_forbidden_v4(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_loopback()
        || ip.is_private()
        || ip.is_link_local() // includes 169.254.169.254, the cloud metadata address
        || ip.is_unspecified()
        || ip.is_broadcast()
        || ip.is_multicast()
        || ip.is_documentation()
        || a == 0
        || (a == 100 && (64..128).contains(&b)) // carrier-grade NAT 100.64.0.0/10
        || (a == 198 && (b == 18 || b == 19)) // benchmarking 198.18.0.0/15
        || a >= 240 // reserved
}

/// A resolver that refuses names resolving to any forbidden address.
#[derive(Debug, Clone, Copy, Default)]
pub struct SafeResolver;

impl Resolve for SafeResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let host = name.as_str().to_string();
        Box::pin(async move {
            let lookup = host.clone();
            let addrs: Vec<SocketAddr> =
                tokio::task::spawn_blocking(move || (lookup.as_str(), 0).to_socket_addrs())
                    .await
                    .map_err(|e| Box::new(e) as Box<dyn std::error::Error + Send + Sync>)??
                    .collect();
            if let Some(bad) = addrs.iter().find(|a| is_forbidden(a.ip())) {
                return Err(Box::new(ForbiddenAddress {
                    host,
                    addr: bad.ip(),
                })
                    as Box<dyn std::error::Error + Send + Sync>);
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// Refuses a URL whose host is a forbidden IP literal. (Names are checked by
/// [`SafeResolver`]; reqwest does not resolve literals.)
pub fn check_literal_host(url: &url::Url) -> Result<(), ForbiddenAddress> {
    let ip = match url.host() {
        Some(url::Host::Ipv4(ip)) => IpAddr::V4(ip),
        Some(url::Host::Ipv6(ip)) => IpAddr::V6(ip),
        _ => return Ok(()),
    };
    if is_forbidden(ip) {
        return Err(ForbiddenAddress {
            host: ip.to_string(),
            addr: ip,
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_internal_addresses_and_allows_public_ones() {
        for bad in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "::1",
            "fd00::1",
            "fe80::1",
            "::ffff:127.0.0.1",
            "fd00:ec2::254",
        ] {
            assert!(is_forbidden(bad.parse().unwrap()), "{bad}");
        }
        for good in ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"] {
            assert!(!is_forbidden(good.parse().unwrap()), "{good}");
        }
    }

    #[test]
    fn literal_hosts_are_checked_without_dns() {
        let url = url::Url::parse("http://169.254.169.254/latest/meta-data").unwrap();
        assert!(check_literal_host(&url).is_err());
        let url = url::Url::parse("https://hooks.example.com/x").unwrap();
        assert!(check_literal_host(&url).is_ok());
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost() {
        let name: Name = "localhost".parse().unwrap();
        let err = match SafeResolver.resolve(name).await {
            Err(e) => e,
            Ok(_) => panic!("localhost must be refused"),
        };
        assert!(err.downcast_ref::<ForbiddenAddress>().is_some(), "{err}");
    }
}
