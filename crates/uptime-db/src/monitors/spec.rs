//! The one way a monitor row becomes the check a checker runs: the scheduler
//! snapshots it into every scheduled check, the api-gateway into an
//! on-demand one.
//!
//! Policy: the spec is the row, nothing guessed. The API validates every
//! definition it writes, so a row that cannot be checked as it stands (no
//! target, a timeout or expected status outside what the API allows, an
//! unknown keyword type) is a bug, not something to paper over with a
//! default: it is refused with a [`SpecError`] that says what is wrong. The
//! scheduler logs it and skips the monitor; the api-gateway answers 500
//! (and 409 for [`SpecError::Heartbeat`], which is no bug: heartbeat
//! monitors are checked by their pings, never by a checker).

use crate::models::Monitor;
use crate::schedule::CheckConfig;
use uptime_contracts::{CheckSpec, ExpectedStatus, KeywordType, MonitorKind, TimeoutSecs};

/// The fields of a monitor row a check is made of, borrowed from either row
/// type that carries them ([`Monitor`], [`CheckConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckFields<'a> {
    pub id: i64,
    pub kind: MonitorKind,
    pub target: Option<&'a str>,
    pub timeout_secs: i32,
    pub expected_status: i32,
    pub keyword: Option<&'a str>,
    pub keyword_type: Option<&'a str>,
    pub check_options: Option<&'a serde_json::Value>,
    /// The sealed basic-auth password, passed on as it is.
    pub http_password_sealed: Option<&'a str>,
    /// A legacy plain-text password waits to be sealed.
    pub http_password_unsealed: bool,
    /// The regions the monitor is checked from (`None`: the deployment's
    /// default regions); not part of the spec, but of the round.
    pub regions: Option<&'a [String]>,
}

impl<'a> From<&'a Monitor> for CheckFields<'a> {
    fn from(m: &'a Monitor) -> Self {
        Self {
            id: m.id,
            kind: m.kind,
            target: m.target.as_deref(),
            timeout_secs: m.timeout_secs,
            expected_status: m.expected_status,
            keyword: m.keyword.as_deref(),
            keyword_type: m.keyword_type.as_deref(),
            check_options: m.check_options.as_ref(),
            http_password_sealed: m.http_password_sealed.as_ref().map(|s| s.as_str()),
            http_password_unsealed: m.http_password_unsealed,
            regions: m.regions.as_deref(),
        }
    }
}

impl<'a> From<&'a CheckConfig> for CheckFields<'a> {
    fn from(c: &'a CheckConfig) -> Self {
        Self {
            id: c.id,
            kind: c.kind,
            target: c.target.as_deref(),
            timeout_secs: c.timeout_secs,
            expected_status: c.expected_status,
            keyword: c.keyword.as_deref(),
            keyword_type: c.keyword_type.as_deref(),
            check_options: c.check_options.as_ref(),
            http_password_sealed: c.http_password_sealed.as_ref().map(|s| s.as_str()),
            http_password_unsealed: c.http_password_unsealed,
            regions: c.regions.as_deref(),
        }
    }
}

/// Why a monitor row gives no check spec.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SpecError {
    /// Heartbeat monitors are checked by their pings.
    #[error("heartbeat monitors are checked by pings")]
    Heartbeat,
    #[error("{kind} monitor {id} has no target")]
    NoTarget { id: i64, kind: &'static str },
    #[error("monitor {id} has timeout_secs {value}; a check needs {min} to {max}", min = TimeoutSecs::MIN, max = TimeoutSecs::MAX)]
    Timeout { id: i64, value: i32 },
    #[error("monitor {id} has expected_status {value}; a check needs {min} to {max}", min = ExpectedStatus::MIN, max = ExpectedStatus::MAX)]
    ExpectedStatus { id: i64, value: i32 },
    #[error("monitor {id} has keyword_type {value:?}, which is not contains or not_contains")]
    KeywordType { id: i64, value: String },
    #[error("monitor {id} has check_options that do not read: {reason}")]
    Options { id: i64, reason: String },
    /// Its password is still in the legacy plain-text column: a check
    /// without it would fail for nothing, and one with it would carry it in
    /// plain text. The api-gateway seals it at its next start.
    #[error(
        "monitor {id} has a basic-auth password not sealed yet (the api-gateway seals it at start)"
    )]
    PasswordNotSealed { id: i64 },
}

