//! The rules of the http options that need more than a range: request
//! headers, basic authentication, assertions, and the pinned certificate's
//! fingerprint. Each problem names its field (`headers[2].name`,
//! `assertions[0].target`).

use super::draft_options::BasicAuthDraft;
use super::options::{
    Assertion, AssertionComparison, AssertionSource, RequestHeader, MAX_CREDENTIAL_CHARS,
    MAX_HEADERS, MAX_HEADER_NAME_CHARS, MAX_HEADER_VALUE_CHARS, MAX_PROPERTY_CHARS,
    MAX_TARGET_CHARS,
};
use crate::validation::Problems;

/// Headers the HTTP client sets itself (framing, routing, connection
/// management): a check may not send its own.
pub const FORBIDDEN_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-connection",
];

/// Longest `matches` pattern, in bytes, and its compiled size limit: the
/// bounds the checker matches with, from the contract both follow.
const MAX_PATTERN_BYTES: usize = uptime_contracts::ASSERTION_PATTERN_MAX_BYTES;
const REGEX_SIZE_LIMIT: usize = uptime_contracts::ASSERTION_REGEX_SIZE_LIMIT;
/// Largest `response_time` target: the longest timeout, in milliseconds.
const MAX_RESPONSE_TIME_MS: f64 = 120_000.0;

