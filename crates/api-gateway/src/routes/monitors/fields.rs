//! Flat JSON bodies made of groups of fields. A monitor's request and
//! response bodies are one flat object (`{"name", "type", "method", ...}`)
//! whose fields have different owners: the fields every monitor has
//! ([`super::common`]), each kind's options ([`super::kinds`]) and the
//! placement ([`super::placement`]). Each owner declares its fields as a
//! group deriving `Deserialize` and `ToSchema`; a body
//! ([`super::types`]) flattens its groups (`#[serde(flatten)]`).
//!
//! Flatten alone would change the API in three ways, which this module
//! keeps as they were: an unknown field is refused naming every known one
//! (flatten lets it through, and `deny_unknown_fields` does not combine
//! with flatten); an array reads as the fields' values in order, as a
//! derived struct reads one ([`read_closed`]); and utoipa documents a
//! flattened struct as an `allOf`, so each body's schema is one object
//! holding every group's properties in order ([`object_of`]), the bounded
//! numbers' `minimum` and `maximum` taken from `uptime_contracts::bounds`.

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde::Deserialize;
use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, Schema};
use utoipa::openapi::RefOr;

/// A PATCH field: `None` when absent (serde's `default`), `Some(None)` for
/// `null` (a PATCH's "clear it"), which a plain `Option<Option<T>>` would
/// read as absent.
pub(crate) fn given<'de, D, T>(deserializer: D) -> Result<Option<Option<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(deserializer).map(Some)
}

/// The JSON names of a group's fields, in order, as its derived
/// `Deserialize` lists them.
pub(super) fn names_of<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut names: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut names));
    names
}

/// A deserializer that only notes the field names a struct asks for.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

impl<'de> Deserializer<'de> for FieldNames<'_> {
    type Error = de::value::Error;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom("a field group is a struct"))
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Self::Error> {
        *self.0 = fields;
        Err(de::Error::custom("field names read"))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes
        byte_buf option unit unit_struct newtype_struct seq tuple tuple_struct map
        enum identifier ignored_any
    }
}

/// Reads the flat body `body` (named so in errors) of fields `names` with
/// `read`, its derived flattening `Deserialize`: a field not in `names` is
/// refused as a derived struct refuses it, and an array is read as the
/// values of `names` in order (`every_element`: a create's, which must hold
/// one for every field, as its derived struct had no defaults).
pub(super) fn read_closed<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    body: &str,
    names: &'static [&'static str],
    every_element: bool,
    read: fn(serde_json::Value) -> Result<T, serde_json::Error>,
) -> Result<T, D::Error> {
    use serde_json::Value;
    let value = match Value::deserialize(deserializer)? {
        Value::Object(fields) => {
            if let Some(unknown) = fields.keys().find(|k| !names.contains(&k.as_str())) {
                return Err(de::Error::unknown_field(unknown, names));
            }
            Value::Object(fields)
        }
        Value::Array(values) => {
            let n = values.len();
            if n > names.len() {
                return Err(de::Error::invalid_length(n, &"fewer elements in array"));
            }
            if every_element && n < names.len() {
                let expected = format!("struct {body} with {} elements", names.len());
                return Err(de::Error::invalid_length(n, &expected.as_str()));
            }
            Value::Object(names.iter().map(|n| n.to_string()).zip(values).collect())
        }
        other => other,
    };
    read(value).map_err(de::Error::custom)
}

