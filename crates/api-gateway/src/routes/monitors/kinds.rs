//! One module per monitor kind, each owning its request and response
//! fields (a group of the flat bodies, [`super::fields`]),
//! their rules, their stored form (`CheckOptions`, or the kind's own
//! columns) and what responses show of it; tcp and icmp have no options,
//! only their target's rule. Adding an option to a kind touches that kind's
//! module here, the check options it is stored in and sent as
//! (`uptime-contracts`), the checker's probe and the docs.
//!
//! Every option belongs to some kinds. A value given for another kind is a
//! 400 naming the field; when a PATCH changes the kind, stored options the
//! new kind does not use are dropped, as the keyword is. This module is the
//! one place that goes through every kind.

pub(crate) mod dns;
pub(crate) mod heartbeat;
pub(crate) mod http;
pub(crate) mod icmp;
pub(crate) mod keyword;
mod stored;
pub(crate) mod tcp;
pub(crate) mod tls;

pub(crate) use stored::Stored;

use super::monitor_type::MonitorType;
use crate::error::ApiError;
use crate::validation::Problems;
use chrono::{DateTime, Utc};
use uptime_contracts::CheckOptions;
use uptime_db::models::{Monitor, SealedText};

/// Every kind's fields of a create request.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Given {
    #[serde(flatten)]
    pub keyword: keyword::Create,
    #[serde(flatten)]
    pub http: http::Create,
    #[serde(flatten)]
    pub dns: dns::Create,
    #[serde(flatten)]
    pub tls: tls::Create,
    #[serde(flatten)]
    pub heartbeat: heartbeat::Create,
}

/// Every kind's fields of a PATCH.
#[derive(Debug, Default, serde::Deserialize)]
pub struct Patch {
    #[serde(flatten)]
    pub keyword: keyword::Update,
    #[serde(flatten)]
    pub http: http::Update,
    #[serde(flatten)]
    pub dns: dns::Update,
    #[serde(flatten)]
    pub tls: tls::Update,
    #[serde(flatten)]
    pub heartbeat: heartbeat::Update,
}

/// Every kind's fields of a monitor definition being validated.
#[derive(Debug, Clone, Default)]
pub(crate) struct KindFields {
    pub(crate) keyword: keyword::Draft,
    pub(crate) http: http::Draft,
    pub(crate) dns: dns::Draft,
    pub(crate) tls: tls::Draft,
    pub(crate) heartbeat: heartbeat::Draft,
}

/// The columns the kinds' fields are stored in.
#[derive(Debug)]
pub(crate) struct KindColumns {
    pub(crate) keyword: Option<String>,
    pub(crate) keyword_type: Option<String>,
    /// Without defaults: none for a monitor without options.
    pub(crate) check_options: CheckOptions,
    pub(crate) http_password_sealed: Option<SealedText>,
    pub(crate) heartbeat_schedule: Option<String>,
    pub(crate) heartbeat_timezone: Option<String>,
}

impl KindFields {
    /// What a create request of a `kind` monitor gives.
    pub(crate) fn from_create(kind: MonitorType, given: Given) -> Self {
        Self {
            keyword: keyword::Draft::from_create(kind, given.keyword),
            http: http::Draft::from_create(given.http),
            dns: dns::Draft::from_create(given.dns),
            tls: tls::Draft::from_create(given.tls),
            heartbeat: heartbeat::Draft::from_create(given.heartbeat),
        }
    }

    /// The stored fields with `patch` applied, for a monitor of `kind`
    /// whose target becomes `target`.
    pub(crate) fn merge(
        kind: MonitorType,
        stored: &Stored<'_>,
        patch: Patch,
        target: Option<&str>,
        problems: &mut Problems,
    ) -> Result<Self, ApiError> {
        Ok(Self {
            http: http::Draft::merge(kind, stored, patch.http, target, problems),
            dns: dns::Draft::merge(kind, stored, patch.dns),
            tls: tls::Draft::merge(kind, stored, patch.tls),
            heartbeat: heartbeat::Draft::merge(kind, stored, patch.heartbeat),
            keyword: keyword::Draft::merge(kind, stored, patch.keyword)?,
        })
    }

