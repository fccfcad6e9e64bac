//! The api-gateway's configuration (see `uptime-config` for the layering).

use serde::Deserialize;
use uptime_config::{
    AckLinkSettings, AlertProviderSettings, DatabaseSettings, NatsSettings, OpsSettings,
    RegionsSettings, SafetySettings, SecretsSettings, SmtpSettings, TelemetrySettings,
};

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct GatewaySettings {
    pub http: HttpSettings,
    pub database: DatabaseSettings,
    pub nats: NatsSettings,
    pub telemetry: TelemetrySettings,
    pub safety: SafetySettings,
    pub rate_limit: RateLimitSettings,
    /// The SMTP relay test alerts to email contacts go through.
    pub smtp: SmtpSettings,
    /// `/healthz`, `/readyz` and `/metrics` for operators, off the public API.
    pub ops: OpsSettings,
    /// Pings accepted per heartbeat token.
    pub heartbeat_limit: HeartbeatLimitSettings,
    /// Remembering keys that failed authentication.
    pub auth: AuthSettings,
    /// What one user may own.
    pub quotas: QuotaSettings,
    /// On-demand checks.
    pub manual_checks: ManualCheckSettings,
    /// Verification emails.
    pub verification_mail: VerificationMailSettings,
    /// The retention section every service reads; the gateway uses
    /// `verification_token_hours`, so a verification link stops working the
    /// moment it expires, not at the recorder's next pruning round.
    pub retention: uptime_retention::RetentionSettings,
    /// `POST /api/v1/monitors/bulk`.
    pub bulk_create: BulkCreateSettings,
    /// `POST /api/v1/apply`: its bounds (`UPTIME_APPLY__*`).
    pub apply: ApplySettings,
    /// `Idempotency-Key` on POSTs (how long replays last is
    /// `retention.idempotency_hours`).
    pub idempotency: IdempotencySettings,
    /// Invitations to join an organisation.
    pub invitations: InvitationSettings,
    /// The regions monitors may name and the default ones.
    pub regions: RegionsSettings,
    /// The keys basic-auth passwords are sealed with. None: a
    /// monitor with a password is refused (400 naming the field).
    pub secrets: SecretsSettings,
    /// `GET /api/v1/metrics`, the organisations' metrics for their own
    /// Prometheus.
    pub tenant_metrics: TenantMetricsSettings,
    /// The acknowledge links of alerts (the notifier signs them with the
    /// same secret).
    pub ack_links: AckLinkSettings,
    /// The alert providers' endpoints, for test alerts.
    pub alert_providers: AlertProviderSettings,
    /// Status pages and badges (served by the status-pages service).
    pub status_pages: StatusPageSettings,
    /// Escalation policies' bounds (the shortest step delay).
    pub escalation: uptime_config::EscalationSettings,
    /// The lowest reminder interval and flapping times monitors may set.
    pub alert_rules: AlertRuleSettings,
}

/// The floors of monitors' alert rules (`UPTIME_ALERT_RULES__*`). The
/// defaults are production's; tests lower them to see reminders and the end
/// of flapping within seconds.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct AlertRuleSettings {
    /// The shortest `reminder_interval_secs` (default 300).
    pub min_reminder_interval_secs: u32,
    /// The shortest `flap_window_secs` and `flap_stable_secs` (default 60).
    pub min_flap_secs: u32,
}

impl Default for AlertRuleSettings {
    fn default() -> Self {
        Self {
            min_reminder_interval_secs: 300,
            min_flap_secs: 60,
        }
    }
}

