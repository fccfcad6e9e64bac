//! The check options of a monitor definition while it is validated (the
//! options part of [`super::draft::Draft`]): what a create asks for, a PATCH
//! merged into the stored options, every rule, and the stored form.
//!
//! Each option belongs to some kinds (http and keyword: the request and the
//! assertions; dns: the query; tls: the pinned certificate). A value given
//! for another kind is a 400 naming the field; when a PATCH changes the
//! kind, stored options the new kind does not use are dropped, as the
//! keyword is.

use super::option_rules::{check_assertion, check_basic_auth, check_headers, normal_fingerprint};
use super::options::{
    Assertion, BasicAuthInput, DnsRecordType, HttpMethod, RequestHeader, MAX_ASSERTIONS,
    MAX_BODY_BYTES, MAX_DNS_EXPECTED, MAX_DNS_EXPECTED_CHARS,
};
use super::types::{CreateMonitor, MonitorType, UpdateMonitor};
use crate::validation::Problems;
use uptime_contracts::{BasicAuth, CheckOptions, DnsQuery, Header, HttpRequest, TlsOptions};
use uptime_db::models::SealedText;

/// Basic authentication being validated: the password given in this
/// request, or else the stored one (sealed), which is kept.
#[derive(Clone)]
pub(super) struct BasicAuthDraft {
    pub(super) username: String,
    /// Given in this request (`""` removes the stored one).
    pub(super) password: Option<String>,
    /// The stored password, kept when none is given.
    pub(super) kept: Option<SealedText>,
}

impl BasicAuthDraft {
    /// Whether the stored password would go on being sent: none was given
    /// in this request and one is stored.
    pub(super) fn keeps_stored_password(&self) -> bool {
        self.password.is_none() && self.kept.is_some()
    }
}

impl std::fmt::Debug for BasicAuthDraft {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BasicAuthDraft")
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| "[redacted]"))
            .field("kept", &self.kept)
            .finish()
    }
}

/// The password a definition stores, after validation.
#[derive(Clone, PartialEq, Eq)]
pub(super) enum PasswordToStore {
    None,
    /// The stored one, sealed as it is.
    Keep(SealedText),
    /// A new one, to be sealed before it is stored.
    Seal(String),
}

impl std::fmt::Debug for PasswordToStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PasswordToStore::None => "None",
            PasswordToStore::Keep(_) => "Keep([sealed])",
            PasswordToStore::Seal(_) => "Seal([redacted])",
        })
    }
}