/// One object schema with the properties (and required properties) of
/// every part, in order, and `description`. `closed`: a request body, which
/// refuses unknown properties (`additionalProperties: false`) and whose
/// bounded numbers carry their range.
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
        for (name, mut property) in part.properties {
            if closed {
                bound(&name, &mut property);
            }
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

/// The range of the bounded number `name`, if it is one.
fn bound(name: &str, property: &mut RefOr<Schema>) {
    let Some(bound) = uptime_contracts::bounds::ALL
        .iter()
        .find(|b| b.field == name)
    else {
        return;
    };
    if let RefOr::T(Schema::Object(number)) = property {
        number.minimum = Some(bound.min.into());
        number.maximum = Some(bound.max.into());
    }
}

/// A group's request and response fields, each declared once, as the
/// three structs a flat body flattens ([`super::types`]): its create
/// request's, its PATCH's and its response's, in the order given.
///
/// ```text
/// /// The create field's description.
/// name: opt Type [min_length = 1],   // `req Type`: required
///     clear /// The PATCH field's description.  // `kept`: `null` refused; `own`: schema as given
///     => /// The response field's description.
///     ShownType;
/// shown /// A response-only field.
/// name: Type;
/// ```
///
/// A PATCH field reads `null` apart from absent ([`given`]); `kept`
/// documents it as the plain type, `clear` as nullable. The bracketed
/// schema (bounds, patterns) is the create's and the PATCH's; a field
/// without `=> ...` is not in the response.
macro_rules! api_fields {
    (
        $(#[$cm:meta])* pub struct $create:ident;
        $(#[$um:meta])* pub struct $update:ident;
        $(#[$sm:meta])* pub struct $shown:ident;
        $($fields:tt)*
    ) => {
        $crate::routes::monitors::fields::api_fields!(@munch
            [$(#[$cm])* pub struct $create] [$(#[$um])* pub struct $update]
            [$(#[$sm])* pub struct $shown] [] [] [] $($fields)*);
    };
    (@munch [$($c:tt)*] [$($u:tt)*] [$($s:tt)*] [$($cf:tt)*] [$($uf:tt)*] [$($sf:tt)*]) => {
        $($c)* { $($cf)* }
        $($u)* { $($uf)* }
        $($s)* { $($sf)* }
    };
    (@munch $c:tt $u:tt $s:tt $cf:tt $uf:tt [$($sf:tt)*]
        shown $(#[$sa:meta])* $name:ident: $sty:ty; $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@munch $c $u $s $cf $uf
            [$($sf)* $(#[$sa])* pub $name: $sty,] $($rest)*);
    };
    (@munch $c:tt $u:tt $s:tt $cf:tt $uf:tt [$($sf:tt)*]
        $(#[$ca:meta])* $name:ident: $cmode:ident $ty:ty $([$($bound:tt)*])?,
        $umode:ident $(#[$ua:meta])*
        $(=> $(#[$sa:meta])* $sty:ty)?; $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@create $cmode $c $u $s $cf $uf [$($sf)* $($(#[$sa])* pub $name: $sty,)?]
            $name [$ty] [$(#[$ca])* $(#[schema($($bound)*)])?]
            @update $umode [$([$($bound)*])?] [$(#[$ua])*] $($rest)*);
    };
    (@create req $c:tt $u:tt $s:tt [$($cf:tt)*] $uf:tt $sf:tt $name:ident [$ty:ty] [$($ca:tt)*]
        @update $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@update $c $u $s [$($cf)* $($ca)* pub $name: $ty,] $uf $sf $name [$ty] $($rest)*);
    };
    (@create opt $c:tt $u:tt $s:tt [$($cf:tt)*] $uf:tt $sf:tt $name:ident [$ty:ty] [$($ca:tt)*]
        @update $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@update $c $u $s [$($cf)* $($ca)* pub $name: Option<$ty>,] $uf $sf $name [$ty] $($rest)*);
    };
    (@update $c:tt $u:tt $s:tt $cf:tt [$($uf:tt)*] $sf:tt $name:ident [$ty:ty]
        kept [$([$($bound:tt)*])?] [$($ua:tt)*] $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@munch $c $u $s $cf
            [$($uf)* $($ua)* #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
                #[schema(value_type = $ty, required = false)] $(#[schema($($bound)*)])?
                pub $name: Option<Option<$ty>>,]
            $sf $($rest)*);
    };
    (@update $c:tt $u:tt $s:tt $cf:tt [$($uf:tt)*] $sf:tt $name:ident [$ty:ty]
        clear [$([$($bound:tt)*])?] [$($ua:tt)*] $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@munch $c $u $s $cf
            [$($uf)* $($ua)* #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")]
                #[schema(value_type = Option<$ty>, nullable)] $(#[schema($($bound)*)])?
                pub $name: Option<Option<$ty>>,]
            $sf $($rest)*);
    };
    (@update $c:tt $u:tt $s:tt $cf:tt [$($uf:tt)*] $sf:tt $name:ident [$ty:ty]
        own [$([$($bound:tt)*])?] [$($ua:tt)*] $($rest:tt)*) => {
        $crate::routes::monitors::fields::api_fields!(@munch $c $u $s $cf
            [$($uf)* $($ua)* #[serde(default, deserialize_with = "crate::routes::monitors::fields::given")] pub $name: Option<Option<$ty>>,]
            $sf $($rest)*);
    };
}
pub(super) use api_fields;
