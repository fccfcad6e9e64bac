//! Version 5 of the due check (issue 19): version 4 whose basic auth carries
//! the password sealed (`password_sealed`, see `uptime-secrets`) instead of
//! in plain text. Anyone who can subscribe to `uptime.checks.due.>` (or read
//! the dead-letter stream a due check may end up in) sees only ciphertext;
//! a checker opens it with its keyring just before the request.
//!
//! The spec is [`CheckSpecV3`]: [`CheckSpecV2`] with options whose basic auth
//! is [`BasicAuthV2`]. Everything else is the same types as version 4.
//! Routing is version 4's: one message per region of a round, on
//! `uptime.checks.due.v5.<region>` ([`subjects::due_v5`]).
//!
//! Rolling upgrades: a checker from before version 5 has no consumer filter
//! for `.v5.` subjects, so version-5 checks wait in the stream for an
//! upgraded checker: upgrade the checkers before the scheduler and the
//! api-gateway (docs/operations.md).

use crate::{
    subjects, AssertionV1, BasicAuthV1, CheckOptionsV1, CheckSpecV2, DnsQueryV1, HeaderV1,
    HttpMethod, HttpRequestV1, KeywordType, Message, MonitorKind, TlsOptionsV1, Trigger,
};
use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// A check to run now in one region, its secrets sealed. Published on
/// `uptime.checks.due.v5.<region>` ([`subjects::due_v5`]) with
/// `Nats-Msg-Id` = `check_id`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckDueV5 {
    /// This region's check of the round (`check_id_in_round`).
    pub check_id: Uuid,
    pub monitor_id: i64,
    #[schemars(range(min = 1))]
    pub definition_version: i64,
    /// The monitor's check interval (a scheduled check received more than
    /// one interval late is skipped).
    #[schemars(range(min = 1))]
    pub interval_secs: u32,
    pub trigger: Trigger,
    /// When the round was due (scheduled) or requested (manual).
    pub due_at: DateTime<Utc>,
    pub spec: CheckSpecV3,
    /// The region whose checkers run this check.
    pub region: String,
    /// The round this check is part of (the slot's id).
    pub round_id: Uuid,
}

impl Message for CheckDueV5 {
    /// The subjects' common prefix; each region's due checks go to
    /// [`subjects::due_v5`]`(region)`.
    const SUBJECT: &'static str = subjects::CHECK_DUE_V5_PREFIX;
    const SCHEMA: &'static str = "check-due.v5";
}

impl CheckDueV5 {
    /// The subject this check is published on: its region's.
    pub fn subject(&self) -> String {
        subjects::due_v5(&self.region)
    }
}

/// [`CheckSpecV2`] with sealed secrets: what a checker needs to check a
/// monitor, a snapshot taken when the check was scheduled.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckSpecV3 {
    pub kind: MonitorKind,
    /// As in [`CheckSpecV2`]: a URL (http, keyword, tls), `host:port` (tcp,
    /// tls), a name (dns) or a host (icmp).
    pub target: String,
    pub timeout_secs: u32,
    /// http, keyword: the status a passing response has.
    pub expected_status: u16,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keyword_type: Option<KeywordType>,
    /// What the kind needs besides the target; omitted when empty.
    #[serde(default, skip_serializing_if = "CheckOptionsV2::is_empty")]
    pub options: CheckOptionsV2,
}

/// [`CheckOptionsV1`] whose request carries a sealed password.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CheckOptionsV2 {
    /// http, keyword: the request to send; absent: `GET` without headers or body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpRequestV2>,
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

impl CheckOptionsV2 {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// [`HttpRequestV1`] with [`BasicAuthV2`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct HttpRequestV2 {
    #[serde(default)]
    pub method: HttpMethod,
    /// Request headers, in order (a name may repeat).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<HeaderV1>,
    /// The request body, sent as it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basic_auth: Option<BasicAuthV2>,
}

