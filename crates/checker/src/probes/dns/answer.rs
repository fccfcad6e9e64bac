//! The pure part of a dns check: answer records and expected values in one
//! normalised textual form, and the comparison of the two.
//!
//! The forms compared, by record type:
//!
//! - A, AAAA: the address, parsed, so `::1` equals `0:0::1`. An expected value
//!   that is not an address of the query's family is a configuration error.
//! - CNAME, NS: the name in ASCII (an internationalised expected name is
//!   converted to its `xn--` form), compared case-insensitively (ASCII only,
//!   as DNS does, RFC 4343) and with or without the trailing dot.
//! - MX: `<preference> <exchange>` (`10 mail.example.com`), or just
//!   `<exchange>`, which matches that exchange at any preference: preferences
//!   are often an operator's detail, the mail host is what a user watches.
//!   The exchange is compared like a CNAME's name.
//! - TXT: the record's strings joined without a separator, as SPF and DKIM
//!   read them (RFC 7208 §3.3), compared exactly (case and spaces matter).
//!
//! An expected value is in the answer when one record of the queried type
//! has it; every expected value must be. What a failure may show of the
//! answer is [`Screen`]'s to say.

use super::screen::{Screen, MAX_ADDRESS_CHARS};
use hickory_resolver::proto::rr::Name;
use std::fmt;
use std::net::IpAddr;
use uptime_contracts::DnsRecordType;

/// Values a failure message lists at most, of the answer and of the missing
/// expected values each; the rest are counted.
const MAX_LISTED: usize = 10;
/// Characters of one value a failure message shows at most (TXT records can
/// be kilobytes long).
pub(super) const MAX_VALUE_CHARS: usize = 100;

/// One answer record's value, normalised.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    Addr(IpAddr),
    /// See [`normalise_name`].
    Name(String),
    Mx {
        preference: u16,
        exchange: String,
    },
    Txt(String),
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Addr(ip) => write!(f, "{ip}"),
            Value::Name(name) => f.write_str(name),
            Value::Mx {
                preference,
                exchange,
            } => write!(f, "{preference} {exchange}"),
            Value::Txt(text) => write!(f, "{text:?}"),
        }
    }
}

impl Value {
    /// The address of an A or AAAA record's value.
    pub fn address(&self) -> Option<IpAddr> {
        match self {
            Value::Addr(ip) => Some(*ip),
            _ => None,
        }
    }
}

/// An expected value, parsed for the query's record type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expected {
    Addr(IpAddr),
    Name(String),
    /// `preference: None` matches the exchange at any preference.
    Mx {
        preference: Option<u16>,
        exchange: String,
    },
    Txt(String),
}

impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expected::Addr(ip) => write!(f, "{ip}"),
            Expected::Name(name) => f.write_str(name),
            Expected::Mx {
                preference: Some(preference),
                exchange,
            } => write!(f, "{preference} {exchange}"),
            Expected::Mx {
                preference: None,
                exchange,
            } => f.write_str(exchange),
            Expected::Txt(text) => write!(f, "{text:?}"),
        }
    }
}

