//! Targets that are not URLs: `host:port` (tcp, tls), a host (icmp), a
//! domain name (dns) and a DNS server (`ip`, `ip:port`, `[v6]:port`).
//!
//! The address-safety rule is the one http targets follow
//! ([`super::check_url`]): a literal address of a non-public class, or a
//! name internal by definition (`localhost`, the metadata name), is refused
//! here unless the deployment allows private targets; other names are judged
//! on the addresses they resolve to, by the checker, at check time.
//!
//! Host names are kept to what every resolver reads the same way: ASCII
//! letters, digits, `-` and `_` in dot-separated labels of at most 63
//! characters, at most 253 characters in all (one trailing dot allowed), and
//! a last label that starts with a letter. The last rule refuses names that
//! some resolvers read as IPv4 addresses (`2130706433`, `127.1`,
//! `0x7f000001`), so a private address cannot hide in one. International
//! names are written in their `xn--` form.

use super::{Problems, UrlRules};
use std::net::{IpAddr, Ipv6Addr, SocketAddr};

/// Longest domain name, without its optional trailing dot (RFC 1035).
pub const MAX_DOMAIN_CHARS: usize = 253;
/// Longest label of a domain name.
pub const MAX_LABEL_CHARS: usize = 63;
/// The port a DNS server is asked on unless one is given.
pub const DNS_PORT: u16 = 53;

/// A host as written in a target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host<'a> {
    Name(&'a str),
    Ip(IpAddr),
}

/// `Ok` when `name` is a host name as the module describes.
pub fn check_domain_name(name: &str) -> Result<(), String> {
    let bare = name.strip_suffix('.').unwrap_or(name);
    if bare.is_empty() {
        return Err("must be a domain name".into());
    }
    if !bare.is_ascii() {
        return Err(
            "must be an ASCII domain name (write international names in their xn-- form)".into(),
        );
    }
    if bare.len() > MAX_DOMAIN_CHARS {
        return Err(format!(
            "must be a domain name of at most {MAX_DOMAIN_CHARS} characters"
        ));
    }
    for label in bare.split('.') {
        if label.is_empty() {
            return Err("must be a domain name without empty labels (`..`)".into());
        }
        if label.len() > MAX_LABEL_CHARS {
            return Err(format!(
                "must be a domain name whose labels have at most {MAX_LABEL_CHARS} characters"
            ));
        }
        if !label
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(
                "must be a domain name of letters, digits, `-` and `_` in dot-separated labels"
                    .into(),
            );
        }
        if label.starts_with('-') || label.ends_with('-') {
            return Err("must be a domain name whose labels do not start or end with `-`".into());
        }
    }
    let last = bare.rsplit('.').next().unwrap_or(bare);
    if !last.starts_with(|c: char| c.is_ascii_alphabetic()) {
        return Err(
            "must be a host name whose last label starts with a letter, or an IP address \
             (IPv4 as four decimal numbers)"
                .into(),
        );
    }
    Ok(())
}

/// A host: an IPv4 address (four decimal numbers), an IPv6 address (in
/// brackets when `bracketed_v6`, else bare) or a host name.
pub fn parse_host(value: &str, bracketed_v6: bool) -> Result<Host<'_>, String> {
    if let Some(inner) = value.strip_prefix('[') {
        let v6 = inner
            .strip_suffix(']')
            .and_then(|a| a.parse::<Ipv6Addr>().ok())
            .filter(|_| bracketed_v6)
            .ok_or_else(|| {
                if bracketed_v6 {
                    "must have a valid IPv6 address between the brackets".to_string()
                } else {
                    "must write an IPv6 address without brackets".to_string()
                }
            })?;
        return Ok(Host::Ip(IpAddr::V6(v6)));
    }
    if let Ok(ip) = value.parse::<IpAddr>() {
        return match ip {
            IpAddr::V6(_) if bracketed_v6 => {
                Err("must write an IPv6 address in brackets (`[2001:db8::1]:443`)".into())
            }
            ip => Ok(Host::Ip(ip)),
        };
    }
    check_domain_name(value)?;
    Ok(Host::Name(value))
}