impl PasswordToStore {
    /// The column value: a new password sealed with `keyring`'s current key
    /// (400 naming `basic_auth.password` when this deployment has no key).
    pub(super) fn into_sealed(
        self,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<Option<SealedText>, crate::error::ApiError> {
        match self {
            PasswordToStore::None => Ok(None),
            PasswordToStore::Keep(sealed) => Ok(Some(sealed)),
            PasswordToStore::Seal(plain) => {
                let plain = uptime_secrets::Zeroizing::new(plain);
                let keyring = keyring.ok_or_else(|| {
                    crate::error::ApiError::invalid_field(
                        "basic_auth.password",
                        "cannot be stored: this deployment has no secrets key configured \
                         (secrets.keys); leave the password out or ask its operator",
                    )
                })?;
                keyring
                    .seal(uptime_secrets::Purpose::HTTP_BASIC_AUTH_PASSWORD, &plain)
                    .map(|sealed| Some(SealedText::new(sealed)))
                    .map_err(|e| {
                        crate::error::ApiError::Internal(format!("sealing a password: {e}"))
                    })
            }
        }
    }
}

/// Whether the origin (scheme, host, port) of `new` differs from that of
/// `old`: a stored password must not follow a monitor to another origin
/// unless the request says so. Targets that are not URLs (another kind's)
/// count as another origin.
pub(super) fn origin_changed(old: Option<&str>, new: Option<&str>) -> bool {
    let origin = |target: Option<&str>| {
        target
            .and_then(|t| url::Url::parse(t.trim()).ok())
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
    };
    match (origin(old), origin(new)) {
        (Some(old), Some(new)) => old != new,
        _ => old.map(str::trim) != new.map(str::trim),
    }
}

/// The options in API terms; `None` is "not set" (the kind's default).
#[derive(Debug, Clone, Default)]
pub(super) struct OptionsDraft {
    pub(super) method: Option<HttpMethod>,
    pub(super) headers: Option<Vec<RequestHeader>>,
    pub(super) body: Option<String>,
    pub(super) basic_auth: Option<BasicAuthDraft>,
    pub(super) assertions: Option<Vec<Assertion>>,
    pub(super) dns_record_type: Option<DnsRecordType>,
    pub(super) dns_expected: Option<Vec<String>>,
    pub(super) dns_server: Option<String>,
    pub(super) tls_fingerprint_sha256: Option<String>,
}

pub(super) fn is_http(kind: MonitorType) -> bool {
    matches!(kind, MonitorType::Http | MonitorType::Keyword)
}

/// A PATCH field merged with the stored value: given (a value or `null`)
/// wins; left out keeps the stored value when the kind still uses it.
fn merged<T>(given: Option<Option<T>>, stored: Option<T>, applies: bool) -> Option<T> {
    match given {
        Some(given) => given,
        None if applies => stored,
        None => None,
    }
}

impl OptionsDraft {
    pub(super) fn from_create(req: &mut CreateMonitor) -> Self {
        Self {
            method: req.method.take(),
            headers: req.headers.take(),
            body: req.body.take(),
            basic_auth: req.basic_auth.take().map(|a| BasicAuthDraft {
                username: a.username,
                password: a.password,
                kept: None,
            }),
            assertions: req
                .assertions
                .take()
                .map(|all| all.into_iter().map(Assertion::from).collect()),
            dns_record_type: req.dns_record_type.take(),
            dns_expected: req.dns_expected.take(),
            dns_server: req.dns_server.take(),
            tls_fingerprint_sha256: req.tls_fingerprint_sha256.take(),
        }
    }

    /// The stored options (and sealed password) with `patch` applied, for
    /// `kind`.
    pub(super) fn merge(
        kind: MonitorType,
        stored: CheckOptions,
        stored_password: Option<&SealedText>,
        patch: &mut UpdateMonitor,
    ) -> Self {
        let http = is_http(kind);
        let stored_http = stored.http.unwrap_or_default();
        let stored_dns = stored.dns.unwrap_or_default();
        let basic_auth = match patch.basic_auth.take() {
            None if http => stored_http.basic_auth.map(|a| BasicAuthDraft {
                username: a.username,
                password: None,
                kept: stored_password.cloned(),
            }),
            None | Some(None) => None,
            Some(Some(BasicAuthInput { username, password })) => Some(BasicAuthDraft {
                username,
                kept: stored_password.cloned().filter(|_| password.is_none()),
                password,
            }),
        };
        Self {
            method: merged(patch.method.take(), Some(stored_http.method.into()), http),
            headers: merged(
                patch.headers.take(),
                Some(stored_http.headers.into_iter().map(Into::into).collect()),
                http,
            ),
            body: merged(patch.body.take(), stored_http.body, http),
            basic_auth,
            assertions: merged(
                patch
                    .assertions
                    .take()
                    .map(|a| a.map(|all| all.into_iter().map(Assertion::from).collect())),
                Some(stored.assertions.into_iter().map(Into::into).collect()),
                http,
            ),
            dns_record_type: merged(
                patch.dns_record_type.take(),
                Some(stored_dns.record_type.into()),
                kind == MonitorType::Dns,
            ),
            dns_expected: merged(
                patch.dns_expected.take(),
                Some(stored_dns.expected),
                kind == MonitorType::Dns,
            ),
            dns_server: merged(
                patch.dns_server.take(),
                stored_dns.server,
                kind == MonitorType::Dns,
            ),
            tls_fingerprint_sha256: merged(
                patch.tls_fingerprint_sha256.take(),
                stored.tls.and_then(|t| t.fingerprint_sha256),
                kind == MonitorType::Tls,
            ),
        }
    }

