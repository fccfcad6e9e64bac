//! What an update changes, field by field, in the form the API shows the
//! resource: the plan of `POST /api/v1/apply` lists it, and `PUT
//! .../by-ref/{ref}` writes nothing when it is empty.

use serde::Serialize;
use serde_json::Value;
use utoipa::ToSchema;

/// How a secret value appears in a plan: never its value.
pub const SECRET_SHOWN: &str = "(secret)";

/// One changed field.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FieldChange {
    /// The field's name in the kind's request and response bodies.
    pub field: String,
    /// The value shown before (`"(secret)"` for a secret).
    pub before: Value,
    /// The value shown after (`"(secret)"` for a secret).
    pub after: Value,
}

/// The fields of `fields` whose values differ between the representations
/// `before` and `after` (a field absent from one reads as `null`), in the
/// order of `fields`.
pub fn diff(before: &Value, after: &Value, fields: &[&str]) -> Vec<FieldChange> {
    fields
        .iter()
        .filter_map(|field| {
            let b = before.get(field).unwrap_or(&Value::Null);
            let a = after.get(field).unwrap_or(&Value::Null);
            (b != a).then(|| FieldChange {
                field: (*field).to_string(),
                before: b.clone(),
                after: a.clone(),
            })
        })
        .collect()
}

/// The change of a secret `field`, which is only ever known to differ:
/// shown as `"(secret)"` on both sides (or `null` where there is none).
pub fn secret(field: &str, before_set: bool, after_set: bool) -> FieldChange {
    let shown = |set: bool| {
        if set {
            Value::String(SECRET_SHOWN.into())
        } else {
            Value::Null
        }
    };
    FieldChange {
        field: field.to_string(),
        before: shown(before_set),
        after: shown(after_set),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_the_named_fields_that_differ_are_listed_in_order() {
        let before = json!({"name": "a", "interval_secs": 300, "status": "up"});
        let after = json!({"name": "a", "interval_secs": 60, "status": "down", "ref": "x"});
        assert_eq!(
            diff(&before, &after, &["ref", "name", "interval_secs"]),
            vec![
                FieldChange {
                    field: "ref".into(),
                    before: Value::Null,
                    after: json!("x")
                },
                FieldChange {
                    field: "interval_secs".into(),
                    before: json!(300),
                    after: json!(60)
                },
            ]
        );
        let hidden = secret("secret", true, true);
        assert_eq!(
            (hidden.before, hidden.after),
            (json!("(secret)"), json!("(secret)"))
        );
    }
}
