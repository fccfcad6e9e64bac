//! The `[secrets]` section: the keys that seal secrets stored for users
//! (today the basic-auth passwords of http monitors; `uptime-secrets` does
//! the sealing). Shared, so the api-gateway (which seals) and the checker
//! (which opens) read the same variables.
//!
//! ```toml
//! [secrets]
//! current_key_id = "k2"
//! keys = { k1 = "<base64 of 32 bytes>", k2 = "<base64 of 32 bytes>" }
//! ```
//!
//! From the environment: `UPTIME_SECRETS__CURRENT_KEY_ID=k2` and one
//! `UPTIME_SECRETS__KEYS__<ID>=<base64>` per key. The `config` crate
//! lowercases every environment key, map keys included, so
//! `UPTIME_SECRETS__KEYS__K2` names the key `k2`: key ids are lowercase
//! (`uptime-secrets` refuses others, so a file and the environment cannot
//! name one key two ways).

use serde::Deserialize;
use std::collections::BTreeMap;

/// Key material by key id, and which key seals.
#[derive(Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct SecretsSettings {
    /// The key new secrets are sealed with; must be one of `keys`.
    pub current_key_id: String,
    /// Key id → the key, 32 bytes in base64 (standard or URL-safe, padded
    /// or not). Every listed key opens what it sealed; list a retired key
    /// until everything it sealed has been sealed again (key rotation,
    /// docs/operations.md).
    pub keys: BTreeMap<String, String>,
}

impl SecretsSettings {
    /// Whether any key is configured (none: secrets cannot be stored or
    /// opened, and what needs them says so).
    pub fn is_configured(&self) -> bool {
        !self.keys.is_empty()
    }
}

// By hand: the key material must never reach a log, whoever prints the
// settings (services log their configuration at start in debug).
impl std::fmt::Debug for SecretsSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let keys: BTreeMap<&str, &str> = self
            .keys
            .keys()
            .map(|id| (id.as_str(), "[redacted]"))
            .collect();
        f.debug_struct("SecretsSettings")
            .field("current_key_id", &self.current_key_id)
            .field("keys", &keys)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Deserialize, Default)]
    #[serde(default)]
    struct Sample {
        secrets: SecretsSettings,
    }

    #[test]
    fn keys_come_from_the_environment_by_lowercased_id_and_debug_hides_them() {
        // Only this test touches these variables.
        let key = "q0pWR1NVhLJkpbXvIpUO3i0c5WzQg3iyXH2i7Lq1P1c=";
        std::env::set_var("UPTIME_SECRETS__CURRENT_KEY_ID", "k2");
        std::env::set_var("UPTIME_SECRETS__KEYS__K1", key);
        std::env::set_var("UPTIME_SECRETS__KEYS__K2", "1234");
        let loaded: Result<Sample, _> = crate::load_from(None);
        std::env::remove_var("UPTIME_SECRETS__CURRENT_KEY_ID");
        std::env::remove_var("UPTIME_SECRETS__KEYS__K1");
        std::env::remove_var("UPTIME_SECRETS__KEYS__K2");
        let secrets = loaded.unwrap().secrets;

        assert_eq!(secrets.current_key_id, "k2");
        let ids: Vec<&str> = secrets.keys.keys().map(String::as_str).collect();
        assert_eq!(ids, ["k1", "k2"], "ids are lowercased");
        assert_eq!(secrets.keys["k1"], key);
        // A value that parses as a number still reads as text.
        assert_eq!(secrets.keys["k2"], "1234");
        assert!(secrets.is_configured());

        let shown = format!("{secrets:?}");
        assert!(!shown.contains(key), "{shown}");
        assert!(
            shown.contains("k1") && shown.contains("[redacted]"),
            "{shown}"
        );
        assert!(!SecretsSettings::default().is_configured());
    }
}
