//! Which addresses a check may reach. Monitoring is a request-forgery
//! machine by design (users name URLs, we fetch them), so unless the
//! deployment allows private targets, a check never connects to loopback,
//! private, link-local, shared (CGNAT), metadata or otherwise non-public
//! addresses. The classes and the rule are `uptime-netguard`'s, shared with
//! the alert channels and the api-gateway's validation; this module adds
//! what only checks need (the schemes a check may use). The rule is applied
//! to every address a name resolves to (the client's resolver), to literal IP
//! hosts before the request, and to every redirect ([`crate::http_check`]).

use std::net::IpAddr;
pub use uptime_netguard::{classify, AddressClass, Refused};
use url::Url;

/// Ends the refusal of a name: "{host} resolves to a private address, which
/// checks may not reach".
pub const PURPOSE: &str = "checks may not reach";

/// Why a target may not be reached.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetRefused {
    #[error(transparent)]
    Address(#[from] Refused),
    #[error("target scheme {0:?} is not http or https")]
    Scheme(String),
    #[error("target URL has no host")]
    NoHost,
}

/// The deployment's rule for target addresses. Cheap to clone.
#[derive(Debug, Clone)]
pub struct AddressPolicy {
    guard: uptime_netguard::AddressPolicy,
}

impl AddressPolicy {
    /// `allowlist`: private addresses allowed anyway (compared after
    /// unmapping IPv4-mapped IPv6).
    pub fn new(allow_private: bool, allowlist: Vec<IpAddr>) -> Self {
        Self {
            guard: uptime_netguard::AddressPolicy::new(allow_private, allowlist, PURPOSE),
        }
    }

    /// The shared rule, for the client's screening resolver.
    pub fn guard(&self) -> &uptime_netguard::AddressPolicy {
        &self.guard
    }

    /// `Ok` when a check may connect to `ip` named literally.
    pub fn check_ip(&self, ip: IpAddr) -> Result<(), TargetRefused> {
        Ok(self.guard.check_ip(ip)?)
    }

    /// `Ok` when `url` is http(s) and, if its host is a literal IP, that IP
    /// may be reached. Named hosts are judged after resolution instead.
    pub fn check_url(&self, url: &Url) -> Result<(), TargetRefused> {
        match url.scheme() {
            "http" | "https" => {}
            other => return Err(TargetRefused::Scheme(other.to_string())),
        }
        if url.host().is_none() {
            return Err(TargetRefused::NoHost);
        }
        Ok(self.guard.check_url_host(url)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // The classes themselves are tested in uptime-netguard.

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
        assert_eq!(
            check("http://[64:ff9b::7f00:1]/").unwrap_err().to_string(),
            "target address 64:ff9b::7f00:1 is loopback"
        );
    }
}
