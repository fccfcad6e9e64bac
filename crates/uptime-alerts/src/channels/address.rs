//! Addresses that are credentials. A Slack incoming webhook, a Teams
//! Workflows trigger and a Discord webhook are reached by a URL that is
//! all it takes to post into the channel: whoever reads it can post as
//! the service. Such an address is kept like the contacts' other
//! credentials (sealed in `alert_contacts.secret_sealed`, opened only to
//! send) and shown redacted ([`redact`]). A generic webhook's URL is an
//! address only: its receiver authenticates each request by its signature
//! (`signing_secret`), so it is shown as given.

use super::{Channel, Destination, ProviderOptions};

/// What stands for the credential in a redacted address.
pub const MASK: &str = "[redacted]";

impl Channel {
    /// Whether the contact's address (`value`) is itself a credential.
    pub fn address_is_credential(self) -> bool {
        matches!(self, Channel::Slack | Channel::Teams | Channel::Discord)
    }
}

/// `url` with its credential replaced by [`MASK`]: the value of a `sig`
/// query parameter when there is one (a Teams Workflows URL), else the
/// last path segment (the token of a Slack or Discord webhook); user info
/// and fragment dropped. Scheme, host, port, the rest of the path and the
/// other query parameters stay, so one can still tell which webhook it is.
/// Something that is not a URL becomes the mask alone. Redacting a
/// redacted address changes nothing.
pub fn redact(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return MASK.to_string();
    };
    let _ = parsed.set_username("");
    let _ = parsed.set_password(None);
    parsed.set_fragment(None);
    // The query as written (its encoding kept), pair by pair.
    let pairs: Vec<&str> = parsed
        .query()
        .map(|q| q.split('&').filter(|p| !p.is_empty()).collect())
        .unwrap_or_default();
    let is_sig = |pair: &&str| pair.split('=').next() == Some("sig");
    let mut shown = format!(
        "{}://{}",
        parsed.scheme(),
        parsed.host_str().unwrap_or_default()
    );
    if let Some(port) = parsed.port() {
        shown.push_str(&format!(":{port}"));
    }
    let query: Vec<String> = if pairs.iter().any(is_sig) {
        shown.push_str(parsed.path());
        pairs
            .iter()
            .map(|p| {
                if is_sig(p) {
                    format!("sig={MASK}")
                } else {
                    p.to_string()
                }
            })
            .collect()
    } else {
        match parsed.path().trim_end_matches('/').rsplit_once('/') {
            Some((head, _)) => shown.push_str(&format!("{head}/{MASK}")),
            None => shown.push_str(&format!("/{MASK}")),
        }
        pairs.iter().map(|p| p.to_string()).collect()
    };
    if !query.is_empty() {
        shown.push('?');
        shown.push_str(&query.join("&"));
    }
    shown
}

/// Whether `value` is (or holds) a redacted address rather than one to
/// send to.
pub fn is_redacted(value: &str) -> bool {
    value.contains(MASK)
}

impl<'a> Destination<'a> {
    /// Where a contact's deliveries go: its stored address (`value`), its
    /// webhook signing secret and its sealed credential, opened
    /// (`secret`). For a channel whose address is a credential, the opened
    /// credential is the address (`value` holds its redacted form; a row
    /// stored before addresses were sealed still holds it in `value`).
    pub fn of_contact(
        channel: Channel,
        value: &'a str,
        signing_secret: Option<&'a str>,
        secret: Option<&'a str>,
        options: &'a ProviderOptions,
    ) -> Self {
        let (value, secret) = match (channel.address_is_credential(), secret) {
            (true, Some(address)) => (address, None),
            _ => (value, secret),
        };
        Self {
            channel,
            value,
            signing_secret,
            secret,
            options,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_credential_of_each_kind_is_masked_and_the_rest_kept() {
        assert_eq!(
            redact("https://hooks.slack.com/services/T0001/B0002/abcDEF123"),
            "https://hooks.slack.com/services/T0001/B0002/[redacted]"
        );
        assert_eq!(
            redact("https://discord.com/api/webhooks/123456/tok-EN_x"),
            "https://discord.com/api/webhooks/123456/[redacted]"
        );
        assert_eq!(
            redact(
                "https://prod-01.westeurope.logic.azure.com:443/workflows/abc/triggers/manual/\
                 paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=S3cr3t"
            ),
            "https://prod-01.westeurope.logic.azure.com/workflows/abc/triggers/manual/paths/\
             invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=[redacted]"
        );
        assert_eq!(
            redact("https://user:pw@relay.example:8443/hook/tok#frag"),
            "https://relay.example:8443/hook/[redacted]"
        );
        assert_eq!(redact("not a url"), MASK);
    }

    #[test]
    fn redacting_twice_is_redacting_once_and_the_mask_is_recognised() {
        for url in [
            "https://hooks.slack.com/services/T0001/B0002/abcDEF123",
            "https://x.logic.azure.com/workflows/a/triggers/manual/paths/invoke?sv=1.0&sig=S",
        ] {
            let once = redact(url);
            assert!(is_redacted(&once) && !is_redacted(url), "{once}");
            assert_eq!(redact(&once), once);
        }
    }

    #[test]
    fn the_opened_credential_is_the_address_of_webhook_urls_only() {
        let options = ProviderOptions::default();
        let slack = Destination::of_contact(
            Channel::Slack,
            "https://hooks.slack.com/services/T/B/[redacted]",
            None,
            Some("https://hooks.slack.com/services/T/B/real"),
            &options,
        );
        assert_eq!(
            (slack.value, slack.secret),
            ("https://hooks.slack.com/services/T/B/real", None)
        );
        let legacy = Destination::of_contact(
            Channel::Discord,
            "https://discord.com/api/webhooks/1/t",
            None,
            None,
            &options,
        );
        assert_eq!(legacy.value, "https://discord.com/api/webhooks/1/t");
        let telegram =
            Destination::of_contact(Channel::Telegram, "@ops_team", None, Some("1:k"), &options);
        assert_eq!(
            (telegram.value, telegram.secret),
            ("@ops_team", Some("1:k"))
        );
    }
}