/// `host:port` with a port of 1 to 65535 and IPv6 in brackets.
pub fn parse_host_port(value: &str) -> Result<(Host<'_>, u16), String> {
    const SHAPE: &str = "must be host:port (IPv6 in brackets: [2001:db8::1]:443)";
    let (host, port) = value.rsplit_once(':').ok_or(SHAPE)?;
    // A bare IPv6 address has colons of its own: `::1:80` is not `[::1]:80`.
    if host.contains(':') && !host.starts_with('[') {
        return Err(SHAPE.into());
    }
    let port = parse_port(port)?;
    Ok((parse_host(host, true)?, port))
}

fn parse_port(port: &str) -> Result<u16, String> {
    const PORT: &str = "must end in a port from 1 to 65535";
    if port.is_empty() || port.len() > 5 || !port.bytes().all(|b| b.is_ascii_digit()) {
        return Err(PORT.into());
    }
    match port.parse::<u16>() {
        Ok(p) if p >= 1 => Ok(p),
        _ => Err(PORT.into()),
    }
}

/// A DNS server: `ip` (port 53), `ip:port` or `[v6]:port`.
pub fn parse_dns_server(value: &str) -> Result<SocketAddr, String> {
    const SHAPE: &str = "must be an IP address, ip:port or [IPv6]:port";
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Ok(SocketAddr::new(ip, DNS_PORT));
    }
    let addr = value.parse::<SocketAddr>().map_err(|_| SHAPE.to_string())?;
    if addr.port() == 0 {
        return Err("must have a port from 1 to 65535".into());
    }
    Ok(addr)
}

/// The safety problem with `host`, if any (see the module documentation).
fn refused_host(host: &Host<'_>, allow_private: bool) -> Option<String> {
    if allow_private {
        return None;
    }
    let class = match host {
        Host::Ip(ip) => uptime_netguard::classify(*ip),
        Host::Name(name) => uptime_netguard::classify_name(name),
    }?;
    Some(format!("must not point to {}", class.noun()))
}

impl Problems {
    /// Adds a problem unless `value` is `host:port` that may be checked.
    pub fn check_host_port(&mut self, field: &str, value: &str, allow_private: bool) {
        let verdict = parse_host_port(value)
            .and_then(|(host, _)| refused_host(&host, allow_private).map_or(Ok(()), Err));
        if let Err(message) = verdict {
            self.add(field, message);
        }
    }

    /// Adds a problem unless `value` is `host:port` or an `https://` URL
    /// that may be checked (a tls target).
    pub fn check_tls_target(&mut self, field: &str, value: &str, allow_private: bool) {
        if value.contains("://") {
            if let Err(message) = super::check_url(
                value,
                UrlRules {
                    allow_http: false,
                    allow_private_hosts: allow_private,
                },
            ) {
                // A URL of another scheme is the shape error; the others
                // (host, credentials, address) say what is wrong with it.
                let message = if message.starts_with("must be an absolute") {
                    "must be host:port or an https:// URL".to_string()
                } else {
                    message
                };
                self.add(field, message);
            }
        } else {
            self.check_host_port(field, value, allow_private);
        }
    }

    /// Adds a problem unless `value` is a host name or a bare IP address
    /// that may be checked (an icmp target).
    pub fn check_host(&mut self, field: &str, value: &str, allow_private: bool) {
        let verdict = parse_host(value, false)
            .and_then(|host| refused_host(&host, allow_private).map_or(Ok(()), Err));
        if let Err(message) = verdict {
            self.add(field, message);
        }
    }

    /// Adds a problem unless `value` is a domain name that may be queried (a
    /// dns target). Names internal by definition follow the target rule.
    pub fn check_domain(&mut self, field: &str, value: &str, allow_private: bool) {
        if value.parse::<IpAddr>().is_ok() {
            return self.add(field, "must be a domain name, not an IP address");
        }
        let verdict = check_domain_name(value)
            .and_then(|()| refused_host(&Host::Name(value), allow_private).map_or(Ok(()), Err));
        if let Err(message) = verdict {
            self.add(field, message);
        }
    }