/// 64 lowercase hex digits from 64 hex digits of any case, or from 32
/// colon-separated pairs; `None` for anything else.
pub(super) fn normal_fingerprint(given: &str) -> Option<String> {
    let hex: String = if given.contains(':') {
        let pairs: Vec<&str> = given.split(':').collect();
        if pairs.len() != 32 || pairs.iter().any(|p| p.len() != 2) {
            return None;
        }
        pairs.concat()
    } else {
        given.to_string()
    };
    (hex.len() == 64 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| hex.to_ascii_lowercase())
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

pub(super) fn check_headers(
    problems: &mut Problems,
    headers: &[RequestHeader],
    with_basic_auth: bool,
) {
    if headers.len() > MAX_HEADERS {
        problems.add(
            "headers",
            format!("must hold at most {MAX_HEADERS} headers"),
        );
    }
    for (i, h) in headers.iter().enumerate() {
        let field = format!("headers[{i}].name");
        if !is_token(&h.name) || h.name.len() > MAX_HEADER_NAME_CHARS {
            problems.add(
                &field,
                format!(
                    "must be a header name: 1 to {MAX_HEADER_NAME_CHARS} letters, digits \
                     or !#$%&'*+-.^_`|~"
                ),
            );
        } else if FORBIDDEN_HEADERS.contains(&h.name.to_ascii_lowercase().as_str()) {
            problems.add(&field, format!("{} is set by the HTTP client", h.name));
        } else if with_basic_auth && h.name.eq_ignore_ascii_case("authorization") {
            problems.add(&field, "Authorization would conflict with basic_auth");
        }
        let value_ok = h.value.chars().count() <= MAX_HEADER_VALUE_CHARS
            && h.value
                .bytes()
                .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
        if !value_ok {
            problems.add(
                &format!("headers[{i}].value"),
                format!(
                    "must be at most {MAX_HEADER_VALUE_CHARS} characters of visible ASCII, \
                     space and tab (no line breaks)"
                ),
            );
        }
    }
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

pub(super) fn check_basic_auth(problems: &mut Problems, auth: &BasicAuthDraft) {
    let n = auth.username.chars().count();
    if n == 0 || n > MAX_CREDENTIAL_CHARS || has_control(&auth.username) {
        problems.add(
            "basic_auth.username",
            format!("must be 1 to {MAX_CREDENTIAL_CHARS} characters without control characters"),
        );
    } else if auth.username.contains(':') {
        problems.add("basic_auth.username", "must not contain `:`");
    }
    if let Some(p) = &auth.password {
        if p.chars().count() > MAX_CREDENTIAL_CHARS || has_control(p) {
            problems.add(
                "basic_auth.password",
                format!(
                    "must be at most {MAX_CREDENTIAL_CHARS} characters without control characters"
                ),
            );
        }
    }
}

pub(super) fn check_assertion(problems: &mut Problems, at: &str, a: &Assertion) {
    use AssertionComparison as C;
    use AssertionSource as S;
    let field = |name: &str| format!("{at}.{name}");

    let allowed: &[C] = match a.source {
        S::StatusCode => &[C::Equals, C::NotEquals, C::GreaterThan, C::LessThan],
        S::ResponseTime => &[C::GreaterThan, C::LessThan],
        S::Header | S::JsonBody | S::TextBody => &[],
    };
    if !allowed.is_empty() && !allowed.contains(&a.comparison) {
        let names: Vec<&str> = allowed.iter().map(|c| comparison_name(*c)).collect();
        problems.add(
            &field("comparison"),
            format!(
                "must be {} for source {}",
                names.join(", "),
                source_name(a.source)
            ),
        );
    }

    match (a.source, a.property.as_deref()) {
        (S::Header | S::JsonBody, None) => problems.add(
            &field("property"),
            format!("is required for source {}", source_name(a.source)),
        ),
        (S::Header | S::JsonBody, Some(p))
            if p.is_empty() || p.chars().count() > MAX_PROPERTY_CHARS =>
        {
            problems.add(
                &field("property"),
                format!("must be 1 to {MAX_PROPERTY_CHARS} characters long"),
            )
        }
        (S::Header, Some(p)) if !is_token(p) => {
            problems.add(&field("property"), "must be a header name")
        }
        (S::JsonBody, Some(p)) => {
            if let Err(e) = serde_json_path::JsonPath::parse(p) {
                problems.add(
                    &field("property"),
                    format!("must be a JSONPath such as $.status or $.checks[0].ok: {e}"),
                );
            }
        }
        (S::Header, Some(_)) => {}
        (_, Some(_)) => problems.add(
            &field("property"),
            format!(
                "is only for sources header and json_body, not {}",
                source_name(a.source)
            ),
        ),
        (_, None) => {}
    }

    let needs_target = !matches!(a.comparison, C::IsEmpty | C::NotEmpty);
    let target = match (needs_target, a.target.as_deref()) {
        (true, None) => {
            return problems.add(
                &field("target"),
                format!("is required for {}", comparison_name(a.comparison)),
            )
        }
        (false, Some(_)) => {
            return problems.add(
                &field("target"),
                format!("is not taken by {}", comparison_name(a.comparison)),
            )
        }
        (false, None) => return,
        (true, Some(t)) => t,
    };
    if target.is_empty() || target.chars().count() > MAX_TARGET_CHARS {
        return problems.add(
            &field("target"),
            format!("must be 1 to {MAX_TARGET_CHARS} characters long"),
        );
    }
    let number = target.trim().parse::<f64>().ok().filter(|n| n.is_finite());
    let status_code = number.is_some_and(|n| n.fract() == 0.0 && (100.0..=599.0).contains(&n));
    let milliseconds = number.is_some_and(|n| (0.0..=MAX_RESPONSE_TIME_MS).contains(&n));
    match a.source {
        S::StatusCode if !status_code => {
            problems.add(&field("target"), "must be a status code from 100 to 599")
        }
        S::ResponseTime if !milliseconds => problems.add(
            &field("target"),
            "must be a number of milliseconds from 0 to 120000",
        ),
        S::StatusCode | S::ResponseTime => {}
        _ if matches!(a.comparison, C::GreaterThan | C::LessThan) && number.is_none() => problems
            .add(
                &field("target"),
                format!("must be a number for {}", comparison_name(a.comparison)),
            ),
        _ => {}
    }
    if a.comparison == C::Matches {
        if target.len() > MAX_PATTERN_BYTES {
            problems.add(
                &field("target"),
                format!("must be a regular expression of at most {MAX_PATTERN_BYTES} bytes"),
            );
        } else if let Err(e) = regex::RegexBuilder::new(target)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            .build()
        {
            problems.add(
                &field("target"),
                format!("must be a regular expression: {e}"),
            );
        }
    }
}

fn source_name(s: AssertionSource) -> &'static str {
    uptime_contracts::AssertionSource::from(s).as_str()
}

fn comparison_name(c: AssertionComparison) -> &'static str {
    uptime_contracts::Comparison::from(c).as_str()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_are_normalised_to_lowercase_hex() {
        let hex = "AB".repeat(32);
        let pairs = vec!["ab"; 32].join(":");
        let expected = Some("ab".repeat(32));
        assert_eq!(normal_fingerprint(&hex), expected);
        assert_eq!(normal_fingerprint(&pairs.to_uppercase()), expected);
        for bad in [
            "ab".repeat(31),
            "ab".repeat(33),
            "zz".repeat(32),
            format!("{}:", "ab".repeat(32)),
            vec!["abc"; 32].join(":"),
            vec!["a"; 64].join(":"),
        ] {
            assert_eq!(normal_fingerprint(&bad), None, "{bad}");
        }
    }
}
