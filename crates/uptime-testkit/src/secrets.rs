//! The fixed key every test harness seals and opens basic-auth passwords
//! with, so a password sealed by a test's api-gateway opens in a
//! test's checker. Never a key for anything but tests.

use uptime_config::SecretsSettings;
use uptime_secrets::Keyring;

/// The test key's id.
pub const TEST_KEY_ID: &str = "test";
/// Bytes 1..=32, in base64.
pub const TEST_KEY: &str = "AQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRobHB0eHyA=";

/// `[secrets]` with the test key as the current one.
pub fn test_secrets() -> SecretsSettings {
    SecretsSettings {
        current_key_id: TEST_KEY_ID.into(),
        keys: [(TEST_KEY_ID.to_string(), TEST_KEY.to_string())].into(),
    }
}

/// The keyring of [`test_secrets`].
pub fn test_keyring() -> Keyring {
    Keyring::from_settings(&test_secrets())
        .expect("the test key is valid")
        .expect("the test key is configured")
}
