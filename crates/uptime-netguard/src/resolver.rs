//! The DNS resolver of every client that connects to user-supplied URLs.
//! reqwest calls it for every connection to a named host (the first request
//! and each redirect), so judging the resolved addresses here closes the
//! "public name that resolves to a private address" hole, DNS rebinding
//! included: the addresses judged are the addresses connected to.

use crate::policy::AddressPolicy;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::SocketAddr;
use std::sync::Arc;

/// A name could not be turned into addresses.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("DNS lookup of {host} failed: {source}")]
    Lookup {
        host: String,
        source: std::io::Error,
    },
    #[error("DNS lookup of {host} returned no address")]
    NoAddress { host: String },
}

/// Resolves with the system resolver (through tokio) and refuses a name if
/// ANY of its addresses is refused: the connector might pick any of them, and
/// a name that mixes public and private answers is suspicious anyway. The
/// error is a [`crate::Refused`] (or a [`ResolveError`]), boxed as itself so
/// callers can find it in reqwest's error chain ([`crate::find_refusal`]).
pub struct ScreeningResolver {
    policy: AddressPolicy,
}

impl ScreeningResolver {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }
}

impl Resolve for ScreeningResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let policy = self.policy.clone();
        let host = name.as_str().to_string();
        Box::pin(async move {
            // Port 0: reqwest puts the URL's port on the addresses it gets back.
            let addrs: Vec<SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await
                .map_err(|source| ResolveError::Lookup {
                    host: host.clone(),
                    source,
                })?
                .collect();
            if addrs.is_empty() {
                return Err(ResolveError::NoAddress { host }.into());
            }
            for addr in &addrs {
                if let Err(refused) = policy.check_resolved(&host, addr.ip()) {
                    // The user's message leaves the address out; operators
                    // investigating a refusal find it here.
                    tracing::info!(
                        host = %host,
                        address = %addr.ip(),
                        class = ?refused.class(),
                        "refused a name that resolves to a non-public address"
                    );
                    return Err(refused.into());
                }
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

/// A client builder for user-supplied URLs: names go through a
/// [`ScreeningResolver`] for `policy`, and no proxy is ever used (environment
/// proxies included), because a proxy resolves names itself, out of reach of
/// the resolver. Literal-address hosts and redirects are still the caller's
/// to judge ([`AddressPolicy::check_url_host`]).
pub fn client_builder(policy: &AddressPolicy) -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .dns_resolver(Arc::new(ScreeningResolver::new(policy.clone())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{AddressClass, Refused};

    fn resolve(policy: AddressPolicy, host: &str) -> Resolving {
        ScreeningResolver::new(policy).resolve(host.parse().unwrap())
    }

    fn policy(allow_private: bool) -> AddressPolicy {
        AddressPolicy::new(allow_private, vec![], "checks may not reach")
    }

    #[tokio::test]
    async fn localhost_is_refused_without_naming_its_address() {
        let err = resolve(policy(false), "localhost")
            .await
            .err()
            .expect("refused");
        let refused = err.downcast_ref::<Refused>().expect("a refusal");
        assert_eq!(refused.class(), AddressClass::Loopback);
        let message = refused.to_string();
        assert_eq!(
            message,
            "localhost resolves to a loopback address, which checks may not reach"
        );
        assert!(
            !message.contains("127.0.0.1") && !message.contains("::1"),
            "{message}"
        );
    }

    #[tokio::test]
    async fn localhost_resolves_when_private_targets_are_allowed() {
        let addrs: Vec<_> = resolve(policy(true), "localhost")
            .await
            .expect("allowed")
            .collect();
        assert!(!addrs.is_empty());
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[tokio::test]
    async fn an_unknown_name_is_a_lookup_error() {
        let err = resolve(policy(true), "no-such-host.invalid")
            .await
            .err()
            .expect("fails");
        let lookup = err.downcast_ref::<ResolveError>().expect("a lookup error");
        assert!(
            lookup
                .to_string()
                .starts_with("DNS lookup of no-such-host.invalid failed"),
            "{lookup}"
        );
    }
}
