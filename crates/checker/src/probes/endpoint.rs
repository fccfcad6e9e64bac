//! What tcp, tls and icmp targets name, and the addresses a check of one may
//! reach: shared by the tcp probe ([`super`]), [`crate::probes::tls`] and
//! [`crate::probes::icmp`].
//!
//! Address safety is the rule of http checks ([`crate::address`]), applied
//! by the same code: a literal address is judged as written; a name is
//! resolved by uptime-netguard's [`ScreeningResolver`] (the resolver of the
//! http client), which refuses the name if ANY of its addresses is refused.
//! Probes then connect only to the addresses it returned, so the addresses
//! judged are the addresses reached (no second lookup to rebind).

use crate::address::AddressPolicy;
use reqwest::dns::{Name, Resolve};
use std::net::{IpAddr, SocketAddr};
use uptime_netguard::{Refused, ResolveError, ScreeningResolver};
use url::{Host, Url};

/// A host and a port to connect to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub host: Host<String>,
    pub port: u16,
}

/// Why a target cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("target is empty")]
    Empty,
    #[error("target {0:?} has no port (expected host:port)")]
    NoPort(String),
    #[error("target {0:?} has an invalid port (expected 1 to 65535)")]
    InvalidPort(String),
    #[error("target {target:?} has an invalid host: {reason}")]
    InvalidHost { target: String, reason: String },
    #[error(
        "target {0:?}: an IPv6 address with a port must be in brackets, e.g. [2001:db8::1]:443"
    )]
    UnbracketedIpv6(String),
    #[error("target {0:?} must be a host name or an IP address, without a port")]
    NotAHost(String),
    #[error("target scheme {0:?} is not https")]
    Scheme(String),
    #[error("invalid target URL: {0}")]
    InvalidUrl(String),
}

/// `host:port`, `[v6]:port`, or `host` alone when there is a `default_port`.
pub fn parse_host_port(target: &str, default_port: Option<u16>) -> Result<Endpoint, TargetError> {
    let target = target.trim();
    if target.is_empty() {
        return Err(TargetError::Empty);
    }
    let (host, port) = split_host_port(target)?;
    let host = Host::parse(host).map_err(|e| TargetError::InvalidHost {
        target: target.into(),
        reason: e.to_string(),
    })?;
    let port = match port {
        Some(port) => port
            .parse::<u16>()
            .ok()
            .filter(|port| *port != 0)
            .ok_or_else(|| TargetError::InvalidPort(target.into()))?,
        None => default_port.ok_or_else(|| TargetError::NoPort(target.into()))?,
    };
    Ok(Endpoint { host, port })
}

/// An `https://` URL (port 443 unless given; the path is ignored), or what
/// [`parse_host_port`] accepts, with port 443 by default.
pub fn parse_https_or_host_port(target: &str) -> Result<Endpoint, TargetError> {
    let target = target.trim();
    let Some((scheme, _)) = target.split_once("://") else {
        return parse_host_port(target, Some(443));
    };
    if !scheme.eq_ignore_ascii_case("https") {
        return Err(TargetError::Scheme(scheme.to_string()));
    }
    let url = Url::parse(target).map_err(|e| TargetError::InvalidUrl(e.to_string()))?;
    let host = url
        .host()
        .ok_or_else(|| TargetError::InvalidUrl("no host".into()))?
        .to_owned();
    Ok(Endpoint {
        host,
        port: url.port_or_known_default().unwrap_or(443),
    })
}

/// A host name or an IP address (IPv6 with or without brackets), no port.
pub fn parse_host(target: &str) -> Result<Host<String>, TargetError> {
    let target = target.trim();
    if target.is_empty() {
        return Err(TargetError::Empty);
    }
    if let Ok(ip) = target.parse::<IpAddr>() {
        return Ok(match ip {
            IpAddr::V4(v4) => Host::Ipv4(v4),
            IpAddr::V6(v6) => Host::Ipv6(v6),
        });
    }
    if target.contains(':') && !target.starts_with('[') {
        return Err(TargetError::NotAHost(target.into()));
    }
    Host::parse(target).map_err(|e| TargetError::InvalidHost {
        target: target.into(),
        reason: e.to_string(),
    })
}

