//! What each contact type takes: the shape of its `value`, whether it takes
//! a credential (`secret`) and which, and the provider options (`region`,
//! `server`). Every refusal names its field, so a bad contact is a 400 that
//! says what to fix, never a delivery that fails later.

use super::contact_type::ContactType;
use crate::error::ApiError;
use crate::validation::{Problems, UrlRules};
use base64::Engine;
use rand::RngCore;

pub(crate) const MAX_NAME_CHARS: usize = 200;
const MAX_EMAIL_CHARS: usize = 254;
const SIGNING_SECRET_PREFIX: &str = "whsec_";
const MAX_SECRET_CHARS: usize = 256;

/// Whether contacts of `kind` have an address in `value` (PagerDuty and
/// Opsgenie are reached by their credential alone).
pub(crate) fn takes_value(kind: ContactType) -> bool {
    !matches!(kind, ContactType::PagerDuty | ContactType::Opsgenie)
}

/// The credential a type takes: what it is called, and whether it is required.
pub(crate) fn secret_kind(kind: ContactType) -> Option<(&'static str, bool)> {
    match kind {
        ContactType::PagerDuty => Some(("routing key", true)),
        ContactType::Opsgenie => Some(("API key", true)),
        ContactType::Telegram => Some(("bot token", true)),
        ContactType::Pushover => Some(("application token", true)),
        ContactType::Ntfy => Some(("access token", false)),
        ContactType::Email
        | ContactType::Slack
        | ContactType::Webhook
        | ContactType::Teams
        | ContactType::Discord => None,
    }
}

pub(crate) fn takes_secret(kind: ContactType) -> bool {
    secret_kind(kind).is_some()
}

/// Whether the contact's address (`value`) is a credential: a Slack, Teams
/// or Discord webhook URL, which whoever reads it can post with
/// (`uptime_alerts::address`). It is write-only like `secret`: sealed into
/// the credential column and answered redacted.
pub(crate) fn address_is_credential(kind: ContactType) -> bool {
    kind.channel().address_is_credential()
}

/// `value` as responses show it: redacted when it is a credential.
pub(crate) fn shown_value(kind: ContactType, stored: &str) -> String {
    if address_is_credential(kind) {
        uptime_alerts::address::redact(stored)
    } else {
        stored.to_string()
    }
}

/// The `value` and `secret_sealed` columns of a contact whose address is
/// the credential `url`: the URL sealed, the value column holding its
/// redaction (what reads show; nothing is opened to answer them). Without
/// a secrets key it is kept as given, as before addresses were sealed (and
/// sealed by the gateway's first start with a key: `crate::sealing`).
pub(crate) fn stored_address(
    keyring: Option<&uptime_secrets::Keyring>,
    url: String,
) -> Result<(String, Option<String>), ApiError> {
    let Some(keyring) = keyring else {
        return Ok((url, None));
    };
    let url = uptime_secrets::Zeroizing::new(url);
    let sealed = keyring
        .seal(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, &url)
        .map_err(|e| ApiError::Internal(format!("sealing a contact's address: {e}")))?;
    Ok((uptime_alerts::address::redact(&url), Some(sealed)))
}

/// Adds a problem unless `value` suits a contact of type `kind`.
pub(crate) fn check_value(
    problems: &mut Problems,
    kind: ContactType,
    value: &str,
    allow_private: bool,
) {
    let rules = UrlRules {
        allow_http: allow_private,
        allow_private_hosts: allow_private,
    };
    if address_is_credential(kind) && uptime_alerts::address::is_redacted(value) {
        problems.add(
            "value",
            "is a redacted URL, as responses show it: give the whole URL (or, to keep the \
             stored one, leave value out or repeat the redacted form unchanged)",
        );
        return;
    }
    let refusal = match kind {
        ContactType::Email => check_email(value).err(),
        ContactType::Slack | ContactType::Webhook | ContactType::Teams => {
            problems.check_url("value", value, rules);
            None
        }
        ContactType::Discord => {
            problems.check_url("value", value, rules);
            (!is_discord_webhook(value)).then(|| {
                "must be a Discord webhook URL: https://discord.com/api/webhooks/{id}/{token}"
                    .to_string()
            })
        }
        ContactType::Telegram => (!is_telegram_chat(value)).then(|| {
            "must be a Telegram chat id: a number such as -1001234567890, or @channelname".into()
        }),
        ContactType::Ntfy => (!is_word(value, 1, 64))
            .then(|| "must be an ntfy topic: 1 to 64 of A-Z, a-z, 0-9, '_' and '-'".into()),
        ContactType::Pushover => (!is_alphanumeric(value, 30))
            .then(|| "must be a Pushover user or group key: 30 letters and digits".into()),
        ContactType::PagerDuty | ContactType::Opsgenie => {
            Some("is not taken by this type: its credential goes in `secret`".into())
        }
    };
    if let Some(message) = refusal {
        problems.add("value", message);
    }
}

