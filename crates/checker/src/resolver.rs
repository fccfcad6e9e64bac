//! The DNS resolver of the check client. reqwest calls it for every
//! connection to a named host (the first request and each redirect), so
//! judging the resolved addresses here closes the "public name that resolves
//! to a private address" hole, including DNS rebinding between checks: the
//! addresses judged are the addresses connected to.

use crate::address::AddressPolicy;
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use std::net::SocketAddr;

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
/// a name that mixes public and private answers is suspicious anyway.
pub struct GuardedResolver {
    policy: AddressPolicy,
}

impl GuardedResolver {
    pub fn new(policy: AddressPolicy) -> Self {
        Self { policy }
    }
}

impl Resolve for GuardedResolver {
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
                // Boxed as itself so that callers can downcast it out of reqwest's error chain.
                policy.check_ip(addr.ip())?;
            }
            Ok(Box::new(addrs.into_iter()) as Addrs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::TargetRefused;

    fn resolve(policy: AddressPolicy, host: &str) -> Resolving {
        GuardedResolver::new(policy).resolve(host.parse().unwrap())
    }

    #[tokio::test]
    async fn localhost_is_refused_unless_private_targets_are_allowed() {
        let err = resolve(AddressPolicy::new(false, vec![]), "localhost")
            .await
            .err()
            .expect("refused");
        let refused = err.downcast_ref::<TargetRefused>().expect("a refusal");
        assert!(refused.to_string().ends_with("is loopback"), "{refused}");

        let addrs: Vec<_> = resolve(AddressPolicy::new(true, vec![]), "localhost")
            .await
            .expect("allowed")
            .collect();
        assert!(addrs.iter().all(|a| a.ip().is_loopback()), "{addrs:?}");
    }

    #[tokio::test]
    async fn an_unknown_name_is_a_lookup_error() {
        let err = resolve(AddressPolicy::new(true, vec![]), "no-such-host.invalid")
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
