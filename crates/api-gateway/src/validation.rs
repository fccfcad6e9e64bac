//! Collecting field errors so one response names every problem at once.

use crate::error::{ApiError, FieldError};

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
