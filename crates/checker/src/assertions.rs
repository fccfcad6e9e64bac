//! The assertions of an http or keyword check ([`Assertion`]), judged
//! against the response: a pure function of a small view of it
//! ([`ResponseView`]), so every rule is tested without a network.
//!
//! What an assertion sees (its source):
//! - `status_code`, `response_time`: numbers (the latency in milliseconds, as
//!   measured for the result);
//! - `header`: the values of the header named by `property` (case-insensitive),
//!   joined by `, `; no such header: *missing*;
//! - `text_body`: the body read (at most `max_body_bytes`), decoded as UTF-8
//!   with invalid bytes replaced;
//! - `json_body`: the values the JSONPath (RFC 9535) in `property` selects in
//!   the body parsed as JSON: none is *missing*, one is itself, several are
//!   a JSON array of them in document order. A body that is not JSON (or was
//!   cut at `max_body_bytes` inside a value) fails the assertion, saying so.
//!
//! How it compares with `target`:
//! - `equals` / `not_equals`: numerically when both sides are (finite)
//!   numbers (`200` equals `200.0`), otherwise as text. A JSON string's text
//!   is the string without quotes; other JSON values are their compact JSON
//!   (`true`, `null`, `[1,2]`).
//! - `contains` / `not_contains`: substring of that text.
//! - `greater_than` / `less_than`: numeric; a side that is not a number fails
//!   the assertion, saying so.
//! - `matches`: the text matches the regular expression anywhere (anchor with
//!   `^`/`$`). Patterns are capped at [`MAX_PATTERN_BYTES`], compiled with
//!   [`REGEX_SIZE_LIMIT`] and kept compiled per process ([`patterns`]); the
//!   `regex` crate has no backtracking and matches in time linear in the
//!   text, so a hostile pattern cannot stall a checker.
//! - `is_empty` / `not_empty`: missing, `""`, `[]`, `{}` and `null` are empty.
//!
//! A missing value reads as the empty text: it equals `""`, contains nothing
//! (so `not_contains` and `not_equals` hold) and is not a number.
//!
//! Every assertion is evaluated, in order. The verdict names the first that
//! failed, what it saw (at most [`MAX_SEEN_CHARS`] characters of it), and
//! the numbers of the others that failed too:
//! `assertion 2 failed: json_body $.status equals "ok": got "degraded" (also failed: 4)`.
//! A malformed assertion (no target, a bad JSONPath or regular expression)
//! is a failed assertion with the reason, never a panic.
//!
//! Budgets (one tenant must never be able to crash a checker).
//! Every text an assertion reads is bounded by `max_body_bytes` (the body,
//! its UTF-8 decoding, the JSON parsed from it), and substring search
//! (`contains`, and the keyword rule in [`crate::http_check`]) and
//! `matches` run in time linear in it. A JSONPath is the one expression
//! whose cost is not linear in the body: it runs only if a bound computed
//! from its shape and the body's size is within its allowance, and what it
//! selects is copied only if that is too ([`budget`]); the regular
//! expression functions `match()` and `search()` are refused (they compile
//! a pattern per node, outside these bounds: select the value and use
//! `matches`). Otherwise the assertion is over its budget:
//! `assertion 1 over its budget: json_body $..*..*..* equals "x": would visit
//! more than 100000 nodes`, and the check fails. The checker evaluates the
//! assertions off its async threads within [`ASSERTION_TIME_BUDGET`]
//! ([`evaluate_on_budget`]).
//!
//! Secrets (the request's credentials, [`ResponseView::secrets`]) are
//! replaced by `[redacted]` wherever they appear in a verdict, before any
//! text is shortened, so a target that echoes the request cannot leak them
//! into results.

mod budget;
mod off_thread;
pub mod patterns;
mod shape;

pub use budget::{
    OverBudget, ASSERTION_TIME_BUDGET, JSONPATH_DOCUMENT_PASSES, JSONPATH_MAX_BYTES,
    JSONPATH_MAX_NESTING, JSONPATH_NODE_BUDGET,
};
pub use off_thread::{evaluate_on_budget, OwnedResponse};
pub use patterns::{MAX_PATTERN_BYTES, REGEX_CACHE_ENTRIES, REGEX_SIZE_LIMIT};
pub use shape::ShapeError;

