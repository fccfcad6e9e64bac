//! Which addresses alerts may be sent to. Webhook and Slack URLs are user
//! input: without these rules a user could make the service call its own
//! network (databases, cloud metadata). The rules are `uptime-netguard`'s,
//! the very ones the checker applies to targets; they apply to the addresses
//! a name resolves to, at connection time, so DNS tricks do not get around
//! them, and to literal-address hosts before the request.

pub use uptime_netguard::{classify, AddressClass, Refused};

/// Ends a refusal: "{host} resolves to a private address, which alerts may
/// not be sent to".
pub const PURPOSE: &str = "alerts may not be sent to";

/// The rule for alert destinations: every non-public address is refused
/// unless the deployment allows private targets.
pub fn policy(allow_private: bool) -> uptime_netguard::AddressPolicy {
    uptime_netguard::AddressPolicy::new(allow_private, Vec::new(), PURPOSE)
}

/// A refusal as people read it in the delivery log and the test endpoint.
/// A resolved name's address is never in it (the resolver logs it).
pub fn describe(refused: &Refused) -> String {
    match refused {
        Refused::Literal { .. } => format!("{refused}, which {PURPOSE}"),
        Refused::Resolved { .. } => refused.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_say_what_may_not_happen() {
        let strict = policy(false);
        let url = url::Url::parse("http://169.254.169.254/latest/meta-data").unwrap();
        let literal = strict.check_url_host(&url).unwrap_err();
        assert_eq!(
            describe(&literal),
            "target address 169.254.169.254 is a cloud metadata address, which alerts may not be sent to"
        );
        let resolved = strict
            .check_resolved("hooks.internal", "10.9.8.7".parse().unwrap())
            .unwrap_err();
        assert_eq!(
            describe(&resolved),
            "hooks.internal resolves to a private address, which alerts may not be sent to"
        );
        let url = url::Url::parse("https://hooks.example.com/x").unwrap();
        assert!(strict.check_url_host(&url).is_ok());
        assert!(policy(true).check_url_host(&url).is_ok());
    }
}