impl Default for GatewaySettings {
    fn default() -> Self {
        Self {
            http: HttpSettings::default(),
            database: DatabaseSettings::default(),
            nats: NatsSettings::default(),
            telemetry: TelemetrySettings::default(),
            safety: SafetySettings::default(),
            rate_limit: RateLimitSettings::default(),
            smtp: SmtpSettings::default(),
            // Loopback and a free port unless configured (the Helm chart sets
            // `UPTIME_OPS__LISTEN`): metrics are never public by accident,
            // and gateways started side by side (tests) do not collide.
            ops: OpsSettings {
                listen: "127.0.0.1:0".into(),
                ..Default::default()
            },
            heartbeat_limit: HeartbeatLimitSettings::default(),
            auth: AuthSettings::default(),
            quotas: QuotaSettings::default(),
            manual_checks: ManualCheckSettings::default(),
            verification_mail: VerificationMailSettings::default(),
            retention: uptime_retention::RetentionSettings::default(),
            bulk_create: BulkCreateSettings::default(),
            apply: ApplySettings::default(),
            idempotency: IdempotencySettings::default(),
            invitations: InvitationSettings::default(),
            regions: RegionsSettings::default(),
            secrets: SecretsSettings::default(),
            status_pages: StatusPageSettings::default(),
            tenant_metrics: TenantMetricsSettings::default(),
            ack_links: AckLinkSettings::default(),
            alert_providers: AlertProviderSettings::default(),
            escalation: uptime_config::EscalationSettings::default(),
            alert_rules: AlertRuleSettings::default(),
        }
    }
}

impl GatewaySettings {
    /// Refuses settings the gateway cannot serve, before it starts.
    pub fn validate(&self) -> Result<(), InvalidSettings> {
        validate_regions(&self.regions)
    }
}

/// A setting the gateway refuses to start with.
#[derive(Debug, thiserror::Error)]
#[error("invalid setting {field}: {reason}")]
pub struct InvalidSettings {
    pub field: &'static str,
    pub reason: String,
}

/// Every region a name a checker can use, at least one known and one
/// default, and the default ones known: a monitor that names no regions is
/// checked from `default`, so an unknown one there would never be checked.
pub fn validate_regions(regions: &RegionsSettings) -> Result<(), InvalidSettings> {
    let invalid = |field, reason: String| Err(InvalidSettings { field, reason });
    for (field, list) in [
        ("regions.known", &regions.known),
        ("regions.default", &regions.default),
    ] {
        if list.is_empty() {
            return invalid(field, "must name at least one region".into());
        }
        if let Some(bad) = list
            .iter()
            .find(|r| !uptime_contracts::regions::is_valid_region(r))
        {
            return invalid(
                field,
                format!(
                    "{bad:?} is not a region name (1 to {} of a-z, 0-9 and -, not starting with -)",
                    uptime_contracts::regions::MAX_REGION_CHARS
                ),
            );
        }
    }
    if let Some(unknown) = regions.default.iter().find(|r| !regions.known.contains(r)) {
        return invalid(
            "regions.default",
            format!("{unknown:?} is not in regions.known"),
        );
    }
    if regions.presence_ttl_secs == 0 {
        return invalid("regions.presence_ttl_secs", "must be at least 1".into());
    }
    Ok(())
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct HttpSettings {
    /// Address the API listens on; port 0 picks a free one.
    pub listen: String,
    /// How people reach this API, for links in emails (verification).
    pub public_base_url: String,
    /// HTTP worker threads; 0 = one per core.
    pub workers: usize,
}

impl Default for HttpSettings {
    fn default() -> Self {
        Self {
            listen: "127.0.0.1:8080".into(),
            public_base_url: "http://127.0.0.1:8080".into(),
            workers: 0,
        }
    }
}

/// A token bucket of `burst` refilled at `per_second`; `per_second` 0 turns
/// limiting off. `rate_limit` counts a user's requests (all their keys
/// together), `heartbeat_limit` the pings of one heartbeat token. A request
/// costs one token, except a bulk create: one more per 10 monitors or per
/// 20 KiB of body, whichever is more, at most half the `burst`
/// (`routes::monitors::bulk_tokens`): with the defaults a full batch of 1000
/// costs 50, two go at once, then one every 2.5 s.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RateLimitSettings {
    pub per_second: u32,
    pub burst: u32,
}