use budget::Document;
use serde_json::Value as Json;
use serde_json_path::JsonPath;
use std::borrow::Cow;
use std::cell::OnceCell;
use uptime_contracts::{Assertion, AssertionSource, Comparison};

/// How much of a seen value a verdict quotes.
pub const MAX_SEEN_CHARS: usize = 200;
/// How much of a target, property or parse error a verdict quotes.
const MAX_CONFIG_CHARS: usize = 100;
/// How many other failed assertions a verdict lists by number.
const MAX_ALSO_LISTED: usize = 10;
/// What replaces a secret in a verdict.
const REDACTED: &str = "[redacted]";

/// What assertions may look at in a response.
#[derive(Clone, Copy)]
pub struct ResponseView<'a> {
    pub status: u16,
    /// The final response's headers as (name, value), in order; values that
    /// are not UTF-8 decoded with replacement.
    pub headers: &'a [(String, String)],
    /// The body as read: at most `max_body_bytes`.
    pub body: &'a [u8],
    /// Whether reading stopped at `max_body_bytes` (the body may go on).
    pub body_cut: bool,
    pub latency_ms: u32,
    /// Texts that must never appear in a verdict (empty ones are ignored).
    pub secrets: &'a [String],
}

/// The verdict on `assertions`: `None` when all hold, otherwise what failed
/// (see the module documentation).
pub fn evaluate(assertions: &[Assertion], response: &ResponseView<'_>) -> Option<String> {
    let context = Context {
        view: response,
        text: OnceCell::new(),
        json: OnceCell::new(),
    };
    let mut first = None;
    let mut also = Vec::new();
    for (index, assertion) in assertions.iter().enumerate() {
        let Err(failure) = context.check(assertion) else {
            continue;
        };
        let number = index + 1;
        if first.is_none() {
            let (what, detail) = match failure {
                Failure::Failed(detail) => ("failed", detail),
                Failure::Over(over) => ("over its budget", over.to_string()),
            };
            first = Some(format!(
                "assertion {number} {what}: {}: {detail}",
                label(assertion, response.secrets)
            ));
        } else {
            also.push(number);
        }
    }
    let mut verdict = first?;
    if !also.is_empty() {
        let mut listed: Vec<String> = also
            .iter()
            .take(MAX_ALSO_LISTED)
            .map(ToString::to_string)
            .collect();
        if also.len() > MAX_ALSO_LISTED {
            listed.push(format!("and {} more", also.len() - MAX_ALSO_LISTED));
        }
        verdict.push_str(&format!(" (also failed: {})", listed.join(", ")));
    }
    Some(redact(&verdict, response.secrets).into_owned())
}

/// The response with the body decoded and parsed at most once, when an
/// assertion first needs it.
struct Context<'a> {
    view: &'a ResponseView<'a>,
    text: OnceCell<String>,
    json: OnceCell<Result<(Json, Document), String>>,
}

/// Why an assertion does not hold.
enum Failure {
    /// The detail, after `assertion N failed: LABEL: `.
    Failed(String),
    /// Not evaluated: it would cost more than allowed.
    Over(OverBudget),
}

impl From<String> for Failure {
    fn from(detail: String) -> Self {
        Failure::Failed(detail)
    }
}

