//! Assertions: conditions on the response of an http or keyword check,
//! as requests give them and responses show them, and their rules (each
//! problem named by its path, `assertions[0].target`).

use super::jsonpath::check_jsonpath_cost;
use super::request::is_token;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

/// Most assertions per monitor.
pub const MAX_ASSERTIONS: usize = 20;
/// Longest assertion property (a header name or a JSONPath).
pub const MAX_PROPERTY_CHARS: usize = 256;
/// Longest assertion target.
pub const MAX_TARGET_CHARS: usize = 1024;
/// Longest `matches` pattern, in bytes, and its compiled size limit: the
/// bounds the checker matches with, from the contract both follow.
const MAX_PATTERN_BYTES: usize = uptime_contracts::ASSERTION_PATTERN_MAX_BYTES;
const REGEX_SIZE_LIMIT: usize = uptime_contracts::ASSERTION_REGEX_SIZE_LIMIT;
/// Largest `response_time` target: the longest timeout, in milliseconds.
const MAX_RESPONSE_TIME_MS: f64 = 120_000.0;

// The contracts' enums, their OpenAPI schemas the API's (the `openapi`
// feature): the checker evaluates assertions as the API takes them. Which
// comparisons and targets each source takes is `check_assertion`'s.
pub use uptime_contracts::{AssertionSource, Comparison as AssertionComparison};

/// An assertion's `target` as a request may give it: text, or a number
/// (kept as its text, `200`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum AssertionTarget {
    Text(String),
    Number(serde_json::Number),
}

impl AssertionTarget {
    pub fn into_text(self) -> String {
        match self {
            AssertionTarget::Text(s) => s,
            AssertionTarget::Number(n) => n.to_string(),
        }
    }
}

impl utoipa::PartialSchema for AssertionTarget {
    fn schema() -> RefOr<Schema> {
        OneOfBuilder::new()
            .item(
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(MAX_TARGET_CHARS))
                    .pattern(Some(crate::validation::TEXT_PATTERN)),
            )
            .item(ObjectBuilder::new().schema_type(Type::Number))
            .description(Some(
                "What the value is compared with: 1 to 1024 characters, or a number \
                 (kept as its text). Required except for `is_empty` and `not_empty`, \
                 which refuse it.",
            ))
            .into()
    }
}

impl ToSchema for AssertionTarget {}

/// A condition on the response of an http or keyword check; all of a
/// monitor's assertions must hold.
#[derive(Debug, Clone, PartialEq, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AssertionInput {
    pub source: AssertionSource,
    /// `header`: the header's name (an HTTP token); `json_body`: a JSONPath
    /// (RFC 9535). Refused for the other sources. At most 256 characters.
    ///
    /// A JSONPath has at most 2 descendant segments (`..`, filters
    /// included), filters nested at most 2 deep, brackets and parentheses
    /// at most 8 deep, and no `match()` or `search()` (use the `matches`
    /// comparison). Checkers run it on a
    /// budget: before it runs, its cost is bounded from its shape and the
    /// body's size, and it may visit, and select, at most
    /// max(100000, 8 × the body's nodes) nodes; all of a check's assertions
    /// together have 2 seconds. Over either, the check fails with
    /// `assertion N over its budget: …`. Paths that go through the body
    /// once per segment (`$.a.b`, `$.items[*].status`,
    /// `$.items[?@.status == 'down']`, `$..id`) are never over it.
    // The numbers are the checker's (`checker::assertions`:
    // JSONPATH_NODE_BUDGET, JSONPATH_DOCUMENT_PASSES, ASSERTION_TIME_BUDGET),
    // and the rules `super::jsonpath::check_jsonpath_cost`'s.
    #[schema(min_length = 1, max_length = 256)]
    pub property: Option<String>,
    pub comparison: AssertionComparison,
    #[schema(value_type = Option<AssertionTarget>)]
    pub target: Option<AssertionTarget>,
}

/// An assertion as stored and shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct Assertion {
    pub source: AssertionSource,
    pub property: Option<String>,
    pub comparison: AssertionComparison,
    /// Always text (a number given is shown as its text).
    pub target: Option<String>,
}

impl From<AssertionInput> for Assertion {
    fn from(a: AssertionInput) -> Self {
        Self {
            source: a.source,
            property: a.property,
            comparison: a.comparison,
            target: a.target.map(AssertionTarget::into_text),
        }
    }
}

impl From<uptime_contracts::Assertion> for Assertion {
    fn from(a: uptime_contracts::Assertion) -> Self {
        Self {
            source: a.source,
            property: a.property,
            comparison: a.comparison,
            target: a.target,
        }
    }
}

impl From<Assertion> for uptime_contracts::Assertion {
    fn from(a: Assertion) -> Self {
        Self {
            source: a.source,
            property: a.property,
            comparison: a.comparison,
            target: a.target,
        }
    }
}

pub(crate) fn check_assertion(problems: &mut Problems, at: &str, a: &Assertion) {
    use AssertionComparison as C;
    use AssertionSource as S;
    let field = |name: &str| format!("{at}.{name}");

    let allowed: &[C] = match a.source {
        S::StatusCode => &[C::Equals, C::NotEquals, C::GreaterThan, C::LessThan],
        S::ResponseTime => &[C::GreaterThan, C::LessThan],
        S::Header | S::JsonBody | S::TextBody => &[],
    };
    if !allowed.is_empty() && !allowed.contains(&a.comparison) {
        let names: Vec<&str> = allowed.iter().map(|c| c.as_str()).collect();
        problems.add(
            &field("comparison"),
            format!(
                "must be {} for source {}",
                names.join(", "),
                a.source.as_str()
            ),
        );
    }

    match (a.source, a.property.as_deref()) {
        (S::Header | S::JsonBody, None) => problems.add(
            &field("property"),
            format!("is required for source {}", a.source.as_str()),
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
                a.source.as_str()
            ),
        ),
        (_, None) => {}
    }

    let needs_target = !matches!(a.comparison, C::IsEmpty | C::NotEmpty);
    let target = match (needs_target, a.target.as_deref()) {
        (true, None) => {
            return problems.add(
                &field("target"),
                format!("is required for {}", a.comparison.as_str()),
            )
        }
        (false, Some(_)) => {
            return problems.add(
                &field("target"),
                format!("is not taken by {}", a.comparison.as_str()),
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
                format!("must be a number for {}", a.comparison.as_str()),
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
