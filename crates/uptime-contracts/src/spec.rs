//! The check spec: what a checker needs to check a monitor, by kind (the
//! target, the timeout, the expected status, the keyword, and the options:
//! the http request with its basic auth, assertions, the dns query, a pinned
//! certificate). Due checks carry it; the database keeps a monitor's
//! [`CheckOptions`] (`monitors.check_options`) without the basic-auth
//! password, which has a column of its own.
//!
//! The basic-auth password is only ever carried sealed
//! ([`BasicAuth::password_sealed`], see `uptime-secrets`): anyone who can
//! subscribe to the due checks (or read the dead-letter stream a due check
//! may end up in) sees ciphertext only; a checker opens it with its keyring
//! just before the request.
//!
//! These types are the parts of the current `check-due` version and carry
//! their published schema names (`#[schemars(rename)]`, doc comments
//! verbatim): the schema test fails on any change that would alter the
//! published schema, which then needs a new version.

use crate::{ExpectedStatus, KeywordType, MonitorKind, TimeoutSecs};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

// The doc comments of the types below feed the published schema of
// check-due.v5, as they were published (names of retired types included).
/// [`CheckSpecV2`] with sealed secrets: what a checker needs to check a
/// monitor, a snapshot taken when the check was scheduled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckSpecV3")]
pub struct CheckSpec {
    pub kind: MonitorKind,
    /// As in [`CheckSpecV2`]: a URL (http, keyword, tls), `host:port` (tcp,
    /// tls), a name (dns) or a host (icmp).
    pub target: String,
    pub timeout_secs: TimeoutSecs,
    /// http, keyword: the status a passing response has.
    pub expected_status: ExpectedStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_type: Option<KeywordType>,
    /// What the kind needs besides the target; omitted when empty.
    #[serde(default, skip_serializing_if = "CheckOptions::is_empty")]
    pub options: CheckOptions,
}

impl CheckSpec {
    /// The sealed password of the basic auth, if there is one.
    pub fn password_sealed(&self) -> Option<&str> {
        self.options
            .http
            .as_ref()
            .and_then(|h| h.basic_auth.as_ref())
            .and_then(|a| a.password_sealed.as_deref())
    }

    /// This spec with `password_sealed` as its basic auth's password (none
    /// when the request has no basic auth).
    pub fn sealed(mut self, password_sealed: Option<String>) -> CheckSpec {
        if let Some(auth) = self
            .options
            .http
            .as_mut()
            .and_then(|h| h.basic_auth.as_mut())
        {
            auth.password_sealed = password_sealed;
        }
        self
    }
}

/// [`CheckOptionsV1`] whose request carries a sealed password.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "CheckOptionsV2")]
pub struct CheckOptions {
    /// http, keyword: the request to send; absent: `GET` without headers or body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpRequest>,
    /// http, keyword: conditions on the response that must all hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<Assertion>,
    /// dns: the query; absent: an `A` query to the system resolver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsQuery>,
    /// tls: what the certificate must be besides valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsOptions>,
}

impl CheckOptions {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }

    /// These options without the basic-auth password: what the database
    /// keeps (the password has a column of its own).
    pub fn without_password(mut self) -> CheckOptions {
        if let Some(auth) = self.http.as_mut().and_then(|h| h.basic_auth.as_mut()) {
            auth.password_sealed = None;
        }
        self
    }
}

/// The HTTP method of a check's request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(description = "The method of an http or keyword check's request.")
)]
#[serde(rename_all = "UPPERCASE")]
pub enum HttpMethod {
    #[default]
    Get,
    Head,
    Post,
    Put,
    Patch,
    Delete,
    Options,
}

