//! The check spec every kind fits ([`CheckSpecV2`]: tcp, tls, dns and icmp
//! besides http and keyword, and the richer http options: method, headers,
//! body, basic auth, assertions), first published in `check-due.v3` (retired
//! in issue 20) and carried by `check-due.v4`; `check-due.v5` carries it with
//! the password sealed ([`crate::CheckSpecV3`]). The database keeps a
//! monitor's options as [`CheckOptionsV1`].

use crate::{KeywordType, MonitorKind};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// What a checker needs to know to check a monitor: a snapshot taken when the
/// check was scheduled, so checkers never read the database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckSpecV2 {
    pub kind: MonitorKind,
    /// http, keyword: an absolute `http://` or `https://` URL. tcp: `host:port`.
    /// tls: `host:port` or an `https://` URL (port 443 unless it names one).
    /// dns: the name to query. icmp: a host name or an IP address.
    pub target: String,
    pub timeout_secs: u32,
    /// http, keyword: the status a passing response has. Ignored by the
    /// other kinds.
    pub expected_status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_type: Option<KeywordType>,
    /// What the kind needs besides the target; omitted when empty (a plain
    /// GET, an A query, no pinned certificate).
    #[serde(default, skip_serializing_if = "CheckOptionsV1::is_empty")]
    pub options: CheckOptionsV1,
}

/// The options of a check beyond its target, by kind. Each part is absent
/// when the check uses its defaults. The database keeps a monitor's options
/// in this form (`monitors.check_options`) without the basic-auth password,
/// which has a column of its own and is only ever added to due checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckOptionsV1 {
    /// http, keyword: the request to send; absent: `GET` without headers or body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpRequestV1>,
    /// http, keyword: conditions on the response that must all hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assertions: Vec<AssertionV1>,
    /// dns: the query; absent: an `A` query to the system resolver.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<DnsQueryV1>,
    /// tls: what the certificate must be besides valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<TlsOptionsV1>,
}

impl CheckOptionsV1 {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// The HTTP method of a check's request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
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

/// The request an http or keyword check sends.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpRequestV1 {
    #[serde(default)]
    pub method: HttpMethod,
    /// Request headers, in order (a name may repeat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderV1>,
    /// The request body, sent as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuthV1>,
}

/// One request header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct HeaderV1 {
    pub name: String,
    pub value: String,
}

// Its `Debug` prints the password as `[redacted]` (by hand, below), so a
// `{:?}` of a spec cannot leak it.
/// HTTP basic authentication. The password travels only in due checks (the
/// checker needs it); the API never returns it, and alerts and logs never
/// show it.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BasicAuthV1 {
    pub username: String,
    /// Absent in the stored options; present in due checks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password: Option<String>,
}

impl std::fmt::Debug for BasicAuthV1 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuthV1")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .finish()
    }
}

/// A condition on an http check's response, in the spirit of Checkly's
/// assertions: `source` (and `property`, for `header` and `json_body`)
/// picks a value, `comparison` compares it with `target`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AssertionV1 {
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
pub struct DnsQueryV1 {
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
pub struct TlsOptionsV1 {
    /// The SHA-256 of the leaf certificate (DER), 64 lowercase hex digits:
    /// any other certificate fails the check.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint_sha256: Option<String>,
}
