//! The alert contacts' request and response bodies.

use crate::error::ApiError;
use crate::validation::double_option;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use uptime_alerts::{OpsgenieRegion, ProviderOptions};
use uptime_db::models::AlertContact;
use utoipa::ToSchema;

pub use super::contact_type::ContactType;

/// The Opsgenie instance an account lives on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Region {
    /// api.opsgenie.com
    Us,
    /// api.eu.opsgenie.com
    Eu,
}

impl From<Region> for OpsgenieRegion {
    fn from(r: Region) -> Self {
        match r {
            Region::Us => OpsgenieRegion::Us,
            Region::Eu => OpsgenieRegion::Eu,
        }
    }
}

impl From<OpsgenieRegion> for Region {
    fn from(r: OpsgenieRegion) -> Self {
        match r {
            OpsgenieRegion::Us => Region::Us,
            OpsgenieRegion::Eu => Region::Eu,
        }
    }
}

/// A kind of alert a contact may receive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A monitor goes down (`monitor.down`).
    Down,
    /// A monitor comes up: recoveries and first results (`monitor.up`).
    Up,
    /// A monitor passes but responds slowly (`monitor.degraded`).
    Degraded,
    /// A TLS certificate nears its expiry (`ssl.expiring`).
    Certificate,
}

impl EventKind {
    const ALL: [EventKind; 4] = [
        EventKind::Down,
        EventKind::Up,
        EventKind::Degraded,
        EventKind::Certificate,
    ];

    /// The alert's event type (`alert_deliveries.event_type`).
    pub(crate) fn event_type(self) -> &'static str {
        let event = match self {
            EventKind::Down => uptime_alerts::EventType::MonitorDown,
            EventKind::Up => uptime_alerts::EventType::MonitorUp,
            EventKind::Degraded => uptime_alerts::EventType::MonitorDegraded,
            EventKind::Certificate => uptime_alerts::EventType::SslExpiring,
        };
        event.as_str()
    }

    pub(crate) fn from_event_type(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.event_type() == s)
    }
}

/// The least severe alert a contact receives. Outages are critical,
/// degraded responses warnings, certificate warnings critical from 3 days
/// before expiry (warning before), a first `up` info; a recovery is as
/// severe as what it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MinSeverity {
    Info,
    Warning,
    Critical,
}

impl MinSeverity {
    pub(crate) fn rank(self) -> i16 {
        let severity = match self {
            MinSeverity::Info => uptime_alerts::incident::Severity::Info,
            MinSeverity::Warning => uptime_alerts::incident::Severity::Warning,
            MinSeverity::Critical => uptime_alerts::incident::Severity::Critical,
        };
        severity.rank()
    }

    fn from_rank(rank: i16) -> Self {
        match uptime_alerts::incident::Severity::from_rank(rank) {
            Some(uptime_alerts::incident::Severity::Warning) => MinSeverity::Warning,
            Some(uptime_alerts::incident::Severity::Critical) => MinSeverity::Critical,
            _ => MinSeverity::Info,
        }
    }
}

crate::refs::with_ref! {
    /// A new alert contact.
    #[derive(Debug, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct CreateContact {
        /// 1 to 200 characters, not only whitespace.
        #[schema(min_length = 1, max_length = 200)]
        pub name: String,
        #[serde(rename = "type")]
        pub kind: ContactType,
        /// email: an address (at most 254 characters). slack, webhook, teams,
        /// discord: an `https://` URL (`http://` only where private targets are
        /// allowed), at most 2048 characters; slack, teams and discord URLs are
        /// credentials (whoever has one can post to the channel): write-only,
        /// kept encrypted, answered redacted. telegram: the chat id. ntfy: the
        /// topic. pushover: the user key. Left out for pagerduty and opsgenie.
        #[serde(default)]
        #[schema(min_length = 1, max_length = 2048)]
        pub value: Option<String>,
        /// The provider's credential, write-only (never answered): pagerduty's
        /// routing key, opsgenie's API key, telegram's bot token, pushover's
        /// application token, ntfy's access token (optional). Kept encrypted.
        #[serde(default)]
        #[schema(min_length = 1, max_length = 256)]
        pub secret: Option<String>,
        /// opsgenie only: the instance of the account (default `us`).
        #[serde(default)]
        pub region: Option<Region>,
        /// ntfy only: the server's base URL (self-hosted ntfy); default: the
        /// deployment's (`alert_providers.ntfy_url`).
        #[serde(default)]
        #[schema(min_length = 1, max_length = 2048)]
        pub server: Option<String>,
        /// The kinds of alerts the contact receives (at least one); left out:
        /// every kind, including kinds added later.
        #[serde(default)]
        #[schema(min_items = 1, max_items = 4)]
        pub events: Option<Vec<EventKind>>,
        /// The least severe alert the contact receives (default `info`: all).
        #[serde(default)]
        pub min_severity: Option<MinSeverity>,
    }
    /// A stable name of the caller's choice (monitoring as code names the
    /// contact by it): 1 to 255 of lowercase letters, digits, `.`, `_`,
    /// `-`, alphanumeric at both ends; unique among the organisation's
    /// contacts (`409` naming `ref` when taken) and immutable once set.
    create ref
}