    /// Adds a problem unless `value` is a DNS server that may be asked.
    pub fn check_dns_server(&mut self, field: &str, value: &str, allow_private: bool) {
        let verdict = parse_dns_server(value)
            .and_then(|addr| refused_host(&Host::Ip(addr.ip()), allow_private).map_or(Ok(()), Err));
        if let Err(message) = verdict {
            self.add(field, message);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_are_plain_ascii_labels_ending_in_a_letter() {
        for ok in [
            "example.com",
            "example.com.",
            "a-b.c_d.example",
            "_dmarc.example.com",
            "localhost",
            "xn--bcher-kva.example",
            "1.example",
        ] {
            assert_eq!(check_domain_name(ok), Ok(()), "{ok}");
        }
        let long_label = format!("{}.com", "a".repeat(64));
        let long_name = format!("{}.com", vec!["a".repeat(60); 5].join("."));
        for bad in [
            "",
            ".",
            "a..b",
            ".a",
            "-a.com",
            "a-.com",
            "a b.com",
            "a/b.com",
            "bücher.example",
            "2130706433",
            "127.1",
            "0x7f000001",
            "1.2.3.4.5",
            long_label.as_str(),
            long_name.as_str(),
        ] {
            assert!(check_domain_name(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn host_port_needs_a_port_and_brackets_for_ipv6() {
        assert_eq!(
            parse_host_port("example.com:443"),
            Ok((Host::Name("example.com"), 443))
        );
        assert_eq!(
            parse_host_port("[::1]:22"),
            Ok((Host::Ip("::1".parse().unwrap()), 22))
        );
        assert_eq!(
            parse_host_port("10.0.0.1:65535"),
            Ok((Host::Ip("10.0.0.1".parse().unwrap()), 65535))
        );
        for bad in [
            "example.com",
            "example.com:",
            "example.com:0",
            "example.com:65536",
            "example.com:+80",
            "example.com:080000",
            "::1:80",
            "[::1]",
            "[nope]:80",
            ":80",
            "http://example.com:80",
            "a b:80",
        ] {
            assert!(parse_host_port(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn icmp_hosts_take_bare_ipv6() {
        assert!(parse_host("2001:db8::1", false).is_ok());
        assert!(parse_host("[2001:db8::1]", false).is_err());
        assert!(parse_host("192.0.2.1", false).is_ok());
        assert!(parse_host("192.0.2.1:80", false).is_err());
    }

    #[test]
    fn dns_servers_default_to_port_53() {
        assert_eq!(
            parse_dns_server("9.9.9.9"),
            Ok("9.9.9.9:53".parse().unwrap())
        );
        assert_eq!(
            parse_dns_server("2620:fe::fe"),
            Ok("[2620:fe::fe]:53".parse().unwrap())
        );
        assert_eq!(
            parse_dns_server("[2620:fe::fe]:5353"),
            Ok("[2620:fe::fe]:5353".parse().unwrap())
        );
        for bad in ["dns.example", "9.9.9.9:0", "[::1]", "9.9.9.9:99999", ""] {
            assert!(parse_dns_server(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn private_literals_and_internal_names_are_refused_unless_allowed() {
        let mut strict = Problems::new();
        strict.check_host_port("a", "127.0.0.1:22", false);
        strict.check_host_port("b", "localhost:22", false);
        strict.check_host("c", "169.254.169.254", false);
        strict.check_dns_server("d", "10.0.0.53", false);
        strict.check_domain("e", "metadata.google.internal", false);
        strict.check_tls_target("f", "https://[::1]/", false);
        strict.check_host_port("g", "[fe80::1]:22", false);
        assert_eq!(strict.0.len(), 7, "{:?}", strict.0);
        let mut lax = Problems::new();
        lax.check_host_port("a", "127.0.0.1:22", true);
        lax.check_host_port("b", "localhost:22", true);
        lax.check_host("c", "169.254.169.254", true);
        lax.check_dns_server("d", "10.0.0.53", true);
        lax.check_domain("e", "metadata.google.internal", true);
        lax.check_tls_target("f", "https://[::1]/", true);
        assert!(lax.is_empty());
        let mut public = Problems::new();
        public.check_host_port("a", "93.184.216.34:443", false);
        public.check_dns_server("d", "9.9.9.9", false);
        public.check_tls_target("f", "example.com:443", false);
        public.check_tls_target("f", "https://example.com/path", false);
        assert!(public.is_empty());
        let mut wrong = Problems::new();
        wrong.check_tls_target("f", "http://example.com/", true);
        wrong.check_domain("e", "192.0.2.1", true);
        assert_eq!(wrong.0.len(), 2);
    }
}