/// The value an assertion picked.
enum Seen<'s> {
    /// Nothing there; why, for the verdict.
    Missing(&'static str),
    /// A number and its unit, for the verdict.
    Number(u32, &'static str),
    Text(Cow<'s, str>),
    Json(Json),
}

impl Context<'_> {
    fn check(&self, assertion: &Assertion) -> Result<(), Failure> {
        let comparison = assertion.comparison;
        // Judge the assertion itself before the response.
        let target = match assertion.target.as_deref() {
            Some(target) => target,
            None if comparison.needs_target() => {
                return Err(format!("{} needs a target", comparison.as_str()).into())
            }
            None => "",
        };
        let regex = match comparison {
            Comparison::Matches => Some(patterns::compiled(target)?),
            _ => None,
        };
        let target_number = match comparison {
            Comparison::GreaterThan | Comparison::LessThan => {
                Some(number(target).ok_or_else(|| {
                    format!(
                        "target {} is not a number",
                        quoted(target, MAX_CONFIG_CHARS, self.view.secrets)
                    )
                })?)
            }
            _ => None,
        };

        let seen = self.pick(assertion)?;
        let holds = match comparison {
            Comparison::Equals => equals(&seen, target),
            Comparison::NotEquals => !equals(&seen, target),
            Comparison::Contains => seen.text().contains(target),
            Comparison::NotContains => !seen.text().contains(target),
            Comparison::GreaterThan | Comparison::LessThan => {
                let Some(value) = seen.number() else {
                    return Err(format!("{}, not a number", self.got(&seen)).into());
                };
                let target = target_number.unwrap_or(f64::NAN);
                if comparison == Comparison::GreaterThan {
                    value > target
                } else {
                    value < target
                }
            }
            Comparison::Matches => regex.is_some_and(|re| re.is_match(&seen.text())),
            Comparison::IsEmpty => seen.is_empty(),
            Comparison::NotEmpty => !seen.is_empty(),
        };
        if holds {
            Ok(())
        } else {
            Err(self.got(&seen).into())
        }
    }

    fn pick(&self, assertion: &Assertion) -> Result<Seen<'_>, Failure> {
        let property = || {
            assertion
                .property
                .as_deref()
                .filter(|p| !p.is_empty())
                .ok_or_else(|| format!("{} needs a property", assertion.source.as_str()))
        };
        Ok(match assertion.source {
            AssertionSource::StatusCode => Seen::Number(self.view.status.into(), ""),
            AssertionSource::ResponseTime => Seen::Number(self.view.latency_ms, " ms"),
            AssertionSource::TextBody => Seen::Text(Cow::Borrowed(self.text())),
            AssertionSource::Header => {
                let name = property()?;
                let values: Vec<&str> = self
                    .view
                    .headers
                    .iter()
                    .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.as_str())
                    .collect();
                if values.is_empty() {
                    Seen::Missing("no such header")
                } else {
                    Seen::Text(Cow::Owned(values.join(", ")))
                }
            }
            AssertionSource::JsonBody => {
                let property = property()?;
                // Both before parsing, which they bound.
                if property.len() > JSONPATH_MAX_BYTES {
                    return Err(Failure::Over(OverBudget::PathLength));
                }
                if shape::nesting(property) > JSONPATH_MAX_NESTING {
                    return Err(Failure::Over(OverBudget::PathNesting));
                }
                let path = JsonPath::parse(property).map_err(|e| {
                    // The parser says only "parser error" for this common slip.
                    let reason = if property.starts_with('$') {
                        e.to_string()
                    } else {
                        "it must start with $".to_string()
                    };
                    format!(
                        "invalid JSONPath: {}",
                        bounded(&reason, MAX_CONFIG_CHARS, self.view.secrets)
                    )
                })?;
                let shape = shape::shape_of(property).map_err(|e| match e {
                    ShapeError::RegexFunction(_) => Failure::Failed(e.to_string()),
                    ShapeError::Unreadable(..) => {
                        tracing::warn!(path = property, error = %e, "JSONPath shape not read");
                        Failure::Failed(e.to_string())
                    }
                })?;
                let (body, document) = self.json().as_ref().map_err(Clone::clone)?;
                budget::check_query(&shape, document).map_err(Failure::Over)?;
                let mut found = path.query(body).all();
                // Copied below: only if the copy is bounded too.
                budget::check_selection(&found, document.selection_limit())
                    .map_err(Failure::Over)?;
                match found.len() {
                    0 => Seen::Missing("no match"),
                    1 => Seen::Json(found.remove(0).clone()),
                    _ => Seen::Json(Json::Array(found.into_iter().cloned().collect())),
                }
            }
        })
    }

    fn text(&self) -> &str {
        self.text
            .get_or_init(|| String::from_utf8_lossy(self.view.body).into_owned())
    }

    fn json(&self) -> &Result<(Json, Document), String> {
        self.json.get_or_init(|| {
            let json: Json = serde_json::from_slice(self.view.body).map_err(|e| {
                let cut = if self.view.body_cut {
                    format!(" (only its first {} bytes were read)", self.view.body.len())
                } else {
                    String::new()
                };
                format!("body is not JSON{cut}: {e}")
            })?;
            let document = Document::of(&json);
            Ok((json, document))
        })
    }

    /// `got VALUE`, shortened and with secrets redacted.
    fn got(&self, seen: &Seen<'_>) -> String {
        let secrets = self.view.secrets;
        match seen {
            Seen::Missing(why) => format!("got nothing ({why})"),
            Seen::Number(n, unit) => format!("got {n}{unit}"),
            Seen::Text(text) => format!("got {}", quoted(text, MAX_SEEN_CHARS, secrets)),
            Seen::Json(Json::String(s)) => format!("got {}", quoted(s, MAX_SEEN_CHARS, secrets)),
            Seen::Json(other) => format!(
                "got {}",
                bounded(&other.to_string(), MAX_SEEN_CHARS, secrets)
            ),
        }
    }
}

