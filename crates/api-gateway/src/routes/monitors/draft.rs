//! A monitor definition in API terms while it is validated: defaults for a
//! create, a PATCH merged into the stored monitor, every rule, and the
//! definition as stored once nothing is wrong.

use super::draft_options::{origin_changed, OptionsDraft};
use super::types::{CreateMonitor, KeywordType, MonitorType, UpdateMonitor};
use crate::error::ApiError;
use crate::validation::{not_null, Problems, UrlRules};
use rand::RngCore;
use uptime_db::models::{Monitor, NewMonitor};
use uptime_db::monitors::MonitorDefinition;

pub const DEFAULT_INTERVAL_SECS: i64 = 300;
pub const DEFAULT_TIMEOUT_SECS: i64 = 30;
pub const DEFAULT_EXPECTED_STATUS: i64 = 200;
pub const DEFAULT_CONFIRMATION_COUNT: i64 = 1;
pub const DEFAULT_SSL_WARN_DAYS: i64 = 30;
const MAX_NAME_CHARS: usize = 200;
const MAX_KEYWORD_BYTES: usize = 1024;
const HEARTBEAT_TOKEN_PREFIX: &str = "hb_";
const MAX_SCHEDULE_CHARS: usize = 255;
const MAX_TIMEZONE_CHARS: usize = 64;
/// A monitor definition in API terms, before validation: what a create
/// request asks for with defaults applied, or a stored monitor with a PATCH
/// merged in. Numbers stay wide until validated, so out-of-range input gets a
/// range message rather than a parse error.
#[derive(Debug, Clone)]
pub(super) struct Draft {
    pub(super) name: String,
    pub(super) kind: MonitorType,
    pub(super) target: Option<String>,
    pub(super) interval_secs: i64,
    pub(super) timeout_secs: i64,
    pub(super) keyword: Option<String>,
    pub(super) keyword_type: Option<KeywordType>,
    pub(super) expected_status: i64,
    pub(super) confirmation_count: i64,
    pub(super) ssl_warn_days: i64,
    pub(super) latency_warn_ms: Option<i64>,
    pub(super) active: bool,
    pub(super) options: OptionsDraft,
    /// Heartbeats: a cron schedule instead of the interval, and its zone.
    pub(super) schedule: Option<String>,
    pub(super) timezone: Option<String>,
    /// Whether the request named `interval_secs` (which a schedule excludes).
    pub(super) interval_given: bool,
    /// `None`: the deployment's default regions, a majority of them.
    pub(super) regions: Option<Vec<String>>,
    pub(super) quorum: Option<i64>,
}

/// The default timeout for an interval: 30 s, or the interval when shorter.
fn default_timeout(interval_secs: i64) -> i64 {
    DEFAULT_TIMEOUT_SECS.min(interval_secs).max(1)
}

impl Draft {
    pub(super) fn from_create(mut req: CreateMonitor) -> Self {
        let options = OptionsDraft::from_create(&mut req);
        let interval_given = req.interval_secs.is_some();
        let interval_secs = req.interval_secs.unwrap_or(DEFAULT_INTERVAL_SECS);
        let keyword_type = match req.kind {
            MonitorType::Keyword => Some(req.keyword_type.unwrap_or(KeywordType::Contains)),
            _ => req.keyword_type,
        };
        Self {
            name: req.name,
            kind: req.kind,
            target: req.target,
            interval_secs,
            timeout_secs: req
                .timeout_secs
                .unwrap_or_else(|| default_timeout(interval_secs)),
            keyword: req.keyword,
            keyword_type,
            expected_status: req.expected_status.unwrap_or(DEFAULT_EXPECTED_STATUS),
            confirmation_count: req.confirmation_count.unwrap_or(DEFAULT_CONFIRMATION_COUNT),
            ssl_warn_days: req.ssl_warn_days.unwrap_or(DEFAULT_SSL_WARN_DAYS),
            latency_warn_ms: req.latency_warn_ms,
            active: req.active.unwrap_or(true),
            options,
            schedule: req.schedule,
            timezone: req.timezone,
            interval_given,
            regions: req.regions,
            quorum: req.quorum,
        }
    }

