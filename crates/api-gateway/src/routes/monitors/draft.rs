//! A monitor definition in API terms while it is validated: defaults for a
//! create, a PATCH merged into the stored monitor, every rule (the kinds'
//! own in [`super::kinds`], the regions' in [`super::placement`]), and the
//! definition as stored once nothing is wrong.

use super::kinds::{self, KindFields, Stored};
use super::monitor_type::MonitorType;
use super::types::{CreateMonitor, UpdateMonitor};
use crate::error::ApiError;
use crate::validation::{not_null, Problems};
use rand::RngCore;
use uptime_contracts::bounds::{
    Bounded, ConfirmationCount, ExpectedStatus, IntervalSecs, LatencyWarnMs, SslWarnDays,
    TimeoutSecs,
};
use uptime_db::models::{Monitor, NewMonitor};
use uptime_db::monitors::MonitorDefinition;
use uptime_labels::Labels;

pub const DEFAULT_INTERVAL_SECS: i64 = 300;
pub const DEFAULT_TIMEOUT_SECS: i64 = 30;
pub const DEFAULT_EXPECTED_STATUS: i64 = 200;
pub const DEFAULT_CONFIRMATION_COUNT: i64 = 1;
pub const DEFAULT_SSL_WARN_DAYS: i64 = 30;
const MAX_NAME_CHARS: usize = 200;
const HEARTBEAT_TOKEN_PREFIX: &str = "hb_";

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
    pub(super) expected_status: i64,
    pub(super) confirmation_count: i64,
    pub(super) ssl_warn_days: i64,
    pub(super) latency_warn_ms: Option<i64>,
    pub(super) active: bool,
    /// Each kind's own fields.
    pub(super) kinds: KindFields,
    /// Whether the request named `interval_secs` (which a schedule excludes).
    pub(super) interval_given: bool,
    /// `None`: the deployment's default regions, a majority of them.
    pub(super) regions: Option<Vec<String>>,
    pub(super) quorum: Option<i64>,
    pub(super) labels: Labels,
}

/// Adds a problem naming the field unless `value` is within its range.
fn check<B: Bounded>(problems: &mut Problems, value: i64) {
    problems.check_range(B::FIELD, value, B::RANGE);
}

/// A number [`Draft::validate`] checked, as its bounded type.
fn checked<B: Bounded>(value: i64) -> Result<B, ApiError> {
    B::new(value)
        .ok_or_else(|| ApiError::Internal(format!("{} {value} passed validation", B::FIELD)))
}

/// The default timeout for an interval: 30 s, or the interval when shorter.
fn default_timeout(interval_secs: i64) -> i64 {
    DEFAULT_TIMEOUT_SECS.min(interval_secs).max(1)
}

impl Draft {
    pub(super) fn from_create(req: CreateMonitor) -> Self {
        let (first, rest) = (req.first, req.rest);
        let kinds = KindFields::from_create(first.kind, req.kinds);
        let interval_given = first.interval_secs.is_some();
        let interval_secs = first.interval_secs.unwrap_or(DEFAULT_INTERVAL_SECS);
        Self {
            name: first.name,
            kind: first.kind,
            target: first.target,
            interval_secs,
            timeout_secs: first
                .timeout_secs
                .unwrap_or_else(|| default_timeout(interval_secs)),
            expected_status: rest.expected_status.unwrap_or(DEFAULT_EXPECTED_STATUS),
            confirmation_count: rest
                .confirmation_count
                .unwrap_or(DEFAULT_CONFIRMATION_COUNT),
            ssl_warn_days: rest.ssl_warn_days.unwrap_or(DEFAULT_SSL_WARN_DAYS),
            latency_warn_ms: rest.latency_warn_ms,
            active: rest.active.unwrap_or(true),
            kinds,
            interval_given,
            regions: req.placement.regions,
            quorum: req.placement.quorum,
            labels: req.labels.labels.unwrap_or_default(),
        }
    }

