//! http monitors' options, which keyword monitors share: the request
//! (method, headers, body, basic auth) and the assertions on the response.
//! Their request and response fields, their rules, and their stored form
//! (`CheckOptions::http` and `assertions`, the password sealed in its own
//! column).

mod assertions;
mod jsonpath;
mod password;
mod request;

pub(crate) use assertions::{Assertion, AssertionInput};
pub(crate) use password::{origin_changed, BasicAuthDraft, PasswordToStore};
pub(crate) use request::{BasicAuthInput, BasicAuthView, HttpMethod, RequestHeader};

use super::stored::{merged, Stored};
use crate::routes::monitors::monitor_type::MonitorType;
use crate::validation::{Problems, UrlRules};
use serde::{Deserialize, Serialize};
use uptime_contracts::{BasicAuth, CheckOptions, Header, HttpRequest};
use utoipa::ToSchema;

/// Largest request body, in bytes.
pub const MAX_BODY_BYTES: usize = 16 * 1024;

/// Whether monitors of `kind` send an http request.
pub(crate) fn is_http(kind: MonitorType) -> bool {
    matches!(kind, MonitorType::Http | MonitorType::Keyword)
}

crate::routes::monitors::fields::api_fields! {
    /// The fields of a create request.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Create;
    /// The fields of a PATCH.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    pub struct Update;
    /// The fields of a response: the request with its defaults on http and
    /// keyword monitors, `null` on the others.
    #[derive(Debug, Default, Serialize, ToSchema)]
    pub struct Shown;


    /// http and keyword monitors: the request's method (default `GET`).
    method: opt HttpMethod,
        clear /// `null` resets it to `GET`.
        => /// http and keyword monitors: the request's method; `null` for other types.
        Option<HttpMethod>;
    /// http and keyword monitors: request headers, in order, at most 20
    /// (default none).
    headers: opt Vec<RequestHeader> [max_items = 20],
        clear /// Replaces the headers; `null` or `[]` removes them.
        => /// http and keyword monitors: the request headers (`[]` for none);
        /// `null` for other types.
        Option<Vec<RequestHeader>>;
    /// http and keyword monitors: the request body, sent as it is, 1 to 16384
    /// bytes (default none; set a matching `Content-Type` header).
    body: opt String [min_length = 1, max_length = 16384],
        clear /// `null` removes the body.
        => /// http and keyword monitors: the request body, if any.
        Option<String>;
    /// http and keyword monitors: basic authentication (default none). The
    /// password is write-only.
    basic_auth: opt BasicAuthInput,
        clear /// `null` removes user name and password. A new user name without a
        /// password keeps the stored password. A stored password was given for
        /// the target's origin (scheme, host and port): a PATCH that moves the
        /// target to another origin must restate `basic_auth.password` (or
        /// remove it, or `basic_auth`), else it is refused with `400` naming
        /// `basic_auth.password`, so a password never follows a monitor to a
        /// host it was not given for.
        => /// http and keyword monitors: the user name and whether a password is
        /// set (the password itself is never shown).
        Option<BasicAuthView>;
    /// http and keyword monitors: conditions on the response that must all
    /// hold, at most 20 (default none). `expected_status` (and the keyword)
    /// still apply.
    assertions: opt Vec<AssertionInput> [max_items = 20],
        clear /// Replaces the assertions; `null` or `[]` removes them.
        => /// http and keyword monitors: the assertions (`[]` for none); `null` for
        /// other types.
        Option<Vec<Assertion>>;
}

/// The options being validated; `None` is "not set" (the default).
#[derive(Debug, Clone, Default)]
pub(crate) struct Draft {
    pub(crate) method: Option<HttpMethod>,
    pub(crate) headers: Option<Vec<RequestHeader>>,
    pub(crate) body: Option<String>,
    pub(crate) basic_auth: Option<BasicAuthDraft>,
    pub(crate) assertions: Option<Vec<Assertion>>,
}

impl Draft {
    pub(crate) fn from_create(given: Create) -> Self {
        Self {
            method: given.method,
            headers: given.headers,
            body: given.body,
            basic_auth: given.basic_auth.map(|a| BasicAuthDraft {
                username: a.username,
                password: a.password,
                kept: None,
            }),
            assertions: given
                .assertions
                .map(|all| all.into_iter().map(Assertion::from).collect()),
        }
    }

