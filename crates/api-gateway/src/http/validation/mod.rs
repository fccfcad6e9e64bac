//! Collecting field errors so one response names every problem at once, and
//! the JSON body extractor every handler uses.

use crate::http::error::{ApiError, FieldError};

mod json;
pub mod positions;
pub use json::{checked, Json, NUL_MESSAGE, TEXT_PATTERN};
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

/// Pagination of list endpoints: `?limit=1..=100` (default 50) and
/// `?cursor=` from the previous page's `next_cursor`.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct PageQuery {
    /// Items per page, 1 to 100 (default 50).
    #[param(minimum = 1, maximum = 100)]
    pub limit: Option<i64>,
    /// The `next_cursor` of the previous page; omit for the first page.
    pub cursor: Option<String>,
}

pub const DEFAULT_PAGE_SIZE: i64 = 50;
pub const MAX_PAGE_SIZE: i64 = 100;

/// A page request after validation: at most `limit` items with ids above `after_id`.
#[derive(Debug, Clone, Copy)]
pub struct Page {
    pub limit: i64,
    pub after_id: Option<i64>,
}

impl PageQuery {
    /// 400 `invalid query parameters` for a limit out of range or a cursor
    /// this API did not hand out.
    pub fn validate(&self) -> Result<Page, ApiError> {
        let mut problems = Vec::new();
        let limit = self.limit.unwrap_or(DEFAULT_PAGE_SIZE);
        if !(1..=MAX_PAGE_SIZE).contains(&limit) {
            problems.push(FieldError::new(
                "limit",
                format!("must be between 1 and {MAX_PAGE_SIZE}"),
            ));
        }
        let after_id = match self.cursor.as_deref() {
            None => None,
            Some(cursor) => match decode_cursor(cursor) {
                Some(id) => Some(id),
                None => {
                    problems.push(FieldError::new("cursor", "is not a cursor this API issued"));
                    None
                }
            },
        };
        if problems.is_empty() {
            Ok(Page { limit, after_id })
        } else {
            Err(ApiError::InvalidQuery(problems))
        }
    }
}

/// The opaque `next_cursor` after the item with id `last_id`. Clients must not
/// build cursors themselves; the encoding may change.
pub fn encode_cursor(last_id: i64) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("id:{last_id}"))
}

fn decode_cursor(cursor: &str) -> Option<i64> {
    use base64::Engine;
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(cursor)
        .ok()?;
    let digits = std::str::from_utf8(&bytes).ok()?.strip_prefix("id:")?;
    // Exactly what `cursor_pattern` documents: 1 to 18 plain digits.
    if !(1..=MAX_CURSOR_DIGITS).contains(&digits.len())
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse().ok()
}

/// Ids in cursors have at most this many digits (ids stay far below 10^18).
const MAX_CURSOR_DIGITS: usize = 18;

/// The regular expression (JSON Schema `pattern`) that matches exactly the
/// cursors [`decode_cursor`] accepts: unpadded base64url of `id:` and 1 to 18
/// digits. Base64 turns each 3 digits into 4 characters, the first two set by
/// the first digit, the third by the second, the fourth by the third.
pub fn cursor_pattern() -> String {
    const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let ch = |i: u8| char::from(B64[usize::from(i)]);
    let digits = b'0'..=b'9';
    let alternatives = |f: &dyn Fn(u8) -> String| {
        let mut all: Vec<String> = digits.clone().map(f).collect();
        all.dedup();
        format!("(?:{})", all.join("|"))
    };
    let first = alternatives(&|b| format!("{}{}", ch(b >> 2), ch(((b & 3) << 4) | (b'0' >> 4))));
    let second = alternatives(&|b| ch((b & 0xf) << 2).to_string());
    let third = alternatives(&|b| ch(b & 0x3f).to_string());
    let last_one = alternatives(&|b| format!("{}{}", ch(b >> 2), ch((b & 3) << 4)));
    let group = format!("{first}{second}{third}");
    let groups = MAX_CURSOR_DIGITS / 3;
    format!(
        "^aWQ6(?:{group}){{0,{}}}(?:{group}|{first}{second}|{last_one})$",
        groups - 1
    )
}

/// Splits `limit + 1` fetched rows into the page and its `next_cursor`: the
/// extra row only tells that another page exists.
pub fn paginate<T>(
    mut rows: Vec<T>,
    limit: i64,
    id_of: impl Fn(&T) -> i64,
) -> (Vec<T>, Option<String>) {
    let limit = usize::try_from(limit).unwrap_or(0);
    if rows.len() > limit {
        rows.truncate(limit);
        let next = rows.last().map(|r| encode_cursor(id_of(r)));
        (rows, next)
    } else {
        (rows, None)
    }
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

    #[test]
    fn cursors_round_trip_and_foreign_ones_are_refused() {
        assert_eq!(decode_cursor(&encode_cursor(42)), Some(42));
        assert_eq!(decode_cursor("42"), None);
        assert_eq!(decode_cursor("!!"), None);
        let page = PageQuery {
            limit: Some(0),
            cursor: Some("nope".into()),
        };
        match page.validate() {
            Err(ApiError::InvalidQuery(problems)) => assert_eq!(problems.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn cursors_have_1_to_18_plain_digits() {
        use base64::Engine;
        let enc = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        for bad in ["id:", "id:+5", "id:-5", "id: 5", "id:1234567890123456789"] {
            assert_eq!(decode_cursor(&enc(bad)), None, "{bad}");
        }
        assert_eq!(decode_cursor(&enc("id:007")), Some(7));
        assert_eq!(
            decode_cursor(&enc("id:999999999999999999")),
            Some(999_999_999_999_999_999)
        );
        let pattern = cursor_pattern();
        assert!(
            pattern.starts_with("^aWQ6(?:(?:MD|MT|Mj|Mz|ND|NT|Nj|Nz|OD|OT)"),
            "{pattern}"
        );
    }

    #[test]
    fn paginate_hands_out_a_cursor_only_when_more_rows_exist() {
        let (rows, next) = paginate(vec![1, 2, 3], 2, |r| *r);
        assert_eq!(rows, vec![1, 2]);
        assert_eq!(next.as_deref().and_then(decode_cursor), Some(2));
        let (rows, next) = paginate(vec![1, 2], 2, |r| *r);
        assert_eq!(rows, vec![1, 2]);
        assert!(next.is_none());
    }
}
