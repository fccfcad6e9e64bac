//! The on-call and chat providers: one module per provider, each turning an
//! alert into the requests the provider documents (rendering only, unit
//! tested); [`super::http`] sends them through the screened client.
//!
//! Text from users and targets (monitor names, targets, errors) is made
//! inert in each provider's own markup: HTML-escaped for Telegram,
//! markdown-escaped for Discord (whose mentions are switched off), and cut
//! to each documented field length.

pub(crate) mod discord;
pub(crate) mod ntfy;
pub(crate) mod opsgenie;
pub(crate) mod pagerduty;
pub(crate) mod pushover;
pub(crate) mod teams;
pub(crate) mod telegram;

use crate::error::SendError;
use crate::event::{AlertEvent, EventType};
use serde::{Deserialize, Serialize};
use uptime_config::AlertProviderSettings;

/// A contact's provider options that are not credentials
/// (`alert_contacts.options`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderOptions {
    /// Opsgenie: the instance the account lives on (default `us`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<OpsgenieRegion>,
    /// ntfy: the server's base URL (default: `alert_providers.ntfy_url`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

impl ProviderOptions {
    /// The options stored as JSON; unknown or malformed ones are an error
    /// (the API writes only valid ones).
    pub fn from_json(value: &serde_json::Value) -> Result<Self, SendError> {
        serde_json::from_value(value.clone())
            .map_err(|e| SendError::permanent(format!("the contact's options are invalid: {e}")))
    }

    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("options always serialise")
    }
}

/// Opsgenie's two instances.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OpsgenieRegion {
    Us,
    Eu,
}

/// What a provider contact is sent to and with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Target<'a> {
    /// The contact's `value`: a webhook URL (Teams, Discord), a chat id
    /// (Telegram), a topic (ntfy), a user key (Pushover); unused by
    /// PagerDuty and Opsgenie.
    pub value: &'a str,
    /// The opened credential.
    pub secret: Option<&'a str>,
    pub options: &'a ProviderOptions,
    pub urls: &'a AlertProviderSettings,
}

impl<'a> Target<'a> {
    /// The credential, or a permanent failure naming it.
    fn secret(&self, what: &str) -> Result<&'a str, SendError> {
        self.secret
            .filter(|s| !s.is_empty())
            .ok_or_else(|| SendError::permanent(format!("the contact has no {what}")))
    }
}

/// One HTTP request to a provider: a JSON POST.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProviderRequest {
    pub url: String,
    /// Header name and value; values may be credentials and are never logged.
    pub headers: Vec<(&'static str, String)>,
    pub body: serde_json::Value,
}

impl ProviderRequest {
    fn post(url: String, body: serde_json::Value) -> Self {
        Self {
            url,
            headers: Vec::new(),
            body,
        }
    }
}

/// The one request of a provider whose contact `value` is its webhook's
/// URL (Discord, Teams): `body` posted there.
pub(crate) fn webhook_post(
    to: Target<'_>,
    body: serde_json::Value,
) -> Result<Vec<ProviderRequest>, SendError> {
    Ok(vec![ProviderRequest::post(to.value.to_string(), body)])
}

/// `base` and `path` joined by exactly one `/`.
pub(crate) fn join(base: &str, path: &str) -> String {
    format!(
        "{}/{}",
        base.trim_end_matches('/'),
        path.trim_start_matches('/')
    )
}

/// `text` cut to at most `max` characters (`…` marking a cut).
pub(crate) fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// `text` with a backslash before each of `marks`: how a chat provider's
/// Markdown is made inert, each provider naming the marks its dialect reads.
pub(crate) fn backslashed(text: &str, marks: &[char]) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if marks.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// `text` cut to at most `max` bytes of UTF-8, on a character boundary.
pub(crate) fn cut_bytes(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max.saturating_sub('…'.len_utf8());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// The alert's facts as `label: value` lines, each on one line.
pub(crate) fn fact_lines(event: &AlertEvent) -> Vec<String> {
    crate::render::facts(event)
        .into_iter()
        .map(|(label, value)| format!("{label}: {}", crate::render::bounded(&value, 1000)))
        .collect()
}

/// The monitor's target when it is a web address, for a link.
pub(crate) fn target_link(event: &AlertEvent) -> Option<&str> {
    event
        .monitor
        .as_ref()
        .and_then(|m| m.target.as_deref())
        .filter(|t| t.starts_with("https://") || t.starts_with("http://"))
}

/// Who the alert is about, for a provider's `source`/`entity`.
pub(crate) fn source(event: &AlertEvent) -> String {
    match &event.monitor {
        Some(m) => m.target.clone().unwrap_or_else(|| m.name.clone()),
        None => "uptime".to_string(),
    }
}

/// The state an alert reports, for colours, priorities and tags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    Down,
    Up,
    Degraded,
    Certificate,
    Test,
}

pub(crate) fn shown(event: &AlertEvent) -> Shown {
    match event.event {
        EventType::MonitorDown => Shown::Down,
        EventType::MonitorUp => Shown::Up,
        EventType::MonitorDegraded => Shown::Degraded,
        EventType::SslExpiring => Shown::Certificate,
        EventType::Test => Shown::Test,
    }
}

/// What providers' tests send to.
#[cfg(test)]
pub(crate) mod testing {
    use super::{ProviderOptions, Target};
    use std::sync::LazyLock;
    use uptime_config::AlertProviderSettings;

    static NO_OPTIONS: LazyLock<ProviderOptions> = LazyLock::new(ProviderOptions::default);
    static DEFAULT_URLS: LazyLock<AlertProviderSettings> =
        LazyLock::new(AlertProviderSettings::default);

    /// A contact whose `value` is a webhook's URL, without a credential or
    /// options, at the default provider URLs.
    pub(crate) fn webhook(url: &'static str) -> Target<'static> {
        Target {
            value: url,
            secret: None,
            options: &NO_OPTIONS,
            urls: &DEFAULT_URLS,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_keep_to_characters_and_bytes() {
        assert_eq!(cut("abcdef", 4), "abc…");
        assert_eq!(cut("abc", 4), "abc");
        let cut_text = cut_bytes("ééééé", 7);
        assert!(cut_text.len() <= 7, "{cut_text}");
        assert!(cut_text.ends_with('…'));
        assert_eq!(join("https://x/", "/v2/enqueue"), "https://x/v2/enqueue");
    }

    #[test]
    fn options_refuse_what_they_do_not_know() {
        let parsed = ProviderOptions::from_json(&serde_json::json!({"region": "eu"})).unwrap();
        assert_eq!(parsed.region, Some(OpsgenieRegion::Eu));
        assert!(ProviderOptions::from_json(&serde_json::json!({"colour": 1})).is_err());
        assert_eq!(ProviderOptions::default().to_json(), serde_json::json!({}));
    }
}