    /// A basic-auth password given equal to `stored`'s keeps its seal
    /// (`BasicAuthDraft::keep_if_restated`).
    pub(super) fn keep_restated_password(
        &mut self,
        stored: &Monitor,
        keyring: Option<&uptime_secrets::Keyring>,
    ) {
        if let Some(auth) = self.kinds.http.basic_auth.as_mut() {
            auth.keep_if_restated(stored.http_password_sealed.as_ref(), keyring);
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
        let kind = not_null(problems, "type", patch.first.kind.take()).unwrap_or(stored_kind);
        let target = patch
            .first
            .target
            .take()
            .unwrap_or_else(|| stored.target.clone());
        let kinds = KindFields::merge(
            kind,
            &Stored::of(stored)?,
            patch.kinds,
            target.as_deref(),
            problems,
        )?;
        let (first, rest) = (patch.first, patch.rest);

        let interval_given = matches!(first.interval_secs, Some(Some(_)));
        let interval_secs = not_null(problems, "interval_secs", first.interval_secs)
            .unwrap_or(i64::from(stored.interval_secs));
        let timeout_secs = not_null(problems, "timeout_secs", first.timeout_secs)
            // Not given: keep the stored timeout, lowered to a new, shorter interval.
            .unwrap_or_else(|| i64::from(stored.timeout_secs).min(interval_secs).max(1));

        // A heartbeat has no regions: the stored ones go (a monitor turned
        // into a heartbeat), and only values in this request are kept (to be
        // refused). `null` clears to the defaults.
        let labels = match patch.labels.labels.take() {
            Some(given) => given.unwrap_or_default(),
            None => Labels::from_json(&stored.labels),
        };
        let given = patch.placement;
        let (regions, quorum) = if kind == MonitorType::Heartbeat {
            (given.regions.flatten(), given.quorum.flatten())
        } else {
            (
                given.regions.unwrap_or_else(|| stored.regions.clone()),
                match given.quorum {
                    Some(given) => given,
                    None => stored.quorum.map(i64::from),
                },
            )
        };

        Ok(Self {
            name: not_null(problems, "name", first.name).unwrap_or_else(|| stored.name.clone()),
            kind,
            target,
            interval_secs,
            timeout_secs,
            expected_status: not_null(problems, "expected_status", rest.expected_status)
                .unwrap_or(i64::from(stored.expected_status)),
            confirmation_count: not_null(problems, "confirmation_count", rest.confirmation_count)
                .unwrap_or(i64::from(stored.confirmation_count)),
            ssl_warn_days: not_null(problems, "ssl_warn_days", rest.ssl_warn_days)
                .unwrap_or(i64::from(stored.ssl_warn_days)),
            latency_warn_ms: match rest.latency_warn_ms {
                Some(given) => given,
                None => stored.latency_warn_ms.map(i64::from),
            },
            active: not_null(problems, "active", rest.active).unwrap_or(stored.active),
            kinds,
            interval_given,
            regions,
            quorum,
            labels,
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
        super::labels::validate(&self.labels, problems);
        super::placement::validate(
            self.kind,
            self.regions.as_deref(),
            self.quorum,
            regions,
            problems,
        );
        kinds::check_target(
            self.kind,
            self.target.as_deref(),
            problems,
            allow_private_targets,
        );
        self.kinds
            .validate_options(self.kind, problems, allow_private_targets);
        self.kinds.keyword.validate(self.kind, problems);
        check::<IntervalSecs>(problems, self.interval_secs);
        check::<TimeoutSecs>(problems, self.timeout_secs);
        self.kinds
            .heartbeat
            .validate(self.kind, self.interval_given, problems);
        // With a schedule the interval is unused: the timeout (the grace)
        // need not fit in it.
        if self.kinds.heartbeat.schedule.is_none()
            && TimeoutSecs::RANGE.contains(&self.timeout_secs)
            && IntervalSecs::RANGE.contains(&self.interval_secs)
            && self.timeout_secs > self.interval_secs
        {
            problems.add("timeout_secs", "must not exceed interval_secs");
        }
        check::<ExpectedStatus>(problems, self.expected_status);
        check::<ConfirmationCount>(problems, self.confirmation_count);
        check::<SslWarnDays>(problems, self.ssl_warn_days);
        if let Some(ms) = self.latency_warn_ms {
            check::<LatencyWarnMs>(problems, ms);
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
        let interval_secs = checked::<IntervalSecs>(self.interval_secs)?;
        // What the checks-per-minute budget counts (crate::quotas).
        let check_load_millis = uptime_db::quotas::check_load_millis(
            self.kind.into(),
            interval_secs.into(),
            uptime_contracts::placement::effective_regions(
                self.regions.as_deref(),
                &regions.default,
            )
            .len(),
        );
        let columns = self.kinds.into_columns(self.kind, keyring)?;
        Ok(MonitorDefinition {
            name: self.name.trim().to_string(),
            kind: self.kind.into(),
            target: self.target.map(|t| t.trim().to_string()),
            interval_secs: interval_secs.into(),
            timeout_secs: checked::<TimeoutSecs>(self.timeout_secs)?.into(),
            keyword: columns.keyword,
            keyword_type: columns.keyword_type,
            expected_status: checked::<ExpectedStatus>(self.expected_status)?.into(),
            confirmation_count: checked::<ConfirmationCount>(self.confirmation_count)?.into(),
            ssl_warn_days: checked::<SslWarnDays>(self.ssl_warn_days)?.into(),
            latency_warn_ms: self
                .latency_warn_ms
                .map(|ms| checked::<LatencyWarnMs>(ms).map(i32::from))
                .transpose()?,
            heartbeat_token,
            active: self.active,
            check_options: uptime_db::monitors::options_column(&columns.check_options),
            http_password_sealed: columns.http_password_sealed,
            heartbeat_schedule: columns.heartbeat_schedule,
            heartbeat_timezone: columns.heartbeat_timezone,
            regions: super::placement::stored(self.regions),
            quorum: self
                .quorum
                .map(|q| {
                    i32::try_from(q)
                        .map_err(|_| ApiError::Internal(format!("quorum {q} passed validation")))
                })
                .transpose()?,
            check_load_millis,
        })
    }
}

/// A validated create request: the monitor to insert, its labels and the
/// contact ids to link (as given: the caller checks them against the
/// owner's contacts).
#[derive(Clone)]
pub struct Creation {
    pub(super) new: NewMonitor,
    pub(super) labels: Labels,
    pub(super) contact_ids: Vec<i64>,
    /// The ref to give it, syntax checked (whether it is free is the
    /// database's to say, in the transaction that inserts).
    pub(super) r#ref: Option<String>,
}

/// What a create request (`POST /api/v1/monitors`, or one item of a bulk
/// create) asks for, or 400 naming every problem. The one validation path
/// of both creates.
pub(super) fn new_monitor(
    org_id: i64,
    mut req: CreateMonitor,
    allow_private_targets: bool,
    regions: &uptime_config::RegionsSettings,
    keyring: Option<&uptime_secrets::Keyring>,
) -> Result<Creation, ApiError> {
    let contact_ids = req.rest.alert_contact_ids.take().unwrap_or_default();
    let r#ref = req.reference.ref_.take();
    let mut draft = Draft::from_create(req);
    let mut problems = Problems::new();
    if let Some(given) = &r#ref {
        crate::refs::check(&mut problems, "ref", given);
    }
    draft.validate(&mut problems, allow_private_targets, regions);
    problems.into_result()?;
    let token = (draft.kind == MonitorType::Heartbeat).then(new_heartbeat_token);
    let labels = std::mem::take(&mut draft.labels);
    let new = NewMonitor {
        org_id,
        definition: draft.into_definition(token, regions, keyring)?,
    };
    Ok(Creation {
        new,
        labels,
        contact_ids,
        r#ref,
    })
}

/// `hb_` and 32 lowercase hex characters (128 bits from the OS's CSPRNG).
pub(super) fn new_heartbeat_token() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{HEARTBEAT_TOKEN_PREFIX}{}", hex::encode(bytes))
}