impl Default for RateLimitSettings {
    fn default() -> Self {
        Self {
            per_second: 20,
            burst: 100,
        }
    }
}

/// Pings accepted per heartbeat token (a bucket like [`RateLimitSettings`],
/// with its own defaults: 1 a second, bursts of 10).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct HeartbeatLimitSettings {
    pub per_second: u32,
    pub burst: u32,
}

impl Default for HeartbeatLimitSettings {
    fn default() -> Self {
        Self {
            per_second: 1,
            burst: 10,
        }
    }
}

impl From<HeartbeatLimitSettings> for RateLimitSettings {
    fn from(s: HeartbeatLimitSettings) -> Self {
        Self {
            per_second: s.per_second,
            burst: s.burst,
        }
    }
}

/// Unknown keys are remembered for `negative_cache_secs` (up to
/// `negative_cache_capacity` of them), so a flood of made-up keys costs no
/// database query each. A key created later is never in it (keys are
/// random).
///
/// Valid keys are remembered for `positive_cache_secs` (up to
/// `positive_cache_capacity`), so a request with a known key costs no
/// database query. A revocation drops the key from every replica's memory at
/// once (`uptime.keys.revoked.v1`); `positive_cache_secs` bounds how long a
/// replica that missed that message (disconnected from NATS) can still
/// accept the key. 0 in either switches a cache off.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct AuthSettings {
    pub negative_cache_secs: u64,
    pub negative_cache_capacity: u64,
    pub positive_cache_secs: u64,
    pub positive_cache_capacity: u64,
}

impl Default for AuthSettings {
    fn default() -> Self {
        Self {
            negative_cache_secs: 60,
            negative_cache_capacity: 100_000,
            positive_cache_secs: 60,
            positive_cache_capacity: 100_000,
        }
    }
}

/// Default quotas per user; `api-gateway set-quota` overrides them for one
/// user (stored in `user_quotas`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct QuotaSettings {
    pub monitors: i64,
    pub alert_contacts: i64,
    /// Unrevoked keys.
    pub api_keys: i64,
    /// Checks per minute over the user's active monitors: each costs its
    /// regions × 60 / interval_secs, heartbeats nothing (`crate::quotas`).
    pub checks_per_minute: i64,
}

impl Default for QuotaSettings {
    fn default() -> Self {
        Self {
            monitors: 10_000,
            alert_contacts: 200,
            api_keys: 100,
            // Five times a full monitor quota at the default interval from
            // one region (10,000 × 60 / 300 = 2,000): room for shorter
            // intervals and more regions, while one user cannot ask for
            // the most (16 regions every 10 s: 96 checks a minute each) on
            // every monitor of their quota (960,000 a minute).
            checks_per_minute: 10_000,
        }
    }
}

/// A monitor has at most one on-demand check in flight: queued or running
/// and not yet recorded, for at most `in_flight_secs` (then it is presumed
/// lost and a new one may be queued).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ManualCheckSettings {
    pub in_flight_secs: u64,
}

impl Default for ManualCheckSettings {
    fn default() -> Self {
        Self {
            in_flight_secs: 300,
        }
    }
}

/// Verification emails go to addresses nobody has confirmed yet, so they are
/// limited: one per contact per `per_contact_interval_secs`, and at most
/// `daily_cap_per_user` per user in any 24 hours.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct VerificationMailSettings {
    pub per_contact_interval_secs: u64,
    pub daily_cap_per_user: i64,
}

impl Default for VerificationMailSettings {
    fn default() -> Self {
        Self {
            per_contact_interval_secs: 600,
            daily_cap_per_user: 20,
        }
    }
}

/// How many monitors one `POST /api/v1/monitors/bulk` may create. The
/// route's body limit is fixed (4 MiB, `routes::monitors::BULK_MAX_BODY_BYTES`:
/// 1000 of the largest monitors, about 20,000 typical ones); the time the
/// user's row stays locked while a batch is counted and inserted grows with it.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct BulkCreateSettings {
    pub max_items: usize,
}

