//! The deployment's rule, and how a refusal reads.

use crate::class::{classify, AddressClass};
use std::error::Error as StdError;
use std::net::IpAddr;
use std::sync::Arc;
use url::{Host, Url};

/// A connection the policy refuses.
///
/// What users read (a check's error, a delivery's error) never names an
/// address a name resolved to: that would map the internal network for
/// anyone who can point a name at it. The resolver logs the address instead;
/// it stays in `ip` for callers that log too.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The URL names the address itself, so saying it reveals nothing.
    #[error("target address {ip} is {class}")]
    Literal { ip: IpAddr, class: AddressClass },
    /// A name resolved to the address.
    #[error("{host} resolves to {}, which {purpose}", class.noun())]
    Resolved {
        host: String,
        ip: IpAddr,
        class: AddressClass,
        /// What may not happen, e.g. "checks may not reach".
        purpose: &'static str,
    },
}

impl Refused {
    pub fn class(&self) -> AddressClass {
        match self {
            Refused::Literal { class, .. } | Refused::Resolved { class, .. } => *class,
        }
    }
}

/// The deployment's rule for addresses. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AddressPolicy {
    allow_private: bool,
    /// Addresses allowed anyway (compared after unmapping IPv4-mapped IPv6).
    allowlist: Arc<[IpAddr]>,
    purpose: &'static str,
}

impl AddressPolicy {
    /// `purpose` ends refusals of resolved names: "{host} resolves to a
    /// private address, which {purpose}", e.g. "checks may not reach".
    pub fn new(allow_private: bool, allowlist: Vec<IpAddr>, purpose: &'static str) -> Self {
        let allowlist = allowlist.into_iter().map(canonical).collect();
        Self {
            allow_private,
            allowlist,
            purpose,
        }
    }

    /// Whether every address is allowed (local development, tests).
    pub fn allows_private(&self) -> bool {
        self.allow_private
    }

    /// The class that forbids `ip`, or `None` when it may be reached.
    pub fn refused_class(&self, ip: IpAddr) -> Option<AddressClass> {
        if self.allow_private || self.allowlist.contains(&canonical(ip)) {
            return None;
        }
        classify(ip)
    }

    /// `Ok` when a URL (or redirect) naming `ip` literally may be followed.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), Refused> {
        match self.refused_class(ip) {
            None => Ok(()),
            Some(class) => Err(Refused::Literal { ip, class }),
        }
    }

    /// `Ok` when `host` may be connected to at `ip`, one of its addresses.
    pub fn check_resolved(&self, host: &str, ip: IpAddr) -> Result<(), Refused> {
        match self.refused_class(ip) {
            None => Ok(()),
            Some(class) => Err(Refused::Resolved {
                host: host.to_string(),
                ip,
                class,
                purpose: self.purpose,
            }),
        }
    }

    /// `Ok` unless `url`'s host is a literal address that is refused. Literal
    /// hosts never reach a resolver, so they are judged here; names are
    /// judged on their addresses by [`crate::ScreeningResolver`].
    pub fn check_url_host(&self, url: &Url) -> Result<(), Refused> {
        match url.host() {
            Some(Host::Ipv4(v4)) => self.check_ip(IpAddr::V4(v4)),
            Some(Host::Ipv6(v6)) => self.check_ip(IpAddr::V6(v6)),
            Some(Host::Domain(_)) | None => Ok(()),
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

/// The [`Refused`] somewhere in an error's chain (reqwest wraps what the
/// resolver returns, sometimes inside an `io::Error`, whose `source` skips it).
pub fn find_refusal<'a>(error: &'a (dyn StdError + 'static)) -> Option<&'a Refused> {
    causes(error).find_map(|cause| cause.downcast_ref::<Refused>())
}

/// `error` and its causes, `error` first. `io::Error::source` skips the
/// error it wraps, so that one is visited explicitly.
pub fn causes<'a>(
    error: &'a (dyn StdError + 'static),
) -> impl Iterator<Item = &'a (dyn StdError + 'static)> {
    let mut pending: Vec<&'a (dyn StdError + 'static)> = vec![error];
    std::iter::from_fn(move || {
        let current = pending.pop()?;
        if let Some(next) = current.source() {
            pending.push(next);
        }
        if let Some(inner) = current
            .downcast_ref::<std::io::Error>()
            .and_then(|io| io.get_ref())
        {
            pending.push(inner);
        }
        Some(current)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PURPOSE: &str = "checks may not reach";

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn private_addresses_are_refused_unless_allowed() {
        let strict = AddressPolicy::new(false, vec![], PURPOSE);
        let err = strict.check_ip(ip("10.0.0.1")).unwrap_err();
        assert_eq!(err.to_string(), "target address 10.0.0.1 is private");
        assert_eq!(err.class(), AddressClass::Private);
        assert!(strict.check_ip(ip("8.8.8.8")).is_ok());
        assert!(!strict.allows_private());

        let open = AddressPolicy::new(true, vec![], PURPOSE);
        assert!(open.check_ip(ip("127.0.0.1")).is_ok());
        assert!(open.check_ip(ip("169.254.169.254")).is_ok());
        assert!(open.check_resolved("localhost", ip("::1")).is_ok());
        assert!(open.allows_private());
    }

    #[test]
    fn the_allowlist_admits_exactly_its_addresses_in_either_notation() {
        let policy = AddressPolicy::new(false, vec![ip("10.0.0.5")], PURPOSE);
        assert!(policy.check_ip(ip("10.0.0.5")).is_ok());
        assert!(policy.check_ip(ip("::ffff:10.0.0.5")).is_ok());
        assert!(policy.check_resolved("db.internal", ip("10.0.0.5")).is_ok());
        assert!(policy.check_ip(ip("10.0.0.6")).is_err());
    }

    #[test]
    fn a_refused_name_is_described_without_its_address() {
        let policy = AddressPolicy::new(false, vec![], PURPOSE);
        let err = policy
            .check_resolved("example.internal", ip("10.20.30.40"))
            .unwrap_err();
        let message = err.to_string();
        assert_eq!(
            message,
            "example.internal resolves to a private address, which checks may not reach"
        );
        assert!(!message.contains("10.20.30.40"), "{message}");
        // The address is kept for logs.
        assert!(matches!(err, Refused::Resolved { ip, .. } if ip == self::ip("10.20.30.40")));
    }

    #[test]
    fn literal_url_hosts_are_judged_and_names_left_to_the_resolver() {
        let policy = AddressPolicy::new(false, vec![], PURPOSE);
        let check = |u: &str| policy.check_url_host(&Url::parse(u).unwrap());
        assert!(check("https://example.com/").is_ok());
        assert!(
            check("https://localhost/").is_ok(),
            "names are judged later"
        );
        assert_eq!(
            check("http://[::1]/").unwrap_err().to_string(),
            "target address ::1 is loopback"
        );
        assert_eq!(
            check("http://[64:ff9b::7f00:1]/").unwrap_err().class(),
            AddressClass::Loopback
        );
        assert_eq!(
            check("http://[::ffff:a9fe:a9fe]/").unwrap_err().to_string(),
            "target address ::ffff:169.254.169.254 is a cloud metadata address"
        );
    }

    #[test]
    fn a_refusal_is_found_inside_io_errors() {
        let refused = Refused::Literal {
            ip: ip("127.0.0.1"),
            class: AddressClass::Loopback,
        };
        let io = std::io::Error::other(refused.clone());
        assert_eq!(find_refusal(&io), Some(&refused));
        let plain = std::io::Error::other("nothing to see");
        assert_eq!(find_refusal(&plain), None);
    }
}