impl Expected {
    /// Parses `raw` as an expected value of a `record_type` answer.
    pub fn parse(record_type: DnsRecordType, raw: &str) -> Result<Self, InvalidExpected> {
        let invalid = |wanted: &'static str| InvalidExpected {
            value: bounded(raw),
            record_type,
            wanted,
        };
        let trimmed = raw.trim();
        match record_type {
            DnsRecordType::A => trimmed
                .parse::<std::net::Ipv4Addr>()
                .map(|ip| Expected::Addr(IpAddr::V4(ip)))
                .map_err(|_| invalid("an IPv4 address")),
            DnsRecordType::Aaaa => trimmed
                .parse::<std::net::Ipv6Addr>()
                .map(|ip| Expected::Addr(IpAddr::V6(ip)))
                .map_err(|_| invalid("an IPv6 address")),
            DnsRecordType::Cname | DnsRecordType::Ns => {
                if trimmed.is_empty() {
                    return Err(invalid("a name"));
                }
                Ok(Expected::Name(normalise_name(trimmed)))
            }
            DnsRecordType::Mx => {
                let parts: Vec<&str> = trimmed.split_whitespace().collect();
                match parts.as_slice() {
                    [exchange] => Ok(Expected::Mx {
                        preference: None,
                        exchange: normalise_name(exchange),
                    }),
                    [preference, exchange] => match preference.parse::<u16>() {
                        Ok(preference) => Ok(Expected::Mx {
                            preference: Some(preference),
                            exchange: normalise_name(exchange),
                        }),
                        Err(_) => Err(invalid("\"<preference> <exchange>\" or \"<exchange>\"")),
                    },
                    _ => Err(invalid("\"<preference> <exchange>\" or \"<exchange>\"")),
                }
            }
            // Spaces are part of a TXT record: compared as written.
            DnsRecordType::Txt => Ok(Expected::Txt(raw.to_string())),
        }
    }

    /// Whether `value` is this expected value.
    pub fn matches(&self, value: &Value) -> bool {
        match (self, value) {
            (Expected::Addr(a), Value::Addr(b)) => a == b,
            (Expected::Name(a), Value::Name(b)) => a == b,
            (
                Expected::Mx {
                    preference,
                    exchange,
                },
                Value::Mx {
                    preference: seen_preference,
                    exchange: seen_exchange,
                },
            ) => exchange == seen_exchange && preference.is_none_or(|p| p == *seen_preference),
            (Expected::Txt(a), Value::Txt(b)) => a == b,
            _ => false,
        }
    }
}

/// An expected value that cannot be one of the answer's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected value {value:?} is not {wanted} ({} check)", record_type.as_str())]
pub struct InvalidExpected {
    value: String,
    record_type: DnsRecordType,
    wanted: &'static str,
}

/// Parses every expected value, or says which one is wrong.
pub fn parse_expected(
    record_type: DnsRecordType,
    raw: &[String],
) -> Result<Vec<Expected>, InvalidExpected> {
    raw.iter()
        .map(|value| Expected::parse(record_type, value))
        .collect()
}

/// The form names are compared in: ASCII (an internationalised name in its
/// `xn--` form), lower case, without the trailing dot; the root is `.`.
pub fn normalise_name(name: &str) -> String {
    let ascii = if name.is_ascii() {
        name.to_string()
    } else {
        // A name that is not valid IDNA stays as written: it then matches
        // nothing from the wire, which is the truth.
        Name::from_utf8(name)
            .map(|n| n.to_ascii())
            .unwrap_or_else(|_| name.to_string())
    };
    let lower = ascii.to_ascii_lowercase();
    let stripped = lower.strip_suffix('.').unwrap_or(&lower);
    if stripped.is_empty() {
        ".".to_string()
    } else {
        stripped.to_string()
    }
}

/// `Ok` when every expected value is in `seen`; otherwise the failure, naming
/// the missing values and what the answer held, e.g. `expected 192.0.2.1 in
/// the A answer for example.com, got 192.0.2.7`, as far as `screen` lets it.
/// `seen` is not empty (an empty answer fails before any comparison).
pub fn compare(
    record_type: DnsRecordType,
    target: &str,
    expected: &[Expected],
    seen: &[Value],
    screen: &Screen,
) -> Result<(), String> {
    let missing: Vec<&Expected> = expected
        .iter()
        .filter(|e| !seen.iter().any(|v| e.matches(v)))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    // Sorted, so that a round-robin answer reads the same every time.
    let mut seen: Vec<&Value> = seen.iter().collect();
    seen.sort();
    seen.dedup();
    let got = if screen.withholds() {
        let records = if seen.len() == 1 { "record" } else { "records" };
        format!(
            "{} {records} (not listed: answered by the deployment's own resolver)",
            seen.len()
        )
    } else {
        list(&seen, |value| redacted(&value.to_string(), screen))
    };
    // The expected values and the target are the user's own: shown as written.
    Err(format!(
        "expected {} in the {} answer for {}, got {got}",
        list(&missing, |value| bounded(&value.to_string())),
        record_type.as_str(),
        bounded(target),
    ))
}

/// At most [`MAX_LISTED`] values, each as `show` writes it, comma-separated.
fn list<T>(values: &[T], show: impl Fn(&T) -> String) -> String {
    let mut shown: Vec<String> = values.iter().take(MAX_LISTED).map(show).collect();
    if values.len() > MAX_LISTED {
        shown.push(format!("and {} more", values.len() - MAX_LISTED));
    }
    shown.join(", ")
}