/// Adds a problem unless `secret` is a credential of the kind `kind` takes.
pub(crate) fn check_secret(problems: &mut Problems, kind: ContactType, secret: &str) {
    let Some((what, _)) = secret_kind(kind) else {
        problems.add(
            "secret",
            format!("{} contacts take no secret", kind.as_str()),
        );
        return;
    };
    let shaped = match kind {
        ContactType::PagerDuty => is_alphanumeric(secret, 32),
        ContactType::Pushover => is_alphanumeric(secret, 30),
        ContactType::Opsgenie => is_word(secret, 1, 128) && secret.bytes().all(|b| b != b'_'),
        ContactType::Telegram => secret.split_once(':').is_some_and(|(bot, key)| {
            !bot.is_empty()
                && bot.len() <= 20
                && bot.bytes().all(|b| b.is_ascii_digit())
                && is_word(key, 1, 100)
        }),
        _ => {
            !secret.is_empty()
                && secret.chars().count() <= MAX_SECRET_CHARS
                && secret.bytes().all(|b| b.is_ascii_graphic())
        }
    };
    if !shaped {
        let expected = match kind {
            ContactType::PagerDuty => "32 letters and digits (the integration's key)",
            ContactType::Pushover => "30 letters and digits",
            ContactType::Opsgenie => "letters, digits and '-' (the API integration's key)",
            ContactType::Telegram => "<bot id>:<key>, as BotFather gives it",
            _ => "at most 256 printable characters without spaces",
        };
        problems.add("secret", format!("must be a {what}: {expected}"));
    }
}

/// Adds a problem unless `server` is a URL an ntfy server may have.
pub(crate) fn check_server(problems: &mut Problems, server: &str, allow_private: bool) {
    problems.check_url(
        "server",
        server,
        UrlRules {
            allow_http: allow_private,
            allow_private_hosts: allow_private,
        },
    );
}

fn is_word(text: &str, min: usize, max: usize) -> bool {
    (min..=max).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn is_alphanumeric(text: &str, len: usize) -> bool {
    text.len() == len && text.bytes().all(|b| b.is_ascii_alphanumeric())
}

/// A numeric chat id, or a public channel's `@username` (5 to 32 characters).
fn is_telegram_chat(value: &str) -> bool {
    if let Some(name) = value.strip_prefix('@') {
        return (5..=32).contains(&name.len())
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
    }
    let digits = value.strip_prefix('-').unwrap_or(value);
    (1..=20).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `.../api/webhooks/{numeric id}/{token}` (Discord's own host or a relay's).
fn is_discord_webhook(value: &str) -> bool {
    let Ok(url) = url::Url::parse(value) else {
        return false;
    };
    let segments: Vec<&str> = url.path_segments().map(|s| s.collect()).unwrap_or_default();
    match segments.as_slice() {
        [.., "api", "webhooks", id, token] => {
            !id.is_empty() && id.bytes().all(|b| b.is_ascii_digit()) && !token.is_empty()
        }
        _ => false,
    }
}

/// A plausible address: one `@`, a non-empty local part, a domain with a dot
/// (not at either end, never doubled), no whitespace or control characters,
/// at most 254 characters. Whether it exists is what verification finds out.
pub(crate) fn check_email(value: &str) -> Result<(), String> {
    const PLAUSIBLE: &str = "must be an email address like name@example.com";
    if value.chars().count() > MAX_EMAIL_CHARS {
        return Err(format!("must be at most {MAX_EMAIL_CHARS} characters"));
    }
    if value.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(PLAUSIBLE.into());
    }
    let Some((local, domain)) = value.split_once('@') else {
        return Err(PLAUSIBLE.into());
    };
    let domain_ok = domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
        && !domain.contains('@');
    if local.is_empty() || !domain_ok {
        return Err(PLAUSIBLE.into());
    }
    Ok(())
}

/// `whsec_` + standard base64 of 32 bytes from the OS's CSPRNG.
pub(crate) fn new_signing_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!(
        "{SIGNING_SECRET_PREFIX}{}",
        base64::engine::general_purpose::STANDARD.encode(bytes)
    )
}