impl Seen<'_> {
    /// The text compared (a missing value reads as empty).
    fn text(&self) -> Cow<'_, str> {
        match self {
            Seen::Missing(_) => Cow::Borrowed(""),
            Seen::Number(n, _) => Cow::Owned(n.to_string()),
            Seen::Text(text) => Cow::Borrowed(text),
            Seen::Json(Json::String(s)) => Cow::Borrowed(s),
            Seen::Json(other) => Cow::Owned(other.to_string()),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Seen::Missing(_) => None,
            Seen::Number(n, _) => Some(f64::from(*n)),
            Seen::Text(text) => number(text),
            Seen::Json(Json::Number(n)) => n.as_f64().filter(|n| n.is_finite()),
            Seen::Json(Json::String(s)) => number(s),
            Seen::Json(_) => None,
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Seen::Missing(_) => true,
            Seen::Number(..) => false,
            Seen::Text(text) => text.is_empty(),
            Seen::Json(Json::Null) => true,
            Seen::Json(Json::String(s)) => s.is_empty(),
            Seen::Json(Json::Array(a)) => a.is_empty(),
            Seen::Json(Json::Object(o)) => o.is_empty(),
            Seen::Json(_) => false,
        }
    }
}

fn equals(seen: &Seen<'_>, target: &str) -> bool {
    if seen.text() == target {
        return true;
    }
    match (seen.number(), number(target)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// A finite number written as text (`inf` and `NaN` are not numbers here).
fn number(text: &str) -> Option<f64> {
    let text = text.trim();
    // Rust also reads `inf`, `infinity` and `nan`; only digits count here.
    if !text.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse::<f64>().ok().filter(|n| n.is_finite())
}

/// `source [property] comparison ["target"]`, shortened.
fn label(assertion: &Assertion, secrets: &[String]) -> String {
    let mut label = assertion.source.as_str().to_string();
    if let Some(property) = assertion.property.as_deref().filter(|p| !p.is_empty()) {
        label.push(' ');
        label.push_str(&bounded(property, MAX_CONFIG_CHARS, secrets));
    }
    label.push(' ');
    label.push_str(assertion.comparison.as_str());
    if let Some(target) = assertion.target.as_deref() {
        label.push(' ');
        label.push_str(&quoted(target, MAX_CONFIG_CHARS, secrets));
    }
    label
}

/// `text` in double quotes with escapes, at most `max` characters of it.
fn quoted(text: &str, max: usize, secrets: &[String]) -> String {
    let redacted = redact(text, secrets);
    let (kept, cut) = truncate(&redacted, max);
    format!("{kept:?}{}", if cut { "…" } else { "" })
}

/// At most `max` characters of `text`, secrets redacted first.
fn bounded(text: &str, max: usize, secrets: &[String]) -> String {
    let redacted = redact(text, secrets);
    let (kept, cut) = truncate(&redacted, max);
    format!("{kept}{}", if cut { "…" } else { "" })
}

fn truncate(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((end, _)) => (&text[..end], true),
        None => (text, false),
    }
}

fn redact<'t>(text: &'t str, secrets: &[String]) -> Cow<'t, str> {
    let mut text = Cow::Borrowed(text);
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if text.contains(secret.as_str()) {
            text = Cow::Owned(text.replace(secret.as_str(), REDACTED));
        }
    }
    text
}

#[cfg(test)]
mod tests;