    /// The stored monitor with `patch` applied. `null` on a field that cannot
    /// be cleared is recorded in `problems`.
    pub(super) fn merge(
        stored: &Monitor,
        mut patch: UpdateMonitor,
        problems: &mut Problems,
    ) -> Result<Self, ApiError> {
        let stored_kind = MonitorType::from(stored.kind);
        let kind = not_null(problems, "type", patch.kind).unwrap_or(stored_kind);
        let stored_options = stored.options().map_err(|e| {
            ApiError::Internal(format!(
                "monitor {} has unreadable check_options: {e}",
                stored.id
            ))
        })?;
        let options = OptionsDraft::merge(
            kind,
            stored_options,
            stored.http_password_sealed.as_ref(),
            &mut patch,
        );
        let target = patch.target.unwrap_or_else(|| stored.target.clone());
        // The stored password was given for the stored target's origin: it
        // follows the monitor to another origin (scheme, host, port) only
        // when the request says so, by restating it (or dropping it).
        if options
            .basic_auth
            .as_ref()
            .is_some_and(|auth| auth.keeps_stored_password())
            && origin_changed(stored.target.as_deref(), target.as_deref())
        {
            problems.add(
                "basic_auth.password",
                "the target's origin changed: restate the password or remove basic_auth",
            );
        }

        let interval_given = matches!(patch.interval_secs, Some(Some(_)));
        let interval_secs = not_null(problems, "interval_secs", patch.interval_secs)
            .unwrap_or(i64::from(stored.interval_secs));
        let heartbeat = kind == MonitorType::Heartbeat;
        let keep = |stored: &Option<String>| stored.clone().filter(|_| heartbeat);
        let timezone = match (&patch.timezone, &patch.schedule) {
            (Some(given), _) => given.clone(),
            // The zone is the schedule's: clearing the schedule drops it.
            (None, Some(None)) => None,
            (None, _) => keep(&stored.heartbeat_timezone),
        };
        let schedule = match patch.schedule {
            Some(given) => given,
            None => keep(&stored.heartbeat_schedule),
        };
        let timeout_secs = not_null(problems, "timeout_secs", patch.timeout_secs)
            // Not given: keep the stored timeout, lowered to a new, shorter interval.
            .unwrap_or_else(|| i64::from(stored.timeout_secs).min(interval_secs).max(1));

        // A heartbeat has no regions: the stored ones go (a monitor turned
        // into a heartbeat), and only values in this request are kept (to be
        // refused). `null` clears to the defaults.
        let (regions, quorum) = if heartbeat {
            (patch.regions.flatten(), patch.quorum.flatten())
        } else {
            (
                patch.regions.unwrap_or_else(|| stored.regions.clone()),
                match patch.quorum {
                    Some(given) => given,
                    None => stored.quorum.map(i64::from),
                },
            )
        };

        let (keyword, keyword_type) = if kind == MonitorType::Keyword {
            let keyword = patch.keyword.unwrap_or_else(|| stored.keyword.clone());
            let stored_type = stored
                .keyword_type
                .as_deref()
                .map(KeywordType::from_db)
                .transpose()?;
            let keyword_type = match patch.keyword_type {
                Some(given) => given,
                None => stored_type,
            };
            (keyword, Some(keyword_type.unwrap_or(KeywordType::Contains)))
        } else {
            // Other types carry no keyword: the stored one goes, and only an
            // explicit value in this request is kept (to be refused).
            (patch.keyword.flatten(), patch.keyword_type.flatten())
        };

        Ok(Self {
            name: not_null(problems, "name", patch.name).unwrap_or_else(|| stored.name.clone()),
            kind,
            target,
            interval_secs,
            timeout_secs,
            keyword,
            keyword_type,
            expected_status: not_null(problems, "expected_status", patch.expected_status)
                .unwrap_or(i64::from(stored.expected_status)),
            confirmation_count: not_null(problems, "confirmation_count", patch.confirmation_count)
                .unwrap_or(i64::from(stored.confirmation_count)),
            ssl_warn_days: not_null(problems, "ssl_warn_days", patch.ssl_warn_days)
                .unwrap_or(i64::from(stored.ssl_warn_days)),
            latency_warn_ms: match patch.latency_warn_ms {
                Some(given) => given,
                None => stored.latency_warn_ms.map(i64::from),
            },
            active: not_null(problems, "active", patch.active).unwrap_or(stored.active),
            options,
            schedule,
            timezone,
            interval_given,
            regions,
            quorum,
        })
    }