/// `plain` sealed for `alert_contacts.secret_sealed` (400 naming `secret`
/// when this deployment has no key).
pub(crate) fn seal_secret(
    keyring: Option<&uptime_secrets::Keyring>,
    plain: String,
) -> Result<String, ApiError> {
    let plain = uptime_secrets::Zeroizing::new(plain);
    let keyring = keyring.ok_or_else(|| {
        ApiError::invalid_field(
            "secret",
            "cannot be stored: this deployment has no secrets key configured \
             (secrets.keys); ask its operator",
        )
    })?;
    keyring
        .seal(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, &plain)
        .map_err(|e| ApiError::Internal(format!("sealing a contact's secret: {e}")))
}

/// The seal to store for a credential `given` over the `stored` seal: the
/// stored seal when it holds the same credential (so restating it changes
/// nothing: a new seal of the same text would differ), else a new seal.
/// Every write that takes a credential goes through this.
pub(crate) fn restated_or_sealed(
    keyring: Option<&uptime_secrets::Keyring>,
    stored: Option<&str>,
    given: String,
) -> Result<String, ApiError> {
    match stored {
        Some(sealed) if opens_to(keyring, sealed, &given) => Ok(sealed.to_string()),
        _ => seal_secret(keyring, given),
    }
}

/// Whether `sealed` holds `plain` (never when it cannot be opened here).
pub(crate) fn opens_to(
    keyring: Option<&uptime_secrets::Keyring>,
    sealed: &str,
    plain: &str,
) -> bool {
    keyring.is_some_and(|k| k.holds(uptime_secrets::Purpose::ALERT_CONTACT_SECRET, sealed, plain))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plausible_email_addresses() {
        for ok in ["a@b.co", "first.last+tag@mail.example.org"] {
            assert!(check_email(ok).is_ok(), "{ok}");
        }
        let long = format!("{}@example.com", "a".repeat(243));
        assert_eq!(long.len(), 255);
        for bad in [
            "",
            "plain",
            "@example.com",
            "a@",
            "a@localhost",
            "a@b@c.com",
            "a b@c.com",
            "a@.com",
            "a@com.",
            "a@b..com",
            long.as_str(),
        ] {
            assert!(check_email(bad).is_err(), "{bad}");
        }
        assert!(check_email(&long[1..]).is_ok(), "254 characters are fine");
    }

    #[test]
    fn signing_secrets_are_whsec_base64_of_32_bytes() {
        let secret = new_signing_secret();
        let raw = secret.strip_prefix("whsec_").expect("prefix");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(raw)
            .expect("standard base64");
        assert_eq!(bytes.len(), 32);
        assert_ne!(secret, new_signing_secret());
    }

    #[test]
    fn provider_addresses_and_credentials_have_their_shapes() {
        let problems_of = |kind, value: &str, secret: Option<&str>| {
            let mut p = Problems::new();
            check_value(&mut p, kind, value, false);
            if let Some(secret) = secret {
                check_secret(&mut p, kind, secret);
            }
            p.into_result().err().map(|e| format!("{e:?}"))
        };
        assert_eq!(
            problems_of(ContactType::Telegram, "-1001234567890", Some("123:AAH-x_y")),
            None
        );
        assert_eq!(problems_of(ContactType::Telegram, "@ops_team", None), None);
        assert!(problems_of(ContactType::Telegram, "ops", None).is_some());
        assert!(problems_of(ContactType::Telegram, "1", Some("123/../x")).is_some());
        assert_eq!(
            problems_of(ContactType::Ntfy, "shop-alerts", Some("tk_x")),
            None
        );
        assert!(problems_of(ContactType::Ntfy, "a/b", None).is_some());
        assert!(problems_of(ContactType::Ntfy, "ok", Some("has space")).is_some());
        let user = "u".repeat(30);
        assert_eq!(
            problems_of(ContactType::Pushover, &user, Some(&"a".repeat(30))),
            None
        );
        assert!(problems_of(ContactType::Pushover, "short", None).is_some());
        assert_eq!(
            problems_of(
                ContactType::Discord,
                "https://discord.com/api/webhooks/123/abc-DEF",
                None
            ),
            None
        );
        assert!(problems_of(ContactType::Discord, "https://discord.com/other", None).is_some());
        let mut p = Problems::new();
        check_secret(&mut p, ContactType::PagerDuty, &"k".repeat(32));
        check_secret(
            &mut p,
            ContactType::Opsgenie,
            "4f1e2d3c-0000-1111-2222-333344445555",
        );
        assert!(p.into_result().is_ok());
        let mut p = Problems::new();
        check_secret(&mut p, ContactType::Slack, "x");
        assert!(p.into_result().is_err());
    }
}
