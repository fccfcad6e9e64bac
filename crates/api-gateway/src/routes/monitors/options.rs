//! The request and response bodies of a monitor's check options (issue 12):
//! the http request (method, headers, body, basic auth), assertions, the dns
//! query and the pinned certificate. The API's enums mirror the contracts'
//! (`uptime_contracts::spec`), with the API's documentation.

use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Schema, Type};
use utoipa::openapi::RefOr;
use utoipa::ToSchema;

/// Most request headers a check sends.
pub const MAX_HEADERS: usize = 20;
/// Longest header name.
pub const MAX_HEADER_NAME_CHARS: usize = 128;
/// Longest header value.
pub const MAX_HEADER_VALUE_CHARS: usize = 1024;
/// Largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// Longest basic-auth user name and password.
pub const MAX_CREDENTIAL_CHARS: usize = 256;
/// Most assertions per monitor.
pub const MAX_ASSERTIONS: usize = 20;
/// Longest assertion property (a header name or a JSONPath).
pub const MAX_PROPERTY_CHARS: usize = 256;
/// Longest assertion target.
pub const MAX_TARGET_CHARS: usize = 1024;
/// Most values in `dns_expected`, and the longest of them.
pub const MAX_DNS_EXPECTED: usize = 20;
pub const MAX_DNS_EXPECTED_CHARS: usize = 255;

/// The method of an http or keyword check's request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl From<uptime_contracts::HttpMethod> for HttpMethod {
    fn from(m: uptime_contracts::HttpMethod) -> Self {
        use uptime_contracts::HttpMethod as M;
        match m {
            M::Get => Self::Get,
            M::Head => Self::Head,
            M::Post => Self::Post,
            M::Put => Self::Put,
            M::Patch => Self::Patch,
            M::Delete => Self::Delete,
            M::Options => Self::Options,
        }
    }
}

impl From<HttpMethod> for uptime_contracts::HttpMethod {
    fn from(m: HttpMethod) -> Self {
        match m {
            HttpMethod::Get => Self::Get,
            HttpMethod::Head => Self::Head,
            HttpMethod::Post => Self::Post,
            HttpMethod::Put => Self::Put,
            HttpMethod::Patch => Self::Patch,
            HttpMethod::Delete => Self::Delete,
            HttpMethod::Options => Self::Options,
        }
    }
}

/// One request header. Names may repeat (each is sent).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RequestHeader {
    /// An HTTP token, 1 to 128 characters. Not `Host`, `Content-Length`,
    /// `Transfer-Encoding`, `Connection`, `Keep-Alive`, `Upgrade`, `TE`,
    /// `Trailer`, `Expect` or `Proxy-Connection` (the client sets those);
    /// not `Authorization` together with `basic_auth`.
    #[schema(
        min_length = 1,
        max_length = 128,
        pattern = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"
    )]
    pub name: String,
    /// At most 1024 characters of visible ASCII, space and tab (no CR or LF).
    /// Shown back in responses: put secrets in `basic_auth`.
    #[schema(max_length = 1024, pattern = "^[\\t\\u0020-\\u007e]*$")]
    pub value: String,
}

impl From<uptime_contracts::Header> for RequestHeader {
    fn from(h: uptime_contracts::Header) -> Self {
        Self {
            name: h.name,
            value: h.value,
        }
    }
}

/// HTTP basic authentication for the check's request. The password is
/// write-only: no response ever shows it.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BasicAuthInput {
    /// 1 to 256 characters, no control characters and no `:`.
    #[schema(
        min_length = 1,
        max_length = 256,
        pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f:]+$"
    )]
    pub username: String,
    /// At most 256 characters, no control characters. Left out or `null`:
    /// the stored password is kept (none when there is none), unless the
    /// PATCH moves the target to another origin (then `400`: restate it);
    /// `""` removes it. Stored sealed (encrypted); a deployment with no
    /// sealing key refuses a password (`400`).
    #[schema(max_length = 256, pattern = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$")]
    pub password: Option<String>,
}