    /// Checks every rule of the options of a `kind` monitor.
    pub(super) fn validate(&self, kind: MonitorType, problems: &mut Problems, allow_private: bool) {
        const HTTP_ONLY: &str = "is only for http and keyword monitors";
        let http = is_http(kind);
        let only_http = |problems: &mut Problems, field: &str, set: bool| {
            if set && !http {
                problems.add(field, HTTP_ONLY);
            }
        };
        only_http(problems, "method", self.method.is_some());
        only_http(problems, "headers", self.headers.is_some());
        only_http(problems, "body", self.body.is_some());
        only_http(problems, "basic_auth", self.basic_auth.is_some());
        only_http(problems, "assertions", self.assertions.is_some());
        let dns = kind == MonitorType::Dns;
        for (field, set) in [
            ("dns_record_type", self.dns_record_type.is_some()),
            ("dns_expected", self.dns_expected.is_some()),
            ("dns_server", self.dns_server.is_some()),
        ] {
            if set && !dns {
                problems.add(field, "is only for dns monitors");
            }
        }
        if self.tls_fingerprint_sha256.is_some() && kind != MonitorType::Tls {
            problems.add("tls_fingerprint_sha256", "is only for tls monitors");
        }

        if let Some(headers) = &self.headers {
            check_headers(problems, headers, self.basic_auth.is_some());
        }
        if let Some(body) = &self.body {
            if body.is_empty() || body.len() > MAX_BODY_BYTES {
                problems.add(
                    "body",
                    format!("must be 1 to {MAX_BODY_BYTES} bytes long (null for no body)"),
                );
            }
        }
        if let Some(auth) = &self.basic_auth {
            check_basic_auth(problems, auth);
        }
        if let Some(assertions) = &self.assertions {
            if assertions.len() > MAX_ASSERTIONS {
                problems.add(
                    "assertions",
                    format!("must hold at most {MAX_ASSERTIONS} assertions"),
                );
            }
            for (i, a) in assertions.iter().enumerate() {
                check_assertion(problems, &format!("assertions[{i}]"), a);
            }
        }
        if let Some(expected) = &self.dns_expected {
            if expected.len() > MAX_DNS_EXPECTED {
                problems.add(
                    "dns_expected",
                    format!("must hold at most {MAX_DNS_EXPECTED} values"),
                );
            }
            for (i, value) in expected.iter().enumerate() {
                problems.check_len(&format!("dns_expected[{i}]"), value, MAX_DNS_EXPECTED_CHARS);
            }
        }
        if let Some(server) = &self.dns_server {
            problems.check_dns_server("dns_server", server, allow_private);
        }
        if let Some(fingerprint) = &self.tls_fingerprint_sha256 {
            if normal_fingerprint(fingerprint).is_none() {
                problems.add(
                    "tls_fingerprint_sha256",
                    "must be a SHA-256 fingerprint: 64 hex digits, or 32 colon-separated pairs",
                );
            }
        }
    }