/// What a checker needs to check the monitor of `row`, as due checks carry
/// it: the basic-auth password sealed, as stored.
pub fn check_spec_sealed<'a>(row: impl Into<CheckFields<'a>>) -> Result<CheckSpec, SpecError> {
    let row = row.into();
    if row.http_password_unsealed && row.kind != MonitorKind::Heartbeat {
        return Err(SpecError::PasswordNotSealed { id: row.id });
    }
    Ok(check_spec(row)?.sealed(row.http_password_sealed.map(str::to_string)))
}

/// What a checker needs to check the monitor of `row`, exactly as the row
/// says it (see the module's policy), without the basic-auth password:
/// only [`check_spec_sealed`] carries that (sealed).
pub fn check_spec<'a>(row: impl Into<CheckFields<'a>>) -> Result<CheckSpec, SpecError> {
    let row = row.into();
    let id = row.id;
    if row.kind == MonitorKind::Heartbeat {
        return Err(SpecError::Heartbeat);
    }
    let target = row.target.ok_or(SpecError::NoTarget {
        id,
        kind: row.kind.as_str(),
    })?;
    // The ranges the API lets a definition have.
    let timeout_secs = TimeoutSecs::try_from(row.timeout_secs).map_err(|_| SpecError::Timeout {
        id,
        value: row.timeout_secs,
    })?;
    let expected_status =
        ExpectedStatus::try_from(row.expected_status).map_err(|_| SpecError::ExpectedStatus {
            id,
            value: row.expected_status,
        })?;
    let keyword_type = row
        .keyword_type
        .map(|value| {
            KeywordType::parse(value).ok_or_else(|| SpecError::KeywordType {
                id,
                value: value.to_string(),
            })
        })
        .transpose()?;
    let options = crate::models::options_of(row.check_options).map_err(|e| SpecError::Options {
        id,
        reason: e.to_string(),
    })?;
    Ok(CheckSpec {
        kind: row.kind,
        target: target.to_string(),
        timeout_secs,
        expected_status,
        keyword: row.keyword.map(str::to_string),
        keyword_type,
        options: options.without_password(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyword_row<'a>() -> CheckFields<'a> {
        CheckFields {
            id: 9,
            kind: MonitorKind::Keyword,
            target: Some("https://example.com/health"),
            timeout_secs: 5,
            expected_status: 204,
            keyword: Some("ok"),
            keyword_type: Some("not_contains"),
            check_options: None,
            http_password_sealed: None,
            http_password_unsealed: false,
            regions: None,
        }
    }

    #[test]
    fn the_spec_carries_the_row() {
        let spec = check_spec(keyword_row()).unwrap();
        assert_eq!(
            spec,
            CheckSpec {
                kind: MonitorKind::Keyword,
                target: "https://example.com/health".into(),
                timeout_secs: TimeoutSecs::of(5),
                expected_status: ExpectedStatus::of(204),
                keyword: Some("ok".into()),
                keyword_type: Some(KeywordType::NotContains),
                options: Default::default(),
            }
        );
        let http = CheckFields {
            kind: MonitorKind::Http,
            keyword: None,
            keyword_type: None,
            timeout_secs: 120,
            expected_status: 599,
            ..keyword_row()
        };
        let spec = check_spec(http).unwrap();
        assert_eq!(
            (
                spec.kind,
                spec.timeout_secs.get(),
                spec.expected_status.get()
            ),
            (MonitorKind::Http, 120, 599)
        );
        assert_eq!((spec.keyword, spec.keyword_type), (None, None));
    }

    #[test]
    fn the_sealed_password_joins_the_stored_options_only_in_the_spec() {
        use uptime_contracts::{BasicAuth, CheckOptions, HttpMethod, HttpRequest};
        let options = |password_sealed: Option<&str>| CheckOptions {
            http: Some(HttpRequest {
                method: HttpMethod::Post,
                basic_auth: Some(BasicAuth {
                    username: "u".into(),
                    password_sealed: password_sealed.map(str::to_string),
                }),
                ..Default::default()
            }),
            ..Default::default()
        };
        let column = crate::monitors::options_column(&options(Some("v1.k1.BBBB"))).unwrap();
        assert!(!column.to_string().contains("v1.k1"), "{column}");
        let row = CheckFields {
            kind: MonitorKind::Http,
            check_options: Some(&column),
            http_password_sealed: Some("v1.k1.AAAA"),
            ..keyword_row()
        };
        assert_eq!(check_spec(row).unwrap().options, options(None));
        let sealed = check_spec_sealed(row).unwrap();
        assert_eq!(sealed.password_sealed(), Some("v1.k1.AAAA"));
        assert_eq!(sealed.options, options(Some("v1.k1.AAAA")));
        let legacy = CheckFields {
            http_password_sealed: None,
            http_password_unsealed: true,
            ..row
        };
        assert_eq!(
            check_spec_sealed(legacy),
            Err(SpecError::PasswordNotSealed { id: 9 })
        );
        assert_eq!(crate::monitors::options_column(&Default::default()), None);
        let broken = serde_json::json!({"http": {"method": "BREW"}});
        let row = CheckFields {
            check_options: Some(&broken),
            ..keyword_row()
        };
        assert!(matches!(
            check_spec(row),
            Err(SpecError::Options { id: 9, .. })
        ));
    }

    #[test]
    fn heartbeat_monitors_have_no_spec() {
        let heartbeat = CheckFields {
            kind: MonitorKind::Heartbeat,
            ..keyword_row()
        };
        assert_eq!(check_spec(heartbeat), Err(SpecError::Heartbeat));
    }

    #[test]
    fn a_row_the_api_would_refuse_is_refused_not_guessed() {
        let cases = [
            (
                CheckFields {
                    target: None,
                    ..keyword_row()
                },
                SpecError::NoTarget {
                    id: 9,
                    kind: "keyword",
                },
            ),
            (
                CheckFields {
                    timeout_secs: 0,
                    ..keyword_row()
                },
                SpecError::Timeout { id: 9, value: 0 },
            ),
            (
                CheckFields {
                    timeout_secs: -30,
                    ..keyword_row()
                },
                SpecError::Timeout { id: 9, value: -30 },
            ),
            (
                CheckFields {
                    expected_status: 70_000,
                    ..keyword_row()
                },
                SpecError::ExpectedStatus {
                    id: 9,
                    value: 70_000,
                },
            ),
            (
                CheckFields {
                    expected_status: 99,
                    ..keyword_row()
                },
                SpecError::ExpectedStatus { id: 9, value: 99 },
            ),
            (
                CheckFields {
                    keyword_type: Some("regex"),
                    ..keyword_row()
                },
                SpecError::KeywordType {
                    id: 9,
                    value: "regex".into(),
                },
            ),
        ];
        for (row, expected) in cases {
            assert_eq!(check_spec(row), Err(expected), "{row:?}");
        }
        // The ranges named are the bounded types' (uptime_contracts::bounds).
        assert_eq!(
            SpecError::Timeout { id: 9, value: 0 }.to_string(),
            "monitor 9 has timeout_secs 0; a check needs 1 to 120"
        );
        assert_eq!(
            SpecError::ExpectedStatus { id: 9, value: 99 }.to_string(),
            "monitor 9 has expected_status 99; a check needs 100 to 599"
        );
    }
}
