//! Where the alert providers' APIs are. The defaults are the providers' own
//! public endpoints; an operator points them elsewhere for a regional or
//! self-hosted endpoint (or a relay), and tests point them at loopback
//! receivers. Teams, Discord and Slack contacts carry their whole webhook
//! URL, so they have no entry here.

use serde::Deserialize;

/// `[alert_providers]`, read by the notifier and the api-gateway (test alerts).
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct AlertProviderSettings {
    /// PagerDuty Events API v2 (`POST {pagerduty_url}/v2/enqueue`).
    pub pagerduty_url: String,
    /// Opsgenie Alert API, US instance (`POST {opsgenie_us_url}/v2/alerts`).
    pub opsgenie_us_url: String,
    /// Opsgenie Alert API, EU instance.
    pub opsgenie_eu_url: String,
    /// Telegram Bot API (`POST {telegram_url}/bot<token>/sendMessage`).
    pub telegram_url: String,
    /// The ntfy server of contacts that name none (`POST {ntfy_url}/<topic>`).
    pub ntfy_url: String,
    /// Pushover (`POST {pushover_url}/1/messages.json`).
    pub pushover_url: String,
}

impl Default for AlertProviderSettings {
    fn default() -> Self {
        Self {
            pagerduty_url: "https://events.pagerduty.com".into(),
            opsgenie_us_url: "https://api.opsgenie.com".into(),
            opsgenie_eu_url: "https://api.eu.opsgenie.com".into(),
            telegram_url: "https://api.telegram.org".into(),
            ntfy_url: "https://ntfy.sh".into(),
            pushover_url: "https://api.pushover.net".into(),
        }
    }
}

impl AlertProviderSettings {
    /// Every provider at `base` (a test's loopback receiver).
    pub fn all_at(base: &str) -> Self {
        Self {
            pagerduty_url: base.into(),
            opsgenie_us_url: base.into(),
            opsgenie_eu_url: base.into(),
            telegram_url: base.into(),
            ntfy_url: base.into(),
            pushover_url: base.into(),
        }
    }
}