    /// The options as stored (`CheckOptions` without the password) and the
    /// password to store (none for none or empty). Call after
    /// [`Self::validate`] found nothing. Defaults are left out, so a monitor
    /// without options stores none (a NULL column), as monitors made before
    /// them have.
    pub(super) fn into_stored(self, kind: MonitorType) -> (CheckOptions, PasswordToStore) {
        let mut options = CheckOptions::default();
        let mut password = PasswordToStore::None;
        if is_http(kind) {
            let (basic_auth, given_password) = match self.basic_auth {
                Some(auth) => {
                    let password = match (auth.password, auth.kept) {
                        (Some(given), _) if given.is_empty() => PasswordToStore::None,
                        (Some(given), _) => PasswordToStore::Seal(given),
                        (None, Some(kept)) => PasswordToStore::Keep(kept),
                        (None, None) => PasswordToStore::None,
                    };
                    let auth = BasicAuth {
                        username: auth.username,
                        password_sealed: None,
                    };
                    (Some(auth), password)
                }
                None => (None, PasswordToStore::None),
            };
            password = given_password;
            let request = HttpRequest {
                method: self.method.map(Into::into).unwrap_or_default(),
                headers: self
                    .headers
                    .unwrap_or_default()
                    .into_iter()
                    .map(|h| Header {
                        name: h.name,
                        value: h.value,
                    })
                    .collect(),
                body: self.body,
                basic_auth,
            };
            options.http = (request != HttpRequest::default()).then_some(request);
            options.assertions = self
                .assertions
                .unwrap_or_default()
                .into_iter()
                .map(Into::into)
                .collect();
        }
        if kind == MonitorType::Dns {
            let query = DnsQuery {
                record_type: self.dns_record_type.map(Into::into).unwrap_or_default(),
                expected: self.dns_expected.unwrap_or_default(),
                server: self.dns_server,
            };
            options.dns = (query != DnsQuery::default()).then_some(query);
        }
        if kind == MonitorType::Tls {
            options.tls = self
                .tls_fingerprint_sha256
                .as_deref()
                .and_then(normal_fingerprint)
                .map(|f| TlsOptions {
                    fingerprint_sha256: Some(f),
                });
        }
        (options, password)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_store_nothing() {
        for kind in [
            MonitorType::Http,
            MonitorType::Keyword,
            MonitorType::Dns,
            MonitorType::Tls,
            MonitorType::Tcp,
        ] {
            let defaults = OptionsDraft {
                method: Some(HttpMethod::Get),
                headers: Some(vec![]),
                assertions: Some(vec![]),
                ..Default::default()
            };
            let explicit_dns = OptionsDraft {
                dns_record_type: Some(DnsRecordType::A),
                dns_expected: Some(vec![]),
                ..Default::default()
            };
            let draft = if kind == MonitorType::Dns {
                explicit_dns
            } else if is_http(kind) {
                defaults
            } else {
                OptionsDraft::default()
            };
            let (options, password) = draft.into_stored(kind);
            assert!(options.is_empty(), "{kind:?}: {options:?}");
            assert_eq!(password, PasswordToStore::None);
        }
    }

    #[test]
    fn an_empty_password_is_no_password() {
        let draft = OptionsDraft {
            basic_auth: Some(BasicAuthDraft {
                username: "u".into(),
                password: Some(String::new()),
                kept: Some(SealedText::new("v1.k1.AAAA".into())),
            }),
            ..Default::default()
        };
        let (options, password) = draft.into_stored(MonitorType::Http);
        assert_eq!(password, PasswordToStore::None);
        let auth = options.http.unwrap().basic_auth.unwrap();
        assert_eq!((auth.username.as_str(), auth.password_sealed), ("u", None));
    }

    #[test]
    fn origins_differ_by_scheme_host_or_port_only() {
        let changed = |a: &str, b: &str| origin_changed(Some(a), Some(b));
        assert!(!changed(
            "https://example.com/a",
            "https://example.com/b?q=1"
        ));
        assert!(!changed("https://example.com/", "https://EXAMPLE.com:443/"));
        assert!(!changed("http://example.com", "http://example.com:80/x"));
        assert!(changed("https://example.com/", "http://example.com/"));
        assert!(changed("https://example.com/", "https://evil.example/"));
        assert!(changed("https://example.com/", "https://example.com:8443/"));
        assert!(changed("https://example.com/", "example.com:443"));
        assert!(!origin_changed(None, None));
    }
}
