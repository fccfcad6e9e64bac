//! Labels on monitors and the selectors that pick monitors by them.
//!
//! A label is a `key: value` pair in Kubernetes syntax (`team: payments`,
//! `example.com/env: prod`); a monitor has at most [`MAX_LABELS`]. A
//! [`Selector`] is a set of `key=value` terms that must all hold (equality
//! only: what PostgreSQL's `jsonb @>` answers from a GIN index). Everything
//! is bounded before it is stored or evaluated: keys, values and counts, so
//! a tenant's labels and selectors cost at most a few kilobytes and a
//! selector is a containment test over at most [`MAX_LABELS`] pairs.
//!
//! One module: the label and selector rules are this file; their unit tests are `tests.rs`.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// The most labels one monitor may carry (and terms one selector may have).
pub const MAX_LABELS: usize = 32;
/// The longest name part of a key, and the longest value.
pub const MAX_NAME_LEN: usize = 63;
/// The longest prefix of a key (a DNS subdomain, before the `/`).
pub const MAX_PREFIX_LEN: usize = 253;

/// A label key or value that breaks the syntax, or too many labels.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelError {
    #[error("at most {MAX_LABELS} labels")]
    TooMany,
    #[error("a key must not be empty")]
    EmptyKey,
    #[error("the key's prefix must be a lowercase DNS subdomain of at most {MAX_PREFIX_LEN} characters (e.g. example.com)")]
    BadPrefix,
    #[error("the key's name must be 1 to {MAX_NAME_LEN} characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit")]
    BadKeyName,
    #[error("must be at most {MAX_NAME_LEN} characters of letters, digits, '-', '_' and '.', starting and ending with a letter or digit (or empty)")]
    BadValue,
    #[error("a selector term is key=value (e.g. team=payments)")]
    BadTerm,
}

/// Which part of a label a problem is in: the field a 400 names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Where {
    /// The whole map (too many labels).
    All,
    /// The key itself (as given).
    Key(String),
    /// The value of this key.
    Value(String),
}

/// A label key's name part, or a value when not empty: 1 to 63 of
/// `[A-Za-z0-9._-]`, alphanumeric at both ends.
fn is_name(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= MAX_NAME_LEN
        && bytes[0].is_ascii_alphanumeric()
        && bytes[bytes.len() - 1].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// A DNS subdomain (RFC 1123, lowercase), as Kubernetes requires of a
/// key's prefix.
fn is_prefix(text: &str) -> bool {
    text.len() <= MAX_PREFIX_LEN
        && text.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// Checks a key: `[prefix/]name`.
pub fn check_key(key: &str) -> Result<(), LabelError> {
    if key.is_empty() {
        return Err(LabelError::EmptyKey);
    }
    let name = match key.split_once('/') {
        Some((prefix, name)) => {
            if !is_prefix(prefix) {
                return Err(LabelError::BadPrefix);
            }
            name
        }
        None => key,
    };
    if is_name(name) {
        Ok(())
    } else {
        Err(LabelError::BadKeyName)
    }
}

/// Checks a value: empty, or a name.
pub fn check_value(value: &str) -> Result<(), LabelError> {
    if value.is_empty() || is_name(value) {
        Ok(())
    } else {
        Err(LabelError::BadValue)
    }
}

/// A monitor's labels, ordered by key (so the stored JSON and the audit
/// diff are stable). Not yet validated when read from a request: see
/// [`Labels::problems`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Labels(pub BTreeMap<String, String>);

impl Labels {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Every broken rule, in key order: too many labels first, then each
    /// bad key or value. Empty when the labels may be stored.
    pub fn problems(&self) -> Vec<(Where, LabelError)> {
        let mut problems = Vec::new();
        if self.0.len() > MAX_LABELS {
            problems.push((Where::All, LabelError::TooMany));
        }
        for (key, value) in &self.0 {
            if let Err(e) = check_key(key) {
                problems.push((Where::Key(key.clone()), e));
            } else if let Err(e) = check_value(value) {
                problems.push((Where::Value(key.clone()), e));
            }
        }
        problems
    }

    /// The stored form: a JSON object.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).expect("a map of strings serialises")
    }

    /// Labels from their stored form; anything but an object of strings
    /// (which the API never stores) reads as no labels.
    pub fn from_json(value: &serde_json::Value) -> Self {
        Self::deserialize(value).unwrap_or_default()
    }
}

impl fmt::Display for Labels {
    /// `env=prod, team=payments`: how alerts show them.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

/// A set of `key=value` terms that must all hold. The empty selector
/// matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Selector(pub Labels);

impl Selector {
    /// One term of a query string, `key=value` (the value may be empty).
    pub fn parse_term(term: &str) -> Result<(String, String), LabelError> {
        let (key, value) = term.split_once('=').ok_or(LabelError::BadTerm)?;
        check_key(key)?;
        check_value(value)?;
        Ok((key.to_string(), value.to_string()))
    }

    /// The selector of several terms, each `key=value`; one key given twice
    /// with different values selects nothing, and is refused.
    pub fn parse_terms<'a>(
        terms: impl IntoIterator<Item = &'a str>,
    ) -> Result<Self, (usize, LabelError)> {
        let mut map = BTreeMap::new();
        for (i, term) in terms.into_iter().enumerate() {
            if i >= MAX_LABELS {
                return Err((i, LabelError::TooMany));
            }
            let (k, v) = Self::parse_term(term).map_err(|e| (i, e))?;
            if map.get(&k).is_some_and(|old: &String| *old != v) {
                return Err((i, LabelError::BadTerm));
            }
            map.insert(k, v);
        }
        Ok(Self(Labels(map)))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether `labels` carry every term.
    pub fn matches(&self, labels: &Labels) -> bool {
        self.0.iter().all(|(k, v)| labels.get(k) == Some(v))
    }

    /// Whether every monitor this selector matches, `wider` matches too:
    /// `wider`'s terms are a subset of these. A key with a selector may
    /// only issue keys at least as narrow.
    pub fn within(&self, wider: &Selector) -> bool {
        wider.matches(&self.0)
    }

    pub fn labels(&self) -> &Labels {
        &self.0
    }

    /// The JSON object PostgreSQL's `labels @> selector` takes.
    pub fn to_json(&self) -> serde_json::Value {
        self.0.to_json()
    }
}

impl fmt::Display for Selector {
    /// `env=prod,team=payments`: the query-string form.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, (k, v)) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{k}={v}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