impl Default for BulkCreateSettings {
    fn default() -> Self {
        Self { max_items: 1000 }
    }
}

/// `POST /api/v1/apply` (`UPTIME_APPLY__*`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct ApplySettings {
    /// Resources in one apply at most (default 10,000).
    pub max_resources: usize,
    /// An apply's body in bytes at most (default 32 MiB; at most that much
    /// with an `Idempotency-Key`, whose bodies are kept whole to digest).
    pub max_body_bytes: usize,
}

impl Default for ApplySettings {
    fn default() -> Self {
        Self {
            max_resources: 10_000,
            max_body_bytes: crate::http::body_limits::APPLY_BODY_BYTES,
        }
    }
}

/// `Idempotency-Key` (`UPTIME_IDEMPOTENCY__*`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct IdempotencySettings {
    /// A keyed request still unanswered after this many seconds belonged to
    /// a gateway that died mid-request: a retry with its key runs it again.
    /// Longer than any request takes (the bulk create's included).
    pub abandoned_after_secs: u64,
}

impl Default for IdempotencySettings {
    fn default() -> Self {
        Self {
            abandoned_after_secs: 300,
        }
    }
}

/// `GET /api/v1/metrics` (`UPTIME_TENANT_METRICS__*`): what one scrape may
/// cost. An organisation's page is built by one query and kept for
/// `cache_secs`, so scraping faster than that costs no query at all.
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct TenantMetricsSettings {
    /// How long a built page is served before it is built again.
    pub cache_secs: u64,
    /// The most monitors one page shows (lowest ids first); past it the page
    /// says so (`uptime_metrics_monitors_truncated 1`).
    pub max_monitors: i64,
    /// Organisations whose pages are kept at once.
    pub cache_capacity: u64,
}

impl Default for TenantMetricsSettings {
    fn default() -> Self {
        Self {
            cache_secs: 15,
            max_monitors: 10_000,
            cache_capacity: 10_000,
        }
    }
}

/// An invitation's link works `expiry_days` after it was sent (then it is
/// pruned `retention.invitations_days` later).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct InvitationSettings {
    pub expiry_days: u32,
}

impl Default for InvitationSettings {
    fn default() -> Self {
        Self { expiry_days: 7 }
    }
}

/// Status pages: how many an organisation may have, and where the
/// status-pages service is reached (the URLs the API shows).
#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct StatusPageSettings {
    pub max_pages_per_org: i64,
    pub public_base_url: String,
    /// Notices a page keeps (the oldest resolved ones go past it).
    pub max_notices_per_page: i64,
    pub max_updates_per_notice: i64,
}

impl Default for StatusPageSettings {
    fn default() -> Self {
        Self {
            max_pages_per_org: 20,
            public_base_url: "http://localhost:8090".into(),
            max_notices_per_page: 100,
            max_updates_per_notice: 50,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn regions(known: &[&str], default: &[&str]) -> RegionsSettings {
        RegionsSettings {
            known: known.iter().map(|s| s.to_string()).collect(),
            default: default.iter().map(|s| s.to_string()).collect(),
            presence_ttl_secs: 30,
        }
    }

    #[test]
    fn the_default_regions_are_valid() {
        GatewaySettings::default().validate().unwrap();
        validate_regions(&regions(&["eu", "us", "ap"], &["eu", "us"])).unwrap();
    }

    #[test]
    fn bad_regions_are_refused_naming_the_setting() {
        for (known, default, field) in [
            (&[][..], &["default"][..], "regions.known"),
            (&["eu"][..], &[][..], "regions.default"),
            (&["EU"][..], &["EU"][..], "regions.known"),
            (&["eu"][..], &["eu.west"][..], "regions.default"),
            (&["eu", "us"][..], &["ap"][..], "regions.default"),
        ] {
            let err = validate_regions(&regions(known, default)).unwrap_err();
            assert_eq!(err.field, field, "{known:?} {default:?}: {err}");
        }
    }
}