impl HttpMethod {
    pub const ALL: [HttpMethod; 7] = [
        HttpMethod::Get,
        HttpMethod::Head,
        HttpMethod::Post,
        HttpMethod::Put,
        HttpMethod::Patch,
        HttpMethod::Delete,
        HttpMethod::Options,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            HttpMethod::Get => "GET",
            HttpMethod::Head => "HEAD",
            HttpMethod::Post => "POST",
            HttpMethod::Put => "PUT",
            HttpMethod::Patch => "PATCH",
            HttpMethod::Delete => "DELETE",
            HttpMethod::Options => "OPTIONS",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.as_str() == s)
    }
}

/// [`HttpRequestV1`] with [`BasicAuthV2`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "HttpRequestV2")]
pub struct HttpRequest {
    #[serde(default)]
    pub method: HttpMethod,
    /// Request headers, in order (a name may repeat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<Header>,
    /// The request body, sent as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuth>,
}

/// One request header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "HeaderV1")]
pub struct Header {
    pub name: String,
    pub value: String,
}

/// HTTP basic authentication with the password sealed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "BasicAuthV2")]
pub struct BasicAuth {
    pub username: String,
    /// The password sealed by the api-gateway (`v1.<key id>.<base64url>`,
    /// `uptime-secrets`, purpose `monitors.http_password`); only a checker
    /// configured with that key opens it. Absent: no password (the request
    /// sends `username:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_sealed: Option<String>,
}

// By hand: even ciphertext stays out of logs.
impl std::fmt::Debug for BasicAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuth")
            .field("username", &self.username)
            .field(
                "password_sealed",
                &self.password_sealed.as_ref().map(|_| "[sealed]"),
            )
            .finish()
    }
}

/// A condition on an http check's response, in the spirit of Checkly's
/// assertions: `source` (and `property`, for `header` and `json_body`)
/// picks a value, `comparison` compares it with `target`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "AssertionV1")]
pub struct Assertion {
    pub source: AssertionSource,
    /// header: the header's name. json_body: a JSONPath (`$.status`,
    /// `$.checks[0].ok`). Absent for the other sources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub property: Option<String>,
    pub comparison: Comparison,
    /// What the value is compared with; absent for `is_empty` and
    /// `not_empty`. Numbers (status code, milliseconds) are written as text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
}

/// Longest `matches` pattern of an assertion, in bytes: the API refuses a
/// longer one and a checker fails a check that carries one.
pub const ASSERTION_PATTERN_MAX_BYTES: usize = 1024;
/// Compiled size limit of a `matches` pattern (the `regex` crate's
/// `size_limit` and lazy-DFA cache), the same for the API's validation and
/// the checker's matching.
pub const ASSERTION_REGEX_SIZE_LIMIT: usize = 1 << 20;

/// Where an assertion's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "snake_case")]
pub enum AssertionSource {
    /// The response's status code.
    StatusCode,
    /// A response header (`property`: its name; several values are joined by `, `).
    Header,
    /// A value in the JSON body (`property`: a JSONPath).
    JsonBody,
    /// The body as text.
    TextBody,
    /// The time to the whole response, in milliseconds.
    ResponseTime,
}

impl AssertionSource {
    pub fn as_str(self) -> &'static str {
        match self {
            AssertionSource::StatusCode => "status_code",
            AssertionSource::Header => "header",
            AssertionSource::JsonBody => "json_body",
            AssertionSource::TextBody => "text_body",
            AssertionSource::ResponseTime => "response_time",
        }
    }
}

/// How an assertion compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
// The API's schema says what clients must know (unit variants' own
// comments do not reach an OpenAPI document).
#[cfg_attr(
    feature = "openapi",
    derive(utoipa::ToSchema),
    schema(
        as = AssertionComparison,
        description = "How an assertion compares its value with `target`. `greater_than` and
`less_than` are numeric; `matches` takes a regular expression (Rust
`regex` syntax, at most 1024 bytes, compiled size at most 1 MiB,
matching in time linear in the text, itself at most the body read), and
is also the way to match a JSONPath's value: its `match()` and
`search()` functions are refused. `is_empty` and `not_empty` take no
`target`."
    )
)]
#[serde(rename_all = "snake_case")]
pub enum Comparison {
    Equals,
    NotEquals,
    Contains,
    NotContains,
    /// Numeric.
    GreaterThan,
    /// Numeric.
    LessThan,
    /// `target` is a regular expression (bounded in size; matching takes
    /// linear time).
    Matches,
    IsEmpty,
    NotEmpty,
}