    /// The stored options with `patch` applied, for a monitor of `kind`
    /// whose target becomes `target`. A stored password follows the
    /// monitor to another origin only when the request says so.
    pub(crate) fn merge(
        kind: MonitorType,
        stored: &Stored<'_>,
        patch: Update,
        target: Option<&str>,
        problems: &mut Problems,
    ) -> Self {
        let http = is_http(kind);
        let stored_http = stored.options.http.clone().unwrap_or_default();
        let stored_password = stored.monitor.http_password_sealed.as_ref();
        let basic_auth = match patch.basic_auth {
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
        // The stored password was given for the stored target's origin: it
        // follows the monitor to another origin (scheme, host, port) only
        // when the request says so, by restating it (or dropping it).
        if basic_auth
            .as_ref()
            .is_some_and(BasicAuthDraft::keeps_stored_password)
            && origin_changed(stored.monitor.target.as_deref(), target)
        {
            problems.add(
                "basic_auth.password",
                "the target's origin changed: restate the password or remove basic_auth",
            );
        }
        Self {
            method: merged(patch.method, Some(stored_http.method), http),
            headers: merged(
                patch.headers,
                Some(stored_http.headers.into_iter().map(Into::into).collect()),
                http,
            ),
            body: merged(patch.body, stored_http.body, http),
            basic_auth,
            assertions: merged(
                patch
                    .assertions
                    .map(|a| a.map(|all| all.into_iter().map(Assertion::from).collect())),
                Some(stored_assertions(stored)),
                http,
            ),
        }
    }

    /// Refuses each field given for a monitor of another kind.
    pub(crate) fn refuse_on_other_kinds(&self, kind: MonitorType, problems: &mut Problems) {
        if is_http(kind) {
            return;
        }
        for (field, set) in [
            ("method", self.method.is_some()),
            ("headers", self.headers.is_some()),
            ("body", self.body.is_some()),
            ("basic_auth", self.basic_auth.is_some()),
            ("assertions", self.assertions.is_some()),
        ] {
            if set {
                problems.add(field, "is only for http and keyword monitors");
            }
        }
    }

    /// Checks the rules of every field given.
    pub(crate) fn validate(&self, problems: &mut Problems) {
        if let Some(headers) = &self.headers {
            request::check_headers(problems, headers, self.basic_auth.is_some());
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
            request::check_basic_auth(problems, auth);
        }
        if let Some(assertions) = &self.assertions {
            if assertions.len() > assertions::MAX_ASSERTIONS {
                problems.add(
                    "assertions",
                    format!(
                        "must hold at most {} assertions",
                        assertions::MAX_ASSERTIONS
                    ),
                );
            }
            for (i, a) in assertions.iter().enumerate() {
                assertions::check_assertion(problems, &format!("assertions[{i}]"), a);
            }
        }
    }

    /// Adds the options to `options` as stored, without defaults (so a
    /// monitor without options stores none), and says which password to
    /// store (none for none or empty). Only for http and keyword monitors,
    /// after [`Self::validate`] found nothing.
    pub(crate) fn store(self, options: &mut CheckOptions) -> PasswordToStore {
        let (basic_auth, password) = match self.basic_auth {
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
        let request = HttpRequest {
            method: self.method.unwrap_or_default(),
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
        password
    }
}

/// What a response shows of a stored http or keyword monitor: each field
/// with its default filled in.
pub(crate) fn shown(stored: &Stored<'_>) -> Shown {
    let http = stored.options.http.clone().unwrap_or_default();
    Shown {
        method: Some(http.method),
        headers: Some(http.headers.into_iter().map(Into::into).collect()),
        body: http.body,
        basic_auth: http.basic_auth.map(|a| BasicAuthView {
            username: a.username,
            password_set: stored.monitor.http_password_sealed.is_some(),
        }),
        assertions: Some(stored_assertions(stored)),
    }
}

/// The stored monitor's assertions as requests and responses give them.
fn stored_assertions(stored: &Stored<'_>) -> Vec<Assertion> {
    let assertions = stored.options.assertions.iter().cloned();
    assertions.map(Into::into).collect()
}

/// The target: an absolute `http://` or `https://` URL without
/// credentials.
pub(crate) fn check_target(problems: &mut Problems, target: &str, allow_private: bool) {
    problems.check_url(
        "target",
        target,
        UrlRules {
            allow_http: true,
            allow_private_hosts: allow_private,
        },
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use uptime_db::models::SealedText;

    #[test]
    fn defaults_store_nothing() {
        let defaults = Draft {
            method: Some(HttpMethod::Get),
            headers: Some(vec![]),
            assertions: Some(vec![]),
            ..Default::default()
        };
        let mut options = CheckOptions::default();
        let password = defaults.store(&mut options);
        assert!(options.is_empty(), "{options:?}");
        assert_eq!(password, PasswordToStore::None);
    }

    #[test]
    fn an_empty_password_is_no_password() {
        let draft = Draft {
            basic_auth: Some(BasicAuthDraft {
                username: "u".into(),
                password: Some(String::new()),
                kept: Some(SealedText::new("v1.k1.AAAA".into())),
            }),
            ..Default::default()
        };
        let mut options = CheckOptions::default();
        let password = draft.store(&mut options);
        assert_eq!(password, PasswordToStore::None);
        let auth = options.http.unwrap().basic_auth.unwrap();
        assert_eq!((auth.username.as_str(), auth.password_sealed), ("u", None));
    }
}