/// The host part and the port text, if any.
fn split_host_port(target: &str) -> Result<(&str, Option<&str>), TargetError> {
    if target.starts_with('[') {
        let invalid = |reason: &str| TargetError::InvalidHost {
            target: target.into(),
            reason: reason.into(),
        };
        let end = target.find(']').ok_or_else(|| invalid("unclosed '['"))?;
        let (host, rest) = target.split_at(end + 1);
        return match rest {
            "" => Ok((host, None)),
            _ => rest
                .strip_prefix(':')
                .map(|port| (host, Some(port)))
                .ok_or_else(|| invalid("expected ':' and a port after ']'")),
        };
    }
    match target.split_once(':') {
        None => Ok((target, None)),
        Some((host, port)) if !port.contains(':') => Ok((host, Some(port))),
        Some(_) => Err(TargetError::UnbracketedIpv6(target.into())),
    }
}

/// Why a host's addresses may not, or cannot, be reached.
#[derive(Debug, thiserror::Error)]
pub enum Unreachable {
    /// "target address 127.0.0.1 is loopback", or for a name "localhost
    /// resolves to a loopback address, which checks may not reach" (never
    /// naming the address a name resolved to; the resolver logs it).
    #[error(transparent)]
    Refused(#[from] Refused),
    #[error(transparent)]
    Lookup(#[from] ResolveError),
    #[error("DNS lookup of {host} failed: {reason}")]
    Other { host: String, reason: String },
}

/// The addresses (with `port`) a check of `host` may connect to, in the
/// resolver's order; never empty.
pub async fn resolve(
    policy: &AddressPolicy,
    host: &Host<String>,
    port: u16,
) -> Result<Vec<SocketAddr>, Unreachable> {
    let name = match host {
        Host::Ipv4(v4) => return literal(policy, IpAddr::V4(*v4), port),
        Host::Ipv6(v6) => return literal(policy, IpAddr::V6(*v6), port),
        Host::Domain(name) => name,
    };
    let other = |reason: String| Unreachable::Other {
        host: name.clone(),
        reason,
    };
    let parsed: Name = name
        .parse()
        .map_err(|_| other("not a valid host name".into()))?;
    let resolver = ScreeningResolver::new(policy.guard().clone());
    match resolver.resolve(parsed).await {
        // The resolver returns addresses with port 0.
        Ok(addrs) => Ok(addrs.map(|a| SocketAddr::new(a.ip(), port)).collect()),
        Err(error) => {
            let error = match error.downcast::<Refused>() {
                Ok(refused) => return Err(Unreachable::Refused(*refused)),
                Err(error) => error,
            };
            match error.downcast::<ResolveError>() {
                Ok(lookup) => Err(Unreachable::Lookup(*lookup)),
                Err(error) => Err(other(error.to_string())),
            }
        }
    }
}

fn literal(policy: &AddressPolicy, ip: IpAddr, port: u16) -> Result<Vec<SocketAddr>, Unreachable> {
    policy.guard().check_ip(ip)?;
    Ok(vec![SocketAddr::new(ip, port)])
}

/// The failure of a check that ran out of time, in every probe's words.
pub fn timed_out(timeout_secs: u32) -> String {
    format!("timed out after {timeout_secs} s")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    fn endpoint(host: Host<String>, port: u16) -> Endpoint {
        Endpoint { host, port }
    }

    fn domain(name: &str) -> Host<String> {
        Host::Domain(name.into())
    }

    #[test]
    fn host_port_accepts_names_and_both_address_families() {
        assert_eq!(
            parse_host_port("example.com:443", None),
            Ok(endpoint(domain("example.com"), 443))
        );
        assert_eq!(
            parse_host_port(" 10.0.0.1:22 ", None),
            Ok(endpoint(Host::Ipv4(Ipv4Addr::new(10, 0, 0, 1)), 22))
        );
        assert_eq!(
            parse_host_port("[::1]:8080", None),
            Ok(endpoint(Host::Ipv6(Ipv6Addr::LOCALHOST), 8080))
        );
        // Names are normalised like URL hosts: lower case, odd IPv4 spellings
        // read as the address they are (so the address rule sees it).
        assert_eq!(
            parse_host_port("Example.COM:1", None),
            Ok(endpoint(domain("example.com"), 1))
        );
        assert_eq!(
            parse_host_port("0x7f.1:80", None),
            Ok(endpoint(Host::Ipv4(Ipv4Addr::LOCALHOST), 80))
        );
    }

    #[test]
    fn host_port_refuses_what_it_cannot_connect_to() {
        assert_eq!(parse_host_port("", None), Err(TargetError::Empty));
        assert_eq!(
            parse_host_port("example.com", None),
            Err(TargetError::NoPort("example.com".into()))
        );
        for bad_port in ["example.com:0", "example.com:65536", "example.com:", "h:x"] {
            assert_eq!(
                parse_host_port(bad_port, None),
                Err(TargetError::InvalidPort(bad_port.into())),
                "{bad_port}"
            );
        }
        assert_eq!(
            parse_host_port("::1:80", None),
            Err(TargetError::UnbracketedIpv6("::1:80".into()))
        );
        assert!(matches!(
            parse_host_port("[::1:80", None),
            Err(TargetError::InvalidHost { .. })
        ));
        assert!(matches!(
            parse_host_port("[::1]80", None),
            Err(TargetError::InvalidHost { .. })
        ));
        assert!(matches!(
            parse_host_port("exa mple.com:80", None),
            Err(TargetError::InvalidHost { .. })
        ));
        assert_eq!(
            parse_host_port("example.com", None)
                .unwrap_err()
                .to_string(),
            "target \"example.com\" has no port (expected host:port)"
        );
    }

    #[test]
    fn a_default_port_applies_only_when_none_is_given() {
        assert_eq!(
            parse_host_port("example.com", Some(443)),
            Ok(endpoint(domain("example.com"), 443))
        );
        assert_eq!(
            parse_host_port("example.com:8443", Some(443)),
            Ok(endpoint(domain("example.com"), 8443))
        );
        assert_eq!(
            parse_host_port("[::1]", Some(443)),
            Ok(endpoint(Host::Ipv6(Ipv6Addr::LOCALHOST), 443))
        );
    }

    #[test]
    fn https_urls_give_their_host_and_port() {
        assert_eq!(
            parse_https_or_host_port("https://example.com/health?x=1"),
            Ok(endpoint(domain("example.com"), 443))
        );
        assert_eq!(
            parse_https_or_host_port("HTTPS://example.com:8443"),
            Ok(endpoint(domain("example.com"), 8443))
        );
        assert_eq!(
            parse_https_or_host_port("https://[::1]:9443/"),
            Ok(endpoint(Host::Ipv6(Ipv6Addr::LOCALHOST), 9443))
        );
        assert_eq!(
            parse_https_or_host_port("example.com"),
            Ok(endpoint(domain("example.com"), 443))
        );
        assert_eq!(
            parse_https_or_host_port("127.0.0.1:8443"),
            Ok(endpoint(Host::Ipv4(Ipv4Addr::LOCALHOST), 8443))
        );
        assert_eq!(
            parse_https_or_host_port("http://example.com/"),
            Err(TargetError::Scheme("http".into()))
        );
        assert!(matches!(
            parse_https_or_host_port("https://"),
            Err(TargetError::InvalidUrl(_))
        ));
    }

    #[test]
    fn hosts_are_names_or_addresses_without_ports() {
        assert_eq!(parse_host("example.com"), Ok(domain("example.com")));
        assert_eq!(parse_host("127.0.0.1"), Ok(Host::Ipv4(Ipv4Addr::LOCALHOST)));
        assert_eq!(parse_host("::1"), Ok(Host::Ipv6(Ipv6Addr::LOCALHOST)));
        assert_eq!(parse_host("[::1]"), Ok(Host::Ipv6(Ipv6Addr::LOCALHOST)));
        assert_eq!(parse_host(" "), Err(TargetError::Empty));
        assert_eq!(
            parse_host("example.com:80"),
            Err(TargetError::NotAHost("example.com:80".into()))
        );
        assert!(matches!(
            parse_host("exa mple.com"),
            Err(TargetError::InvalidHost { .. })
        ));
    }

    #[tokio::test]
    async fn literal_addresses_are_judged_as_written() {
        let strict = AddressPolicy::new(false, vec![]);
        let err = resolve(&strict, &Host::Ipv4(Ipv4Addr::new(10, 0, 0, 1)), 22)
            .await
            .unwrap_err();
        assert_eq!(err.to_string(), "target address 10.0.0.1 is private");
        let open = AddressPolicy::new(true, vec![]);
        assert_eq!(
            resolve(&open, &Host::Ipv6(Ipv6Addr::LOCALHOST), 22)
                .await
                .unwrap(),
            vec!["[::1]:22".parse().unwrap()]
        );
    }

    #[tokio::test]
    async fn names_are_judged_on_their_addresses_and_get_the_port() {
        let strict = AddressPolicy::new(false, vec![]);
        let err = resolve(&strict, &domain("localhost"), 80)
            .await
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "localhost resolves to a loopback address, which checks may not reach"
        );
        let open = AddressPolicy::new(true, vec![]);
        let addrs = resolve(&open, &domain("localhost"), 8080).await.unwrap();
        assert!(!addrs.is_empty());
        assert!(
            addrs
                .iter()
                .all(|a| a.ip().is_loopback() && a.port() == 8080),
            "{addrs:?}"
        );
    }
}