crate::refs::with_ref! {
    /// A partial update: fields left out keep their value.
    #[derive(Debug, Default, Deserialize, ToSchema)]
    #[serde(deny_unknown_fields)]
    pub struct UpdateContact {
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, required = false, min_length = 1, max_length = 200)]
        pub name: Option<Option<String>>,
        /// May only repeat the current type.
        #[serde(default, rename = "type", deserialize_with = "double_option")]
        #[schema(value_type = ContactType, required = false)]
        pub kind: Option<Option<ContactType>>,
        /// A new email address makes the contact unverified and sends a new
        /// verification link. slack, teams, discord: a new URL replaces the
        /// stored one; the redacted form responses show, repeated, keeps it.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = String, required = false, min_length = 1, max_length = 2048)]
        pub value: Option<Option<String>>,
        /// A new credential replaces the stored one; `null` removes an optional
        /// one (ntfy's access token).
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 256)]
        pub secret: Option<Option<String>>,
        /// opsgenie only; `null` is the default, `us`.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<Region>, required = false)]
        pub region: Option<Option<Region>>,
        /// ntfy only; `null` is the deployment's server.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<String>, required = false, min_length = 1, max_length = 2048)]
        pub server: Option<Option<String>>,
        /// `null`: every kind.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<Vec<EventKind>>, required = false, min_items = 1, max_items = 4)]
        pub events: Option<Option<Vec<EventKind>>>,
        /// `null`: `info`.
        #[serde(default, deserialize_with = "double_option")]
        #[schema(value_type = Option<MinSeverity>, required = false)]
        pub min_severity: Option<Option<MinSeverity>>,
    }
    /// Sets the ref of a contact that has none; repeating the current ref
    /// (or `null` while there is none) changes nothing; changing or
    /// removing a set ref is a `400` naming `ref`.
    update ref
}

/// Whether a write-only credential is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretState {
    Set,
    Unset,
}

crate::refs::with_ref! {
    /// An alert contact.
    #[derive(Debug, Serialize, ToSchema)]
    pub struct ContactResponse {
        pub id: i64,
        /// The organisation that owns the contact.
        pub org_id: i64,
        /// Deprecated: the owning organisation's id (`org_id`), which is its
        /// first owner's user id for accounts from before organisations.
        #[schema(deprecated)]
        pub user_id: i64,
        #[serde(rename = "type")]
        pub kind: ContactType,
        pub name: String,
        /// Empty for pagerduty and opsgenie contacts. slack, teams, discord:
        /// the URL redacted (`value_redacted`), its credential (a Teams URL's
        /// `sig` value, else the last path segment: a Slack or Discord token)
        /// replaced by `[redacted]`, user info dropped:
        /// `https://hooks.slack.com/services/T0001/B0002/[redacted]`.
        pub value: String,
        /// slack, teams, discord only, always `true`: `value` is redacted; the
        /// URL itself is write-only and never answered.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub value_redacted: Option<bool>,
        /// Only verified contacts receive alerts.
        pub verified: bool,
        /// Email contacts only: whether a verification link for the current
        /// address was sent and is not used yet. `false` on an unverified contact
        /// means no email went out because a verification-email limit held:
        /// request one with `POST /api/v1/alert-contacts/{id}/resend-verification`.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub verification_link_sent: Option<bool>,
        pub created_at: DateTime<Utc>,
        pub updated_at: DateTime<Utc>,
        /// Webhook contacts only: the `whsec_...` secret that signs every request
        /// (Standard Webhooks: `webhook-signature: v1,<base64 HMAC-SHA256>`).
        #[serde(skip_serializing_if = "Option::is_none")]
        pub signing_secret: Option<String>,
        /// Provider contacts that take a credential (pagerduty, opsgenie,
        /// telegram, ntfy, pushover): whether one is stored. The credential
        /// itself is never answered.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub secret: Option<SecretState>,
        /// opsgenie only.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub region: Option<Region>,
        /// ntfy only, when the contact names its own server.
        #[serde(skip_serializing_if = "Option::is_none")]
        pub server: Option<String>,
        /// The kinds of alerts it receives; `null`: every kind.
        pub events: Option<Vec<EventKind>>,
        /// The least severe alert it receives.
        pub min_severity: MinSeverity,
    }
    /// The contact's ref; `null` when it has none.
    shown ref
}

impl ContactResponse {
    pub(crate) fn from_row(c: AlertContact) -> Result<Self, ApiError> {
        let kind = ContactType::from_db(&c.kind)?;
        let options = ProviderOptions::from_json(&c.options)
            .map_err(|e| ApiError::Internal(format!("contact {}: {}", c.id, e.message)))?;
        let secret = super::values::takes_secret(kind).then_some(if c.secret_sealed.is_some() {
            SecretState::Set
        } else {
            SecretState::Unset
        });
        Ok(Self {
            id: c.id,
            org_id: c.org_id,
            user_id: c.org_id,
            kind,
            name: c.name,
            value: super::values::shown_value(kind, &c.value),
            value_redacted: super::values::address_is_credential(kind).then_some(true),
            verified: c.verified,
            verification_link_sent: (kind == ContactType::Email)
                .then_some(c.verification_token_sha256.is_some()),
            created_at: c.created_at,
            updated_at: c.updated_at,
            signing_secret: c.signing_secret.filter(|_| kind == ContactType::Webhook),
            secret,
            region: match kind {
                ContactType::Opsgenie => Some(options.region.unwrap_or(OpsgenieRegion::Us).into()),
                _ => None,
            },
            server: options.server.filter(|_| kind == ContactType::Ntfy),
            events: c.event_kinds.map(|kinds| {
                kinds
                    .iter()
                    .filter_map(|k| EventKind::from_event_type(k))
                    .collect()
            }),
            min_severity: MinSeverity::from_rank(c.min_severity),
            ref_: None,
        })
    }
}

/// One page of alert contacts.
#[derive(Debug, Serialize, ToSchema)]
pub struct ContactList {
    pub alert_contacts: Vec<ContactResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}
