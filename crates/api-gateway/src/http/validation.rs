//! Collecting field errors so one response names every problem at once, and
//! the JSON body extractor every handler uses.

use crate::http::error::{ApiError, FieldError};

mod json;
mod keyset;
pub mod positions;
pub use json::{checked, Json, NUL_MESSAGE, TEXT_PATTERN};
pub(crate) use keyset::list_body;
pub use keyset::{
    cursor_pattern, encode_cursor, paginate, split, Key, Keyset, ListBody, Page, PageQuery,
    DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE,
};
mod targets;
pub use targets::{check_domain_name, parse_dns_server, parse_host, parse_host_port, Host};

#[derive(Default)]
pub struct Problems(Vec<FieldError>);

impl Problems {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn add(&mut self, field: &str, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    /// Adds a problem unless `value` lies in `range`.
    pub fn check_range<T: PartialOrd + std::fmt::Display>(
        &mut self,
        field: &str,
        value: T,
        range: std::ops::RangeInclusive<T>,
    ) {
        if !range.contains(&value) {
            self.add(
                field,
                format!("must be between {} and {}", range.start(), range.end()),
            );
        }
    }

    /// Adds a problem unless `value` has 1..=max characters.
    pub fn check_len(&mut self, field: &str, value: &str, max_chars: usize) {
        let n = value.chars().count();
        if n == 0 || value.trim().is_empty() {
            self.add(field, "must not be empty");
        } else if n > max_chars {
            self.add(field, format!("must be at most {max_chars} characters"));
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `Ok` when nothing was found, else 400 `invalid request body` with every problem.
    pub fn into_result(self) -> Result<(), ApiError> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(ApiError::InvalidBody(self.0))
        }
    }
}

/// Deserialises a field that may be absent (`None`), `null` (`Some(None)`) or
/// a value (`Some(Some(v))`), for PATCH bodies that can clear a field.
pub fn double_option<'de, T, D>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    T: serde::Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    use serde::Deserialize;
    Option::<T>::deserialize(deserializer).map(Some)
}

/// Longest URL accepted anywhere (monitor targets, webhook URLs).
pub const MAX_URL_CHARS: usize = 2048;

/// What a URL field accepts.
#[derive(Debug, Clone, Copy)]
pub struct UrlRules {
    /// Accept `http://` as well as `https://`.
    pub allow_http: bool,
    /// Accept hosts that are literal non-public addresses (loopback, private,
    /// link-local, metadata, ...: `uptime_netguard::classify`), or names that
    /// are internal by definition (`localhost`). Names that merely *resolve*
    /// to such addresses are refused later, after DNS resolution, by whoever
    /// connects.
    pub allow_private_hosts: bool,
}

impl Problems {
    /// Adds a problem unless `value` is an absolute URL that `rules` accept.
    /// URLs carrying credentials (`https://user:pass@host`) are refused: the
    /// URL is shown back in responses and sent along in alerts, so a password
    /// in it would leak.
    pub fn check_url(&mut self, field: &str, value: &str, rules: UrlRules) {
        if let Err(message) = check_url(value, rules) {
            self.add(field, message);
        }
    }
}

fn check_url(value: &str, rules: UrlRules) -> Result<(), String> {
    let schemes = if rules.allow_http {
        "an absolute http:// or https:// URL"
    } else {
        "an absolute https:// URL"
    };
    if value.chars().count() > MAX_URL_CHARS {
        return Err(format!("must be at most {MAX_URL_CHARS} characters"));
    }
    let url = url::Url::parse(value).map_err(|_| format!("must be {schemes}"))?;
    match url.scheme() {
        "https" => {}
        "http" if rules.allow_http => {}
        _ => return Err(format!("must be {schemes}")),
    }
    let host = match url.host() {
        Some(host) if !host.to_string().is_empty() => host,
        _ => return Err("must name a host".into()),
    };
    if !url.username().is_empty() || url.password().is_some() {
        return Err("must not contain a user name or password".into());
    }
    if !rules.allow_private_hosts {
        // The host as written (names are judged on their addresses later, by
        // whoever connects): the same classes the checker and the alert
        // channels refuse (uptime-netguard).
        if let Some(class) = uptime_netguard::classify_host(&host) {
            return Err(format!("must not point to {}", class.noun()));
        }
    }
    Ok(())
}