    /// Checks every rule, adding each broken one to `problems`.
    pub(super) fn validate(
        &self,
        problems: &mut Problems,
        allow_private_targets: bool,
        regions: &uptime_config::RegionsSettings,
    ) {
        problems.check_len("name", &self.name, MAX_NAME_CHARS);
        super::placement::validate(
            self.kind,
            self.regions.as_deref(),
            self.quorum,
            regions,
            problems,
        );
        match (self.kind, self.target.as_deref()) {
            (MonitorType::Http | MonitorType::Keyword, None) => {
                problems.add("target", "is required for http and keyword monitors")
            }
            (MonitorType::Http | MonitorType::Keyword, Some(url)) => problems.check_url(
                "target",
                url,
                UrlRules {
                    allow_http: true,
                    allow_private_hosts: allow_private_targets,
                },
            ),
            (MonitorType::Heartbeat, Some(label)) => {
                problems.check_len("target", label, crate::validation::MAX_URL_CHARS)
            }
            (MonitorType::Heartbeat, None) => {}
            (kind, None) => problems.add(
                "target",
                format!("is required for {} monitors", kind_name(kind)),
            ),
            (_, Some(t)) if t.chars().count() > crate::validation::MAX_URL_CHARS => problems.add(
                "target",
                format!(
                    "must be at most {} characters",
                    crate::validation::MAX_URL_CHARS
                ),
            ),
            (MonitorType::Tcp, Some(t)) => {
                problems.check_host_port("target", t, allow_private_targets)
            }
            (MonitorType::Tls, Some(t)) => {
                problems.check_tls_target("target", t, allow_private_targets)
            }
            (MonitorType::Dns, Some(t)) => {
                problems.check_domain("target", t, allow_private_targets)
            }
            (MonitorType::Icmp, Some(t)) => problems.check_host("target", t, allow_private_targets),
        }
        self.options
            .validate(self.kind, problems, allow_private_targets);
        match (self.kind, self.keyword.as_deref()) {
            (MonitorType::Keyword, None) => {
                problems.add("keyword", "is required for keyword monitors")
            }
            (MonitorType::Keyword, Some(k)) if k.is_empty() || k.len() > MAX_KEYWORD_BYTES => {
                problems.add(
                    "keyword",
                    format!("must be 1 to {MAX_KEYWORD_BYTES} bytes long"),
                )
            }
            (MonitorType::Keyword, Some(_)) | (_, None) => {}
            (_, Some(_)) => problems.add("keyword", "is only for keyword monitors"),
        }
        if self.kind != MonitorType::Keyword && self.keyword_type.is_some() {
            problems.add("keyword_type", "is only for keyword monitors");
        }
        problems.check_range("interval_secs", self.interval_secs, 10..=86_400);
        problems.check_range("timeout_secs", self.timeout_secs, 1..=120);
        self.validate_schedule(problems);
        // With a schedule the interval is unused: the timeout (the grace)
        // need not fit in it.
        if self.schedule.is_none()
            && (1..=120).contains(&self.timeout_secs)
            && (10..=86_400).contains(&self.interval_secs)
            && self.timeout_secs > self.interval_secs
        {
            problems.add("timeout_secs", "must not exceed interval_secs");
        }
        problems.check_range("expected_status", self.expected_status, 100..=599);
        problems.check_range("confirmation_count", self.confirmation_count, 1..=10);
        problems.check_range("ssl_warn_days", self.ssl_warn_days, 0..=365);
        if let Some(ms) = self.latency_warn_ms {
            problems.check_range("latency_warn_ms", ms, 1..=600_000);
        }
    }

    fn validate_schedule(&self, problems: &mut Problems) {
        if self.kind != MonitorType::Heartbeat {
            for (field, set) in [
                ("schedule", self.schedule.is_some()),
                ("timezone", self.timezone.is_some()),
            ] {
                if set {
                    problems.add(field, "is only for heartbeat monitors");
                }
            }
            return;
        }
        if let Some(zone) = &self.timezone {
            problems.check_len("timezone", zone, MAX_TIMEZONE_CHARS);
            if self.schedule.is_none() {
                problems.add(
                    "timezone",
                    "is the time zone of a schedule: set schedule too",
                );
            }
        }
        let Some(expression) = &self.schedule else {
            return;
        };
        if self.interval_given {
            problems.add(
                "interval_secs",
                "is not used with a schedule: give either interval_secs or schedule \
                 (schedule null goes back to the interval)",
            );
        }
        let n = expression.chars().count();
        if n == 0 || n > MAX_SCHEDULE_CHARS {
            return problems.add(
                "schedule",
                format!("must be 1 to {MAX_SCHEDULE_CHARS} characters long"),
            );
        }
        if self
            .timezone
            .as_ref()
            .is_some_and(|z| z.chars().count() > MAX_TIMEZONE_CHARS)
        {
            return;
        }
        match uptime_heartbeats::Schedule::parse(expression, self.timezone.as_deref()) {
            Ok(_) => {}
            Err(e @ uptime_heartbeats::ScheduleError::Timezone(_)) => {
                problems.add("timezone", e.to_string())
            }
            Err(e @ uptime_heartbeats::ScheduleError::Cron { .. }) => {
                problems.add("schedule", e.to_string())
            }
        }
    }