impl std::fmt::Debug for BasicAuthInput {
    // The password never reaches a log, whoever prints the request.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuthInput")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// Basic authentication as responses show it: never the password.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct BasicAuthView {
    pub username: String,
    /// Whether a (non-empty) password is stored.
    pub password_set: bool,
}

/// Where an assertion's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssertionSource {
    /// The final response's status code (`equals`, `not_equals`,
    /// `greater_than`, `less_than`; target 100 to 599).
    StatusCode,
    /// The response header named by `property` (several values joined by `, `).
    Header,
    /// The values the JSONPath in `property` (`$.status`, `$.checks[0].ok`)
    /// selects in the JSON body. Every path runs on a budget (see
    /// `property`): one over it fails the check.
    JsonBody,
    /// The body as text.
    TextBody,
    /// Milliseconds to the whole response (`greater_than`, `less_than`;
    /// target 0 to 120000).
    ResponseTime,
}

/// How an assertion compares its value with `target`. `greater_than` and
/// `less_than` are numeric; `matches` takes a regular expression (Rust
/// `regex` syntax, at most 1024 bytes, compiled size at most 1 MiB,
/// matching in time linear in the text, itself at most the body read), and
/// is also the way to match a JSONPath's value: its `match()` and
/// `search()` functions are refused. `is_empty` and `not_empty` take no
/// `target`.
// (Unit variants' own comments do not reach the OpenAPI document: what
// clients must know is said here.)
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum AssertionComparison {
    Equals,
    NotEquals,
    Contains,
    NotContains,
    /// Numeric: `target` must be a number.
    GreaterThan,
    /// Numeric: `target` must be a number.
    LessThan,
    /// `target` is a regular expression (Rust `regex` syntax, at most 1024
    /// bytes, compiled size at most 1 MiB; matching takes linear time in
    /// the text, itself at most the body read). Also the way to match a
    /// JSONPath's value: its `match()` and `search()` functions are refused.
    Matches,
    /// Takes no `target`.
    IsEmpty,
    /// Takes no `target`.
    NotEmpty,
}

macro_rules! mirror {
    ($api:ident, $contract:path, [$($v:ident),*]) => {
        impl From<$contract> for $api {
            fn from(v: $contract) -> Self {
                use $contract as C;
                match v { $(C::$v => Self::$v),* }
            }
        }
        impl From<$api> for $contract {
            fn from(v: $api) -> Self {
                match v { $($api::$v => Self::$v),* }
            }
        }
    };
}

mirror!(
    AssertionSource,
    uptime_contracts::AssertionSource,
    [StatusCode, Header, JsonBody, TextBody, ResponseTime]
);
mirror!(
    AssertionComparison,
    uptime_contracts::Comparison,
    [
        Equals,
        NotEquals,
        Contains,
        NotContains,
        GreaterThan,
        LessThan,
        Matches,
        IsEmpty,
        NotEmpty
    ]
);
mirror!(
    DnsRecordType,
    uptime_contracts::DnsRecordType,
    [A, Aaaa, Cname, Mx, Txt, Ns]
);

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
                    .pattern(Some(crate::openapi::TEXT_PATTERN)),
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
    // and the rules `option_rules::check_jsonpath_cost`'s.
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
            source: a.source.into(),
            property: a.property,
            comparison: a.comparison.into(),
            target: a.target,
        }
    }
}

impl From<Assertion> for uptime_contracts::Assertion {
    fn from(a: Assertion) -> Self {
        Self {
            source: a.source.into(),
            property: a.property,
            comparison: a.comparison.into(),
            target: a.target,
        }
    }
}

/// The DNS record type a dns check asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum DnsRecordType {
    A,
    Aaaa,
    Cname,
    Mx,
    Txt,
    Ns,
}
