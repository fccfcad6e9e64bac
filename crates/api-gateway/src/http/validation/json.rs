//! The JSON body extractor every handler uses.

use crate::http::error::{ApiError, FieldError};

/// A JSON request body, like `web::Json` (same size limit, content types and
/// error bodies, from the `JsonConfig` installed in `startup`), that also
/// refuses U+0000 in any string, key or value, as `400 invalid request body`:
/// PostgreSQL cannot store it in `text` or `jsonb`, so it would otherwise
/// fail the insert with a 500.
#[derive(Debug)]
pub struct Json<T>(pub T);

impl<T> Json<T> {
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> std::ops::Deref for Json<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: serde::de::DeserializeOwned + 'static> actix_web::FromRequest for Json<T> {
    type Error = actix_web::Error;
    type Future = futures::future::LocalBoxFuture<'static, Result<Self, Self::Error>>;

    fn from_request(
        req: &actix_web::HttpRequest,
        payload: &mut actix_web::dev::Payload,
    ) -> Self::Future {
        // Read as a JSON value first: syntax, size and content-type errors
        // come out exactly as `web::Json` reports them, and the strings can be
        // looked at before the typed value is built.
        let value = actix_web::web::Json::<serde_json::Value>::from_request(req, payload);
        Box::pin(async move {
            let value = value.await?.into_inner();
            Ok(Json(checked(value)?))
        })
    }
}

/// `value` as a `T`, by the rules of [`Json`] (U+0000 refused, integral
/// floats read as integers): for a route that reads its body itself (an
/// apply, whose size limit is a setting).
pub fn checked<T: serde::de::DeserializeOwned>(
    mut value: serde_json::Value,
) -> Result<T, ApiError> {
    integral_floats_as_integers(&mut value);
    if let Some(field) = nul_in(&value) {
        return Err(ApiError::invalid_field(&field, NUL_MESSAGE));
    }
    T::deserialize(value)
        .map_err(|e| ApiError::InvalidBody(vec![FieldError::new("body", e.to_string())]))
}

/// JSON Schema's `integer` is any number without a fractional part, `80.0`
/// included; serde would refuse `80.0` for an `i64`. No request field is
/// fractional, so such numbers become integers before the typed value is built.
fn integral_floats_as_integers(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Number(n) if n.is_f64() => {
            if let Some(f) = n.as_f64() {
                // Within ±2^53 every integral f64 converts to i64 exactly.
                if f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0 {
                    *value = Value::from(f as i64);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// Why a string with U+0000 is refused.
/// The JSON Schema `pattern` of the strings [`Json`] lets through: any
/// text without U+0000.
pub const TEXT_PATTERN: &str = "^[^\\u0000]*$";

pub const NUL_MESSAGE: &str = "must not contain the NUL character (\\u0000)";

/// The path (`name`, `items[2]`, `a.b`; `body` for the top level) of the
/// first string or object key holding U+0000 in `value`. The walk allocates
/// nothing unless it finds one: the path is built on the way back out.
fn nul_in(value: &serde_json::Value) -> Option<String> {
    let mut segments = nul_segments(value)?;
    segments.reverse();
    let mut path = String::new();
    for segment in segments {
        match segment {
            Segment::Key(key) if path.is_empty() => path.push_str(key),
            Segment::Key(key) => {
                path.push('.');
                path.push_str(key);
            }
            Segment::Index(i) => {
                if path.is_empty() {
                    path.push_str("body");
                }
                path.push_str(&format!("[{i}]"));
            }
        }
    }
    Some(if path.is_empty() { "body".into() } else { path })
}

enum Segment<'a> {
    Key(&'a str),
    Index(usize),
}

/// The segments, innermost first, leading to the first U+0000 (an object
/// whose key holds one is itself the place).
fn nul_segments(value: &serde_json::Value) -> Option<Vec<Segment<'_>>> {
    use serde_json::Value;
    match value {
        Value::String(s) => s.contains('\0').then(Vec::new),
        Value::Array(items) => items.iter().enumerate().find_map(|(i, item)| {
            let mut segments = nul_segments(item)?;
            segments.push(Segment::Index(i));
            Some(segments)
        }),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            if key.contains('\0') {
                return Some(Vec::new());
            }
            let mut segments = nul_segments(item)?;
            segments.push(Segment::Key(key));
            Some(segments)
        }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_characters_are_found_with_their_path() {
        let v = serde_json::json!({"a": "ok", "b": ["x", "y\u{0}"], "c": {"d": "\u{0}"}});
        assert_eq!(nul_in(&v).as_deref(), Some("b[1]"));
        let v = serde_json::json!({"c": {"d": "\u{0}"}});
        assert_eq!(nul_in(&v).as_deref(), Some("c.d"));
        let v = serde_json::json!({"k\u{0}": 1});
        assert_eq!(nul_in(&v).as_deref(), Some("body"));
        assert_eq!(nul_in(&serde_json::json!("\u{0}")).as_deref(), Some("body"));
        assert_eq!(nul_in(&serde_json::json!({"a": "\\u0000", "n": 0})), None);
    }

    #[test]
    fn integral_floats_become_integers_and_others_stay() {
        let mut v = serde_json::json!({"a": 80.0, "b": [1.0, 1.5], "c": -0.0, "d": 1e300});
        integral_floats_as_integers(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"a": 80, "b": [1, 1.5], "c": 0, "d": 1e300})
        );
    }
}