    /// The definition as stored. Call after [`Draft::validate`] found nothing:
    /// every number then fits an `i32`. `regions` are the deployment's: a
    /// monitor naming none costs the default ones in its `check_load_millis`.
    pub(super) fn into_definition(
        self,
        heartbeat_token: Option<String>,
        regions: &uptime_config::RegionsSettings,
        keyring: Option<&uptime_secrets::Keyring>,
    ) -> Result<MonitorDefinition, ApiError> {
        let narrow = |field: &str, v: i64| {
            i32::try_from(v)
                .map_err(|_| ApiError::Internal(format!("{field} {v} passed validation")))
        };
        // What the checks-per-minute budget counts (crate::quotas).
        let check_load_millis = uptime_db::quotas::check_load_millis(
            self.kind.into(),
            narrow("interval_secs", self.interval_secs)?,
            regions.of(self.regions.as_deref()).len(),
        );
        let (options, password) = self.options.into_stored(self.kind);
        let http_password_sealed = password.into_sealed(keyring)?;
        // Stored as the schedule reads them: fields one space apart, the
        // zone's canonical name.
        let schedule = match self.schedule.as_deref() {
            Some(expression) => Some(
                uptime_heartbeats::Schedule::parse(expression, self.timezone.as_deref())
                    .map_err(|e| ApiError::Internal(format!("schedule passed validation: {e}")))?,
            ),
            None => None,
        };
        Ok(MonitorDefinition {
            name: self.name.trim().to_string(),
            kind: self.kind.into(),
            target: self.target.map(|t| t.trim().to_string()),
            interval_secs: narrow("interval_secs", self.interval_secs)?,
            timeout_secs: narrow("timeout_secs", self.timeout_secs)?,
            keyword: self.keyword,
            keyword_type: self.keyword_type.map(|k| k.as_str().to_string()),
            expected_status: narrow("expected_status", self.expected_status)?,
            confirmation_count: narrow("confirmation_count", self.confirmation_count)?,
            ssl_warn_days: narrow("ssl_warn_days", self.ssl_warn_days)?,
            latency_warn_ms: self
                .latency_warn_ms
                .map(|ms| narrow("latency_warn_ms", ms))
                .transpose()?,
            heartbeat_token,
            active: self.active,
            check_options: uptime_db::monitors::options_column(&options),
            http_password_sealed,
            heartbeat_schedule: schedule.as_ref().map(|s| s.expression().to_string()),
            // A zone only when one was given: none reads as UTC.
            heartbeat_timezone: match (&schedule, &self.timezone) {
                (Some(s), Some(_)) => Some(s.timezone().to_string()),
                _ => None,
            },
            regions: super::placement::stored(self.regions),
            quorum: self.quorum.map(|q| narrow("quorum", q)).transpose()?,
            check_load_millis,
        })
    }
}

/// What a create request (`POST /api/v1/monitors`, or one item of a bulk
/// create) asks for: the monitor to insert and the contact ids to link (as
/// given: the caller checks them against the owner's contacts), or 400
/// naming every problem. The one validation path of both creates.
pub(super) fn new_monitor(
    org_id: i64,
    mut req: CreateMonitor,
    allow_private_targets: bool,
    regions: &uptime_config::RegionsSettings,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<(NewMonitor, Vec<i64>), ApiError> {
    let contact_ids = req.alert_contact_ids.take().unwrap_or_default();
    let draft = Draft::from_create(req);
    let mut problems = Problems::new();
    draft.validate(&mut problems, allow_private_targets, regions);
    problems.into_result()?;
    let token = (draft.kind == MonitorType::Heartbeat).then(new_heartbeat_token);
    let new = NewMonitor {
        org_id,
        definition: draft.into_definition(token, regions, keyring)?,
    };
    Ok((new, contact_ids))
}

/// The type as requests name it.
fn kind_name(kind: MonitorType) -> &'static str {
    uptime_contracts::MonitorKind::from(kind).as_str()
}

/// `hb_` and 32 lowercase hex characters (128 bits from the OS's CSPRNG).
pub(super) fn new_heartbeat_token() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{HEARTBEAT_TOKEN_PREFIX}{}", hex::encode(bytes))
}