impl Comparison {
    pub fn as_str(self) -> &'static str {
        match self {
            Comparison::Equals => "equals",
            Comparison::NotEquals => "not_equals",
            Comparison::Contains => "contains",
            Comparison::NotContains => "not_contains",
            Comparison::GreaterThan => "greater_than",
            Comparison::LessThan => "less_than",
            Comparison::Matches => "matches",
            Comparison::IsEmpty => "is_empty",
            Comparison::NotEmpty => "not_empty",
        }
    }

    /// Whether the comparison needs a `target`.
    pub fn needs_target(self) -> bool {
        !matches!(self, Comparison::IsEmpty | Comparison::NotEmpty)
    }
}

/// The DNS record types a dns check can ask for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "UPPERCASE")]
pub enum DnsRecordType {
    #[default]
    A,
    Aaaa,
    Cname,
    Mx,
    Txt,
    Ns,
}

impl DnsRecordType {
    pub const ALL: [DnsRecordType; 6] = [
        DnsRecordType::A,
        DnsRecordType::Aaaa,
        DnsRecordType::Cname,
        DnsRecordType::Mx,
        DnsRecordType::Txt,
        DnsRecordType::Ns,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DnsRecordType::A => "A",
            DnsRecordType::Aaaa => "AAAA",
            DnsRecordType::Cname => "CNAME",
            DnsRecordType::Mx => "MX",
            DnsRecordType::Txt => "TXT",
            DnsRecordType::Ns => "NS",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|t| t.as_str() == s)
    }
}

/// The query a dns check makes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "DnsQueryV1")]
pub struct DnsQuery {
    #[serde(default)]
    pub record_type: DnsRecordType,
    /// Values that must all be in the answer (an address, a name, `10
    /// mail.example.com.` for MX, the text of a TXT record). Empty: any
    /// answer passes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expected: Vec<String>,
    /// The server to ask, `ip` or `ip:port` (port 53 unless given); absent:
    /// the checker's system resolver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<String>,
}

/// What a tls check requires of the certificate besides a valid chain for
/// the name.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(rename = "TlsOptionsV1")]
pub struct TlsOptions {
    /// The SHA-256 of the leaf certificate (DER), 64 lowercase hex digits:
    /// any other certificate fails the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint_sha256: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> CheckSpec {
        CheckSpec {
            kind: MonitorKind::Http,
            target: "https://example.com".into(),
            timeout_secs: crate::TimeoutSecs::of(5),
            expected_status: crate::ExpectedStatus::of(200),
            keyword: None,
            keyword_type: None,
            options: CheckOptions {
                http: Some(HttpRequest {
                    method: HttpMethod::Post,
                    headers: vec![],
                    body: Some("{}".into()),
                    basic_auth: Some(BasicAuth {
                        username: "u".into(),
                        password_sealed: None,
                    }),
                }),
                ..Default::default()
            },
        }
    }

    #[test]
    fn the_sealed_password_travels_and_never_prints() {
        let sealed = spec().sealed(Some("v1.k1.AAAA".into()));
        let json = serde_json::to_string(&sealed).unwrap();
        assert!(json.contains(r#""password_sealed":"v1.k1.AAAA""#), "{json}");
        assert!(!json.contains(r#""password""#), "{json}");
        assert_eq!(sealed.password_sealed(), Some("v1.k1.AAAA"));
        assert!(!format!("{sealed:?}").contains("v1.k1"));
        assert_eq!(sealed.options.clone().without_password(), spec().options);
        assert_eq!(spec().sealed(None).password_sealed(), None);
    }
}
