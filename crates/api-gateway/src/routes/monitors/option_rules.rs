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
/// Most descendant segments (`..`) in a JSONPath, filters included: each
/// one can multiply the nodes a check visits by the body's size.
pub const MAX_JSONPATH_DESCENDANTS: usize = 2;
/// Deepest nesting of filters in a JSONPath (`$.a[?@.b[?@.c]]` is 2): a
/// filter runs its queries once per node it tests.
pub const MAX_JSONPATH_FILTER_NESTING: usize = 2;
/// Deepest nesting of brackets and parentheses in a JSONPath: the JSONPath
/// parser backtracks through nested filters in time exponential in their
/// depth (50 deep, in 150 characters, would never finish), so a path is
/// measured before it is parsed. The checker's bound
/// (`checker::assertions::JSONPATH_MAX_NESTING`).
pub const MAX_JSONPATH_NESTING: usize = 8;

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
            // The cost rules first: they also bound the nesting that the
            // parser takes exponential time over.
            if let Err(refused) = check_jsonpath_cost(p) {
                problems.add(&field("property"), refused);
            } else if let Err(e) = serde_json_path::JsonPath::parse(p) {
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

/// The parts of a JSONPath that make its cost unbounded, read from its
/// text outside string literals, before it is parsed: nesting, descendant
/// segments, nested filters and the regular-expression functions. The
/// checker bounds every path's cost on the body it gets (and refuses
/// `match()`/`search()` too); these rules refuse early, with the field,
/// what is never sound on any body.
fn check_jsonpath_cost(path: &str) -> Result<(), String> {
    let mut descendants = 0;
    let mut nesting = 0;
    // One entry per open `[` or `(`: whether it is a bracket whose current
    // selector is a filter.
    let mut open: Vec<(char, bool)> = Vec::new();
    let mut filters = 0usize;
    let mut deepest = 0usize;
    let mut chars = path.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        match c {
            '\'' | '"' => {
                // A string literal: skip to its closing quote.
                while let Some((_, inner)) = chars.next() {
                    if inner == '\\' {
                        chars.next();
                    } else if inner == c {
                        break;
                    }
                }
            }
            '.' if chars.peek().is_some_and(|&(_, next)| next == '.') => {
                chars.next();
                descendants += 1;
            }
            '[' | '(' => {
                open.push((c, false));
                nesting = nesting.max(open.len());
                if nesting > MAX_JSONPATH_NESTING {
                    return Err(format!(
                        "must nest brackets and parentheses at most {MAX_JSONPATH_NESTING} deep"
                    ));
                }
            }
            '?' => {
                if let Some(top) = open.last_mut() {
                    top.1 = true;
                }
                filters += 1;
                deepest = deepest.max(filters);
            }
            ',' | ']' => {
                // A comma in a bracket ends its selector, and `]` the
                // bracket; a comma between function arguments does neither.
                if let Some(&('[', true)) = open.last() {
                    filters = filters.saturating_sub(1);
                    if let Some(top) = open.last_mut() {
                        top.1 = false;
                    }
                }
                if c == ']' {
                    open.pop();
                }
            }
            ')' => {
                open.pop();
            }
            'a'..='z' => {
                let start = at;
                let mut end = at + 1;
                while let Some(&(i, next)) = chars.peek() {
                    if next.is_ascii_alphanumeric() || next == '_' {
                        chars.next();
                        end = i + 1;
                    } else {
                        break;
                    }
                }
                let word = &path[start..end];
                let called = path[end..].starts_with('(');
                if called && (word == "match" || word == "search") {
                    return Err(format!(
                        "must not call the JSONPath function {word}(): select the value and \
                         compare it with the matches comparison instead"
                    ));
                }
            }
            _ => {}
        }
    }
    if descendants > MAX_JSONPATH_DESCENDANTS {
        return Err(format!(
            "must have at most {MAX_JSONPATH_DESCENDANTS} descendant segments (..), filters \
             included: each may multiply the nodes a check visits"
        ));
    }
    if deepest > MAX_JSONPATH_FILTER_NESTING {
        return Err(format!(
            "must nest filters at most {MAX_JSONPATH_FILTER_NESTING} deep"
        ));
    }
    Ok(())
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
    fn jsonpath_costs_are_bounded_outside_string_literals() {
        for path in [
            "$.a.b",
            "$.items[*].status",
            "$.items[?@.status == 'down']",
            "$..id",
            "$..items[?@.id > 1]..name",
            "$['a..b..c']..x",
            "$[?@.a[?@.b]]",
            "$[?@['[?'] == '?]']",
            "$.match[?@.search == 'match(']",
            "$[?length(@.a) > 0 && count(@.*) > 1]",
            "$[?@.a, ?@.b, ?@.c]",
            "$[?(((((((@.a)))))))]",
        ] {
            assert!(serde_json_path::JsonPath::parse(path).is_ok(), "{path}");
            assert_eq!(check_jsonpath_cost(path), Ok(()), "{path}");
        }
        for (path, says) in [
            ("$..*..*..*", "at most 2 descendant segments"),
            ("$..a[?@..b..c]", "at most 2 descendant segments"),
            ("$[?@.a[?@.b[?@.c]]]", "nest filters at most 2 deep"),
            (
                "$[?match(@.a, 'x')]",
                "must not call the JSONPath function match()",
            ),
            ("$[?search(@.a, 'x')]", "function search()"),
            (
                "$[?((((((((@.a))))))))]",
                "nest brackets and parentheses at most 8 deep",
            ),
        ] {
            assert!(serde_json_path::JsonPath::parse(path).is_ok(), "{path}");
            let refused = check_jsonpath_cost(path).unwrap_err();
            assert!(refused.contains(says), "{path}: {refused}");
        }
    }

    #[test]
    fn deep_nesting_is_refused_before_the_parser_sees_it() {
        // 50 nested filters: the parser would backtrack for hours.
        let path = format!("$[?{}@{}]", "@[?".repeat(50), "]".repeat(50));
        assert!(path.chars().count() <= MAX_PROPERTY_CHARS);
        let refused = check_jsonpath_cost(&path).unwrap_err();
        assert!(refused.contains("at most 8 deep"), "{refused}");
        // Even when it is not a JSONPath at all.
        assert!(check_jsonpath_cost(&"[".repeat(200)).is_err());
    }

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
