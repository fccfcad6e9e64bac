//! The `[ack_links]` section: the signed acknowledge links in alerts. Shared,
//! so the notifier (which signs a link into each down alert) and the
//! api-gateway (which checks it when someone follows it) read the same
//! variables.
//!
//! ```toml
//! [ack_links]
//! secret = "<base64 of at least 32 random bytes>"
//! ttl_secs = 604800
//! public_base_url = "https://uptime.example.com"
//! ```
//!
//! From the environment: `UPTIME_ACK_LINKS__SECRET`, ... No secret: alerts
//! carry no link (acknowledging still works with a key).

use serde::Deserialize;

/// The longest a link may stay valid: 30 days.
pub const MAX_ACK_LINK_TTL_SECS: u64 = 30 * 86_400;

#[derive(Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct AckLinkSettings {
    /// The HMAC-SHA256 key links are signed with, base64 (standard or
    /// URL-safe), at least 32 bytes. Empty: no links.
    pub secret: String,
    /// How long a link stays valid after its alert is sent (at most
    /// [`MAX_ACK_LINK_TTL_SECS`]; longer values are cut to it).
    pub ttl_secs: u64,
    /// How people reach the API, for the links (the api-gateway's
    /// `http.public_base_url`).
    pub public_base_url: String,
}

impl Default for AckLinkSettings {
    fn default() -> Self {
        Self {
            secret: String::new(),
            ttl_secs: 7 * 86_400,
            public_base_url: "http://127.0.0.1:8080".into(),
        }
    }
}

// By hand: the secret must never reach a log.
impl std::fmt::Debug for AckLinkSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let secret = if self.secret.is_empty() {
            "[none]"
        } else {
            "[redacted]"
        };
        f.debug_struct("AckLinkSettings")
            .field("secret", &secret)
            .field("ttl_secs", &self.ttl_secs)
            .field("public_base_url", &self.public_base_url)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_the_secret() {
        let settings = AckLinkSettings {
            secret: "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA".into(),
            ..AckLinkSettings::default()
        };
        let shown = format!("{settings:?}");
        assert!(!shown.contains(&settings.secret), "{shown}");
        assert!(shown.contains("[redacted]"), "{shown}");
    }
}