    /// Checks the check options of a `kind` monitor: first every option
    /// given for another kind, then the rules of each given.
    pub(crate) fn validate_options(
        &self,
        kind: MonitorType,
        problems: &mut Problems,
        allow_private: bool,
    ) {
        self.http.refuse_on_other_kinds(kind, problems);
        self.dns.refuse_on_other_kinds(kind, problems);
        self.tls.refuse_on_other_kinds(kind, problems);
        self.http.validate(problems);
        self.dns.validate(problems, allow_private);
        self.tls.validate(problems);
    }

    /// The columns of a `kind` monitor, the password sealed with
    /// `keyring`'s current key. Options the kind does not use are dropped.
    /// Call after validation found nothing.
    pub(crate) fn into_columns(
        self,
        kind: MonitorType,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<KindColumns, ApiError> {
        let mut check_options = CheckOptions::default();
        let mut password = http::PasswordToStore::None;
        match kind {
            MonitorType::Http | MonitorType::Keyword => {
                password = self.http.store(&mut check_options)
            }
            MonitorType::Dns => self.dns.store(&mut check_options),
            MonitorType::Tls => self.tls.store(&mut check_options),
            MonitorType::Heartbeat | MonitorType::Tcp | MonitorType::Icmp => {}
        }
        let (heartbeat_schedule, heartbeat_timezone) = self.heartbeat.store()?;
        let (keyword, keyword_type) = self.keyword.store();
        Ok(KindColumns {
            keyword,
            keyword_type,
            check_options,
            http_password_sealed: password.into_sealed(keyring)?,
            heartbeat_schedule,
            heartbeat_timezone,
        })
    }
}

/// Checks the target of a `kind` monitor: required for every kind but
/// heartbeat, then the kind's own rule.
pub(crate) fn check_target(
    kind: MonitorType,
    target: Option<&str>,
    problems: &mut Problems,
    allow_private: bool,
) {
    use crate::validation::MAX_URL_CHARS;
    match (kind, target) {
        (MonitorType::Http | MonitorType::Keyword, None) => {
            problems.add("target", "is required for http and keyword monitors")
        }
        (MonitorType::Http | MonitorType::Keyword, Some(url)) => {
            http::check_target(problems, url, allow_private)
        }
        (MonitorType::Heartbeat, Some(label)) => heartbeat::check_target(problems, label),
        (MonitorType::Heartbeat, None) => {}
        (kind, None) => problems.add(
            "target",
            format!("is required for {} monitors", kind_name(kind)),
        ),
        (_, Some(t)) if t.chars().count() > MAX_URL_CHARS => problems.add(
            "target",
            format!("must be at most {MAX_URL_CHARS} characters"),
        ),
        (MonitorType::Tcp, Some(t)) => tcp::check_target(problems, t, allow_private),
        (MonitorType::Tls, Some(t)) => tls::check_target(problems, t, allow_private),
        (MonitorType::Dns, Some(t)) => dns::check_target(problems, t, allow_private),
        (MonitorType::Icmp, Some(t)) => icmp::check_target(problems, t, allow_private),
    }
}

/// The type as requests name it.
fn kind_name(kind: MonitorType) -> &'static str {
    uptime_contracts::MonitorKind::from(kind).as_str()
}

/// What a response shows of every kind's fields: each with its default on
/// the kinds it belongs to, `null` on the others.
#[derive(Debug, Default)]
pub(crate) struct KindsShown {
    pub(crate) keyword: keyword::Shown,
    pub(crate) http: http::Shown,
    pub(crate) dns: dns::Shown,
    pub(crate) tls: tls::Shown,
    pub(crate) heartbeat: heartbeat::Shown,
}

impl KindsShown {
    pub(crate) fn of(monitor: &Monitor, now: DateTime<Utc>) -> Result<Self, ApiError> {
        use uptime_contracts::MonitorKind;
        let stored = Stored::of(monitor)?;
        let mut shown = Self {
            keyword: keyword::shown(&stored)?,
            heartbeat: heartbeat::shown(&stored, now),
            ..Self::default()
        };
        match monitor.kind {
            MonitorKind::Http | MonitorKind::Keyword => shown.http = http::shown(&stored),
            MonitorKind::Dns => shown.dns = dns::shown(&stored),
            MonitorKind::Tls => shown.tls = tls::shown(&stored),
            MonitorKind::Heartbeat | MonitorKind::Tcp | MonitorKind::Icmp => {}
        }
        Ok(shown)
    }
}
