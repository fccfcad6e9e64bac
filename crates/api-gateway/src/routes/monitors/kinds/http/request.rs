//! The request an http or keyword check sends: method, headers and basic
//! authentication, as requests give them and responses show them, and
//! their rules. Each problem names its field (`headers[2].name`,
//! `basic_auth.username`).

use super::password::BasicAuthDraft;
use crate::validation::Problems;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

/// Most request headers a check sends.
pub const MAX_HEADERS: usize = 20;
/// Longest header name.
pub const MAX_HEADER_NAME_CHARS: usize = 128;
/// Longest header value.
pub const MAX_HEADER_VALUE_CHARS: usize = 1024;
/// Longest basic-auth user name and password.
pub const MAX_CREDENTIAL_CHARS: usize = 256;

// The contracts' method, its OpenAPI schema the API's (the `openapi`
// feature): the checker sends what the API takes.
pub use uptime_contracts::HttpMethod;

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

/// Headers the HTTP client sets itself (framing, routing, connection
/// management): a check may not send its own.
pub const FORBIDDEN_HEADERS: [&str; 10] = [
    "host",
    "content-length",
    "transfer-encoding",
    "connection",
    "keep-alive",
    "upgrade",
    "te",
    "trailer",
    "expect",
    "proxy-connection",
];

pub(crate) fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

pub(crate) fn check_headers(
    problems: &mut Problems,
    headers: &[RequestHeader],
    with_basic_auth: bool,
) {
    if headers.len() > MAX_HEADERS {
        problems.add(
            "headers",
            format!("must hold at most {MAX_HEADERS} headers"),
        );
    }
    for (i, h) in headers.iter().enumerate() {
        let field = format!("headers[{i}].name");
        if !is_token(&h.name) || h.name.len() > MAX_HEADER_NAME_CHARS {
            problems.add(
                &field,
                format!(
                    "must be a header name: 1 to {MAX_HEADER_NAME_CHARS} letters, digits \
                     or !#$%&'*+-.^_`|~"
                ),
            );
        } else if FORBIDDEN_HEADERS.contains(&h.name.to_ascii_lowercase().as_str()) {
            problems.add(&field, format!("{} is set by the HTTP client", h.name));
        } else if with_basic_auth && h.name.eq_ignore_ascii_case("authorization") {
            problems.add(&field, "Authorization would conflict with basic_auth");
        }
        let value_ok = h.value.chars().count() <= MAX_HEADER_VALUE_CHARS
            && h.value
                .bytes()
                .all(|b| b == b'\t' || (0x20..0x7f).contains(&b));
        if !value_ok {
            problems.add(
                &format!("headers[{i}].value"),
                format!(
                    "must be at most {MAX_HEADER_VALUE_CHARS} characters of visible ASCII, \
                     space and tab (no line breaks)"
                ),
            );
        }
    }
}

fn has_control(s: &str) -> bool {
    s.chars().any(char::is_control)
}

pub(crate) fn check_basic_auth(problems: &mut Problems, auth: &BasicAuthDraft) {
    let n = auth.username.chars().count();
    if n == 0 || n > MAX_CREDENTIAL_CHARS || has_control(&auth.username) {
        problems.add(
            "basic_auth.username",
            format!("must be 1 to {MAX_CREDENTIAL_CHARS} characters without control characters"),
        );
    } else if auth.username.contains(':') {
        problems.add("basic_auth.username", "must not contain `:`");
    }
    if let Some(p) = &auth.password {
        if p.chars().count() > MAX_CREDENTIAL_CHARS || has_control(p) {
            problems.add(
                "basic_auth.password",
                format!(
                    "must be at most {MAX_CREDENTIAL_CHARS} characters without control characters"
                ),
            );
        }
    }
}
