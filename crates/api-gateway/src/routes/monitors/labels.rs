//! A monitor's `labels`: bounded `key: value` pairs in Kubernetes syntax
//! ([`uptime_labels`]), which the list filters on (`?label=env=prod`) and
//! keys with a label selector are limited by. Labels are no part of what a
//! check does: changing them moves no `definition_version`.

use crate::error::FieldError;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use uptime_labels::{Labels, Where};
use utoipa::openapi::schema::{Object, ObjectBuilder, SchemaType, Type};
use utoipa::ToSchema;

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;

    /// Labels, e.g. `{"team": "payments", "env": "prod"}`: at most 32. A key
    /// is a name of 1 to 63 letters, digits, `-`, `_` and `.` (alphanumeric
    /// at both ends), optionally after a lowercase DNS prefix and `/`
    /// (`example.com/tier`); a value is empty or such a name. Default: none.
    /// A key with a label selector may only create monitors whose labels
    /// hold it.
    #[schema(schema_with = labels_schema, required = false)]
    labels: opt Labels,
        own /// Replaces the labels; `null` or `{}` removes them all.
        #[schema(schema_with = nullable_labels_schema, required = false)]
        => /// The monitor's labels (`{}` when it has none).
        #[schema(schema_with = labels_schema)]
        Labels;
}

/// A value (and a key's name): empty, or 1 to 63 of `[A-Za-z0-9._-]`,
/// alphanumeric at both ends.
const VALUE_PATTERN: &str = "^(|[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$";
/// A key: an optional lowercase DNS prefix and `/`, then a name.
const KEY_PATTERN: &str = "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$";

/// The labels' schema: an object of at most 32 strings, keys and values
/// bounded by their patterns.
fn labels_object() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .max_properties(Some(uptime_labels::MAX_LABELS))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(
                    uptime_labels::MAX_PREFIX_LEN + 1 + uptime_labels::MAX_NAME_LEN,
                ))
                .pattern(Some(KEY_PATTERN)),
        ))
        .additional_properties(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(uptime_labels::MAX_NAME_LEN))
                .pattern(Some(VALUE_PATTERN)),
        ))
}

fn labels_schema() -> Object {
    labels_object().build()
}

fn nullable_labels_schema() -> Object {
    labels_object()
        .schema_type(SchemaType::from_iter([Type::Object, Type::Null]))
        .build()
}

/// Adds each broken rule of `labels` to `problems`, naming the field:
/// `labels` for their count, `labels.<key>` for a key or its value.
pub(super) fn validate(labels: &Labels, problems: &mut Problems) {
    for (place, error) in labels.problems() {
        let (field, what) = match place {
            Where::All => ("labels".to_string(), ""),
            Where::Key(key) => (format!("labels.{}", shown_key(&key)), "key: "),
            Where::Value(key) => (format!("labels.{key}"), "value: "),
        };
        problems.add(&field, format!("{what}{error}"));
    }
}

/// A refused key as its field name shows it: user text, so at most 64
/// characters of it.
fn shown_key(key: &str) -> String {
    key.chars().take(64).collect()
}

/// The 403 a key with a label selector gets for a monitor whose labels
/// would not hold it.
pub(super) fn outside_selector(selector: &uptime_labels::Selector) -> crate::error::ApiError {
    crate::error::ApiError::Forbidden {
        field: "labels",
        message: format!(
            "this key reaches only monitors labelled {selector}: the monitor's labels must keep them"
        ),
    }
}

/// 403 when a key with a label selector would create (or leave) a monitor
/// whose labels do not hold it: the key could not reach it afterwards.
pub(super) fn check_selector(
    user: &crate::auth::AuthUser,
    labels: &uptime_labels::Labels,
) -> Result<(), crate::error::ApiError> {
    match user.label_selector.as_deref() {
        Some(key) if !key.selector.matches(labels) => Err(outside_selector(&key.selector)),
        _ => Ok(()),
    }
}

/// The `?label=key=value` terms of a query string, ANDed, or 400 naming
/// `label`. `None` when there are none.
pub(super) fn filter_of(query: &str) -> Result<Option<uptime_labels::Selector>, Vec<FieldError>> {
    let terms: Vec<String> = url::form_urlencoded::parse(query.as_bytes())
        .filter(|(name, _)| name == "label")
        .map(|(_, value)| value.into_owned())
        .collect();
    if terms.is_empty() {
        return Ok(None);
    }
    uptime_labels::Selector::parse_terms(terms.iter().map(String::as_str))
        .map(Some)
        .map_err(|(i, error)| {
            let message = match error {
                uptime_labels::LabelError::BadTerm => {
                    "each label filter is key=value (e.g. ?label=env=prod), each key once".into()
                }
                other => format!("label filter {}: {other}", i + 1),
            };
            vec![FieldError::new("label", message)]
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_are_key_value_terms_anded() {
        let selector = filter_of("label=env%3Dprod&limit=5&label=team=payments")
            .unwrap()
            .unwrap();
        assert_eq!(selector.to_string(), "env=prod,team=payments");
        assert_eq!(filter_of("limit=5").unwrap(), None);
        for bad in ["label=env", "label=a%20b=1", "label=env=a&label=env=b"] {
            let problems = filter_of(bad).unwrap_err();
            assert_eq!(problems[0].field, "label", "{bad}");
        }
    }
}