/// For PATCH fields that may be left out but not cleared: `null` is a
/// problem, absent is `None`, a value is `Some`.
pub fn not_null<T>(problems: &mut Problems, field: &str, value: Option<Option<T>>) -> Option<T> {
    match value {
        Some(None) => {
            problems.add(field, "must not be null");
            None
        }
        Some(Some(v)) => Some(v),
        None => None,
    }
}

/// The longest `?search=` of a list.
pub const MAX_SEARCH_LEN: usize = 100;

/// A list's `?search=` (a name contains it, without case): 1 to
/// [`MAX_SEARCH_LEN`] characters, no U+0000; else a problem in `problems`.
pub fn check_search<'a>(
    search: Option<&'a str>,
    problems: &mut Vec<FieldError>,
) -> Option<&'a str> {
    if search
        .is_some_and(|s| s.is_empty() || s.chars().count() > MAX_SEARCH_LEN || s.contains('\0'))
    {
        problems.push(FieldError::new(
            "search",
            format!("1 to {MAX_SEARCH_LEN} characters"),
        ));
    }
    search
}

#[cfg(test)]
mod tests {
    use super::*;

    const STRICT: UrlRules = UrlRules {
        allow_http: false,
        allow_private_hosts: false,
    };
    const LAX: UrlRules = UrlRules {
        allow_http: true,
        allow_private_hosts: true,
    };

    #[test]
    fn urls_need_an_allowed_scheme_and_a_host() {
        assert!(check_url("https://example.com/hook", STRICT).is_ok());
        assert!(check_url("http://example.com/hook", STRICT).is_err());
        assert!(check_url("http://example.com/hook", LAX).is_ok());
        for bad in [
            "ftp://example.com",
            "example.com",
            "/relative",
            "https://",
            "mailto:a@b.c",
            "file:///etc/passwd",
        ] {
            assert!(check_url(bad, LAX).is_err(), "{bad}");
        }
        assert!(check_url(&format!("https://e.com/{}", "a".repeat(MAX_URL_CHARS)), LAX).is_err());
    }

    #[test]
    fn credentials_in_urls_are_refused() {
        assert!(check_url("https://user:pw@example.com/", LAX).is_err());
        assert!(check_url("https://user@example.com/", LAX).is_err());
    }

    #[test]
    fn literal_private_hosts_are_refused_unless_allowed() {
        for host in [
            "127.0.0.1",
            "localhost",
            "api.localhost",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.100.100.200",
            "0.0.0.0",
            "[::1]",
            "[fd00:ec2::254]",
            "[fe80::1]",
            "[::ffff:127.0.0.1]",
            "[64:ff9b::a00:1]",
            "2130706433",
            "metadata.google.internal",
            // The checker's classes: site-local, 6to4, IPv4-compatible,
            // Teredo forms of internal addresses, documentation, benchmarking.
            "[fec0::1]",
            "[2002:7f00:1::]",
            "[::127.0.0.1]",
            "[2001:0:4136:e378:8000:63bf:80ff:fffe]",
            "192.0.2.10",
            "[2001:2::1]",
        ] {
            let url = format!("https://{host}/x");
            assert!(check_url(&url, STRICT).is_err(), "{url}");
            assert!(check_url(&url, LAX).is_ok(), "{url}");
        }
        assert_eq!(
            check_url("https://[64:ff9b::a00:1]/", STRICT).unwrap_err(),
            "must not point to a private address"
        );
        for host in ["93.184.216.34", "[2606:2800:220:1::1]", "example.com"] {
            assert!(
                check_url(&format!("https://{host}/"), STRICT).is_ok(),
                "{host}"
            );
        }
    }
}
