//! Flat JSON bodies made of groups of fields. A monitor's request and
//! response bodies are one flat object (`{"name", "type", "method", ...}`)
//! whose fields have different owners: the fields every monitor has
//! ([`super::common`]), each kind's options ([`super::kinds`]) and the
//! placement ([`super::placement`]). Each owner declares its fields as a
//! group; the bodies ([`super::types`]) are the groups side by side.
//!
//! serde's `flatten` would do that, but it changes the API: an unknown field
//! is no longer answered with the list of known ones, and utoipa documents
//! a flattened struct as an `allOf`. So requests are read here key by key,
//! exactly as a derived flat struct reads them (the same errors, the first
//! in the body's order), and each body's schema is one object holding every
//! group's properties in order.

use serde::de::{Expected, MapAccess, SeqAccess};
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema};
use utoipa::openapi::RefOr;

/// Some fields of a flat request body.
pub(super) trait FieldGroup: Default {
    /// The fields' JSON names, in the order the body lists them.
    const NAMES: &'static [&'static str];

    /// Reads the value of `key` when it is one of this group's fields.
    fn read_entry<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
    ) -> Result<bool, A::Error>;

    /// Reads the group's fields from a JSON array, which serde accepts for
    /// a struct (its fields' values in order); `read` counts the elements
    /// taken so far, for the error when a required one is missing.
    fn read_seq<'de, A: SeqAccess<'de>>(
        &mut self,
        seq: &mut A,
        read: &mut usize,
        expected: &dyn Expected,
    ) -> Result<(), A::Error>;
}

/// A field's JSON name: its Rust name unless given.
macro_rules! json_name {
    ($field:ident) => {
        stringify!($field)
    };
    ($field:ident $json:literal) => {
        $json
    };
}
pub(super) use json_name;

/// Implements [`FieldGroup`] for a struct of `Option` fields.
///
/// `create`: each field as a create request has it, `None` when absent or
/// `null`. `update`: each an `Option<Option<T>>`, `None` when absent,
/// `Some(None)` for `null` (a PATCH's "clear it"). A field whose JSON name
/// is not its Rust name says so: `kind as "type"`.
macro_rules! field_group {
    (create $group:ty { $($field:ident $(as $json:literal)?),* $(,)? }) => {
        impl $crate::routes::monitors::fields::FieldGroup for $group {
            const NAMES: &'static [&'static str] =
                &[$($crate::routes::monitors::fields::json_name!($field $($json)?)),*];

            fn read_entry<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                $(
                    if key == $crate::routes::monitors::fields::json_name!($field $($json)?) {
                        self.$field = map.next_value()?;
                        return Ok(true);
                    }
                )*
                let _ = map;
                Ok(false)
            }

            fn read_seq<'de, A: serde::de::SeqAccess<'de>>(
                &mut self,
                seq: &mut A,
                read: &mut usize,
                expected: &dyn serde::de::Expected,
            ) -> Result<(), A::Error> {
                $(
                    self.$field = match seq.next_element()? {
                        Some(value) => value,
                        None => return Err(serde::de::Error::invalid_length(*read, expected)),
                    };
                    *read += 1;
                )*
                let _ = (seq, read, expected);
                Ok(())
            }
        }
    };
    (update $group:ty { $($field:ident $(as $json:literal)?),* $(,)? }) => {
        impl $crate::routes::monitors::fields::FieldGroup for $group {
            const NAMES: &'static [&'static str] =
                &[$($crate::routes::monitors::fields::json_name!($field $($json)?)),*];

            fn read_entry<'de, A: serde::de::MapAccess<'de>>(
                &mut self,
                key: &str,
                map: &mut A,
            ) -> Result<bool, A::Error> {
                $(
                    if key == $crate::routes::monitors::fields::json_name!($field $($json)?) {
                        self.$field = Some(map.next_value()?);
                        return Ok(true);
                    }
                )*
                let _ = map;
                Ok(false)
            }

            fn read_seq<'de, A: serde::de::SeqAccess<'de>>(
                &mut self,
                seq: &mut A,
                _read: &mut usize,
                _expected: &dyn serde::de::Expected,
            ) -> Result<(), A::Error> {
                // Every field of an update has a default: an array that
                // ends early leaves the rest out.
                $( self.$field = seq.next_element()?; )*
                let _ = seq;
                Ok(())
            }
        }
    };
}
pub(super) use field_group;

/// How many names `parts` hold together.
pub(super) const fn count(parts: &[&[&str]]) -> usize {
    let mut n = 0;
    let mut i = 0;
    while i < parts.len() {
        n += parts[i].len();
        i += 1;
    }
    n
}

/// The names of `parts` one after the other: a body's field list, for the
/// error naming an unknown field.
pub(super) const fn concat<const N: usize>(parts: &[&[&'static str]]) -> [&'static str; N] {
    let mut out = [""; N];
    let mut k = 0;
    let mut i = 0;
    while i < parts.len() {
        let mut j = 0;
        while j < parts[i].len() {
            out[k] = parts[i][j];
            k += 1;
            j += 1;
        }
        i += 1;
    }
    assert!(k == N, "N is the count of the parts' names");
    out
}

/// One object schema with the properties (and required properties) of
/// every part, in order, and `description`. `closed`: unknown properties
/// are refused (`additionalProperties: false`), as requests refuse them.
pub(super) fn object_of(
    description: &str,
    closed: bool,
    parts: impl IntoIterator<Item = RefOr<Schema>>,
) -> RefOr<Schema> {
    let mut object = ObjectBuilder::new();
    for part in parts {
        let RefOr::T(Schema::Object(part)) = part else {
            unreachable!("a field group's schema is an inline object");
        };
        for (name, property) in part.properties {
            object = object.property(name, property);
        }
        for name in part.required {
            object = object.required(name);
        }
    }
    object = object.description(Some(description));
    if closed {
        object = object.additional_properties(Some(AdditionalProperties::FreeForm(false)));
    }
    object.into()
}