/// HTTP basic authentication with the password sealed.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct BasicAuthV2 {
    pub username: String,
    /// The password sealed by the api-gateway (`v1.<key id>.<base64url>`,
    /// `uptime-secrets`, purpose `monitors.http_password`); only a checker
    /// configured with that key opens it. Absent: no password (the request
    /// sends `username:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub password_sealed: Option<String>,
}

// By hand: even ciphertext stays out of logs.
impl std::fmt::Debug for BasicAuthV2 {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuthV2")
            .field("username", &self.username)
            .field(
                "password_sealed",
                &self.password_sealed.as_ref().map(|_| "[sealed]"),
            )
            .finish()
    }
}

impl CheckSpecV2 {
    /// This spec as version 3, with `password_sealed` as its basic auth's
    /// password. Any plaintext password in `self` is dropped.
    pub fn sealed(self, password_sealed: Option<String>) -> CheckSpecV3 {
        let options = self.options;
        CheckSpecV3 {
            kind: self.kind,
            target: self.target,
            timeout_secs: self.timeout_secs,
            expected_status: self.expected_status,
            keyword: self.keyword,
            keyword_type: self.keyword_type,
            options: CheckOptionsV2 {
                http: options.http.map(|http| HttpRequestV2 {
                    method: http.method,
                    headers: http.headers,
                    body: http.body,
                    basic_auth: http.basic_auth.map(|auth| BasicAuthV2 {
                        username: auth.username,
                        password_sealed,
                    }),
                }),
                assertions: options.assertions,
                dns: options.dns,
                tls: options.tls,
            },
        }
    }
}

impl CheckSpecV3 {
    /// The sealed password of the basic auth, if there is one.
    pub fn password_sealed(&self) -> Option<&str> {
        self.options
            .http
            .as_ref()
            .and_then(|h| h.basic_auth.as_ref())
            .and_then(|a| a.password_sealed.as_deref())
    }

    /// The spec a probe runs, with `password` (the opened
    /// [`Self::password_sealed`]) as the basic auth's password.
    pub fn opened(self, password: Option<String>) -> CheckSpecV2 {
        let options = self.options;
        CheckSpecV2 {
            kind: self.kind,
            target: self.target,
            timeout_secs: self.timeout_secs,
            expected_status: self.expected_status,
            keyword: self.keyword,
            keyword_type: self.keyword_type,
            options: CheckOptionsV1 {
                http: options.http.map(|http| HttpRequestV1 {
                    method: http.method,
                    headers: http.headers,
                    body: http.body,
                    basic_auth: http.basic_auth.map(|auth| BasicAuthV1 {
                        username: auth.username,
                        password,
                    }),
                }),
                assertions: options.assertions,
                dns: options.dns,
                tls: options.tls,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(password: Option<&str>) -> CheckSpecV2 {
        CheckSpecV2 {
            kind: MonitorKind::Http,
            target: "https://example.com".into(),
            timeout_secs: 5,
            expected_status: 200,
            keyword: None,
            keyword_type: None,
            options: CheckOptionsV1 {
                http: Some(HttpRequestV1 {
                    method: HttpMethod::Post,
                    headers: vec![],
                    body: Some("{}".into()),
                    basic_auth: Some(BasicAuthV1 {
                        username: "u".into(),
                        password: password.map(str::to_string),
                    }),
                }),
                ..Default::default()
            },
        }
    }

    #[test]
    fn sealing_drops_the_plaintext_and_opening_restores_the_spec() {
        let sealed = spec(Some("hunter2")).sealed(Some("v1.k1.AAAA".into()));
        let json = serde_json::to_string(&sealed).unwrap();
        assert!(!json.contains("hunter2"), "{json}");
        assert!(json.contains(r#""password_sealed":"v1.k1.AAAA""#), "{json}");
        assert!(!json.contains(r#""password""#), "{json}");
        assert_eq!(sealed.password_sealed(), Some("v1.k1.AAAA"));
        assert!(!format!("{sealed:?}").contains("v1.k1"));
        assert_eq!(sealed.opened(Some("hunter2".into())), spec(Some("hunter2")));
        let none = spec(None).sealed(None);
        assert_eq!(none.password_sealed(), None);
        assert_eq!(none.opened(None), spec(None));
    }
}
