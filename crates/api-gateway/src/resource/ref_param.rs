//! The `{ref}` path parameter of every `.../by-ref/{ref}` route as the
//! OpenAPI document shows it: one definition, its syntax
//! [`crate::refs::REF_PATTERN`], named per kind (`params(PolicyRef)`).

use crate::refs::{MAX_REF_CHARS, REF_PATTERN};
use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn};
use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
use utoipa::openapi::Required;

/// The parameter, `noun` naming whose ref it is ("policy").
pub fn ref_parameter(noun: &str) -> Parameter {
    let max = MAX_REF_CHARS;
    ParameterBuilder::new()
        .name("ref")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(format!(
            "The {noun}'s ref: 1 to {max} of lowercase letters, digits, `.`, `_`, `-`, \
             alphanumeric at both ends"
        )))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(SchemaType::Type(Type::String))
                .min_length(Some(1))
                .max_length(Some(max))
                .pattern(Some(REF_PATTERN)),
        ))
        .build()
}

macro_rules! ref_params {
    ($($(#[$doc:meta])* $name:ident => $noun:literal),* $(,)?) => {$(
        $(#[$doc])*
        pub struct $name;

        impl utoipa::IntoParams for $name {
            fn into_params(_: impl Fn() -> Option<ParameterIn>) -> Vec<Parameter> {
                vec![ref_parameter($noun)]
            }
        }
    )*};
}

ref_params!(
    /// A monitor's ref.
    MonitorRef => "monitor",
    /// An alert contact's ref.
    ContactRef => "contact",
    /// A maintenance window's ref.
    WindowRef => "window",
    /// A status page's ref.
    PageRef => "page",
    /// An escalation policy's ref.
    PolicyRef => "policy",
);

/// The `{ref}` of the path, extracted as `web::Path<String>` is (its
/// errors the same). Not a `web::Path`, so that the OpenAPI document takes
/// the parameter from `params(...)` ([`ref_parameter`]) alone.
pub struct RefPath(pub String);

impl std::ops::Deref for RefPath {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl actix_web::FromRequest for RefPath {
    type Error = actix_web::Error;
    type Future = std::future::Ready<Result<Self, Self::Error>>;

    fn from_request(
        req: &actix_web::HttpRequest,
        payload: &mut actix_web::dev::Payload,
    ) -> Self::Future {
        let path = actix_web::web::Path::<String>::from_request(req, payload).into_inner();
        std::future::ready(path.map(|p| RefPath(p.into_inner())))
    }
}