/// `text` cut to [`MAX_VALUE_CHARS`] characters, `…` marking a cut.
fn bounded(text: &str) -> String {
    match text.char_indices().nth(MAX_VALUE_CHARS) {
        None => text.to_string(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// [`bounded`], with the addresses `screen` refuses redacted first. Only the
/// shown part plus one address's length is redacted, which is cheap on a
/// kilobyte TXT record and still catches an address the cut would split.
pub(super) fn redacted(text: &str, screen: &Screen) -> String {
    let (head, cut) = match text.char_indices().nth(MAX_VALUE_CHARS + MAX_ADDRESS_CHARS) {
        None => (text, false),
        Some((at, _)) => (&text[..at], true),
    };
    let mut shown = bounded(&screen.redact(head));
    if cut && !shown.ends_with('…') {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::address::AddressPolicy;
    use DnsRecordType::*;

    /// [`compare`] with private targets allowed: everything shown as is.
    fn cmp(
        record_type: DnsRecordType,
        target: &str,
        expected: &[Expected],
        seen: &[Value],
    ) -> Result<(), String> {
        let open = AddressPolicy::new(true, vec![]);
        compare(
            record_type,
            target,
            expected,
            seen,
            &Screen::new(&open, true),
        )
    }

    fn parse(record_type: DnsRecordType, raw: &str) -> Expected {
        Expected::parse(record_type, raw).unwrap()
    }

    fn name(n: &str) -> Value {
        Value::Name(normalise_name(n))
    }

    fn mx(preference: u16, exchange: &str) -> Value {
        Value::Mx {
            preference,
            exchange: normalise_name(exchange),
        }
    }

    #[test]
    fn addresses_are_compared_parsed() {
        let seen = Value::Addr("0:0::1".parse().unwrap());
        assert!(parse(Aaaa, "::1").matches(&seen));
        assert!(parse(Aaaa, " 0000:0000:0000:0000:0000:0000:0000:0001 ").matches(&seen));
        assert!(!parse(Aaaa, "::2").matches(&seen));
        let v4 = Value::Addr("192.0.2.1".parse().unwrap());
        assert!(parse(A, "192.0.2.1").matches(&v4));
        assert!(!parse(A, "192.0.2.10").matches(&v4));
    }

    #[test]
    fn an_address_of_the_wrong_family_or_no_address_is_refused() {
        assert_eq!(
            Expected::parse(A, "::1").unwrap_err().to_string(),
            "expected value \"::1\" is not an IPv4 address (A check)"
        );
        assert_eq!(
            Expected::parse(Aaaa, "192.0.2.1").unwrap_err().to_string(),
            "expected value \"192.0.2.1\" is not an IPv6 address (AAAA check)"
        );
        assert!(Expected::parse(A, "example.com").is_err());
        assert!(Expected::parse(Cname, "  ").is_err());
    }

    #[test]
    fn names_ignore_ascii_case_and_the_trailing_dot() {
        for written in [
            "Target.Example.com",
            "target.example.com.",
            "TARGET.EXAMPLE.COM.",
        ] {
            assert!(
                parse(Cname, written).matches(&name("target.example.com.")),
                "{written}"
            );
            assert!(parse(Ns, written).matches(&name("TARGET.example.COM")));
        }
        assert!(!parse(Cname, "other.example.com").matches(&name("target.example.com.")));
        assert!(!parse(Cname, "target.example").matches(&name("target.example.com.")));
        assert_eq!(normalise_name("."), ".");
        assert_eq!(normalise_name(""), ".");
        assert_eq!(normalise_name("Example.COM."), "example.com");
    }

    #[test]
    fn internationalised_names_compare_in_their_ascii_form() {
        assert_eq!(normalise_name("Bücher.example."), "xn--bcher-kva.example");
        assert!(parse(Cname, "bücher.example").matches(&name("xn--bcher-kva.example.")));
    }

    #[test]
    fn mx_matches_preference_and_exchange_or_the_exchange_alone() {
        let seen = mx(10, "mail.example.com.");
        assert!(parse(Mx, "10 mail.example.com").matches(&seen));
        assert!(parse(Mx, "10   MAIL.example.com.").matches(&seen));
        assert!(parse(Mx, "mail.example.com").matches(&seen));
        assert!(!parse(Mx, "20 mail.example.com").matches(&seen));
        assert!(!parse(Mx, "10 backup.example.com").matches(&seen));
        assert_eq!(
            Expected::parse(Mx, "ten mail.example.com")
                .unwrap_err()
                .to_string(),
            "expected value \"ten mail.example.com\" is not \
             \"<preference> <exchange>\" or \"<exchange>\" (MX check)"
        );
        assert!(Expected::parse(Mx, "10 a b").is_err());
        assert!(Expected::parse(Mx, "").is_err());
    }

    #[test]
    fn txt_compares_the_joined_text_exactly() {
        let seen = Value::Txt("v=spf1 -all".into());
        assert!(parse(Txt, "v=spf1 -all").matches(&seen));
        assert!(!parse(Txt, "V=SPF1 -ALL").matches(&seen));
        assert!(!parse(Txt, " v=spf1 -all").matches(&seen));
        assert!(!parse(Txt, "v=spf1").matches(&seen));
    }

    #[test]
    fn values_of_another_type_never_match() {
        assert!(!parse(Cname, "mail.example.com").matches(&mx(10, "mail.example.com")));
        assert!(!parse(Txt, "192.0.2.1").matches(&Value::Addr("192.0.2.1".parse().unwrap())));
    }

    #[test]
    fn every_expected_value_must_be_in_the_answer() {
        let seen = [
            Value::Addr("192.0.2.7".parse().unwrap()),
            Value::Addr("192.0.2.1".parse().unwrap()),
        ];
        let expected = parse_expected(A, &["192.0.2.1".into(), "192.0.2.7".into()]).unwrap();
        assert_eq!(cmp(A, "example.com", &expected, &seen), Ok(()));
        assert_eq!(cmp(A, "example.com", &[], &seen), Ok(()));

        let expected = parse_expected(A, &["192.0.2.1".into(), "192.0.2.9".into()]).unwrap();
        assert_eq!(
            cmp(A, "example.com", &expected, &seen),
            Err(
                "expected 192.0.2.9 in the A answer for example.com, got 192.0.2.1, 192.0.2.7"
                    .into()
            )
        );
    }

    #[test]
    fn the_failure_shows_values_in_their_normalised_form() {
        let expected = parse_expected(Mx, &["20 MX.example.com.".into()]).unwrap();
        assert_eq!(
            cmp(Mx, "example.com", &expected, &[mx(10, "Mail.Example.com.")]),
            Err("expected 20 mx.example.com in the MX answer for example.com, got 10 mail.example.com".into())
        );
        let expected = parse_expected(Txt, &["v=spf1 -all".into()]).unwrap();
        assert_eq!(
            cmp(Txt, "example.com", &expected, &[Value::Txt("hello \"world\"".into())]),
            Err(r#"expected "v=spf1 -all" in the TXT answer for example.com, got "hello \"world\"""#.into())
        );
    }

    #[test]
    fn the_failure_is_bounded() {
        let seen: Vec<Value> = (1..=25)
            .map(|i| Value::Addr(format!("192.0.2.{i}").parse().unwrap()))
            .collect();
        let expected = parse_expected(A, &["198.51.100.1".into()]).unwrap();
        let error = cmp(A, "example.com", &expected, &seen).unwrap_err();
        assert_eq!(
            error,
            "expected 198.51.100.1 in the A answer for example.com, got 192.0.2.1, 192.0.2.2, \
             192.0.2.3, 192.0.2.4, 192.0.2.5, 192.0.2.6, 192.0.2.7, 192.0.2.8, 192.0.2.9, \
             192.0.2.10, and 15 more"
        );

        let long = "x".repeat(5000);
        let expected = parse_expected(Txt, &["short".into()]).unwrap();
        let error = cmp(Txt, "example.com", &expected, &[Value::Txt(long)]).unwrap_err();
        assert!(error.len() < 200, "{error}");
        assert!(error.ends_with('…'), "{error}");
    }
}
