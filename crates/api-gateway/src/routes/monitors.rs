//! `/api/v1/monitors`: create, list, read, update (including pause and
//! resume through `active`) and delete the caller's monitors.
//!
//! Decisions the contract leaves open, made here:
//! - `target` of a heartbeat monitor is optional and only a label (1 to 2048
//!   characters, any text): nothing ever connects to it. http and keyword
//!   targets must be absolute `http://`/`https://` URLs without credentials
//!   (a password in the URL would be shown back and sent along in alerts);
//!   literal loopback/private/link-local/metadata hosts are refused unless the
//!   deployment allows private targets.
//! - `keyword` and `keyword_type` belong to keyword monitors only: a value on
//!   another type is a 400; on other types both read back as `null`.
//! - When `timeout_secs` is not given and the default (30) exceeds
//!   `interval_secs`, the timeout becomes the interval. Likewise a PATCH that
//!   lowers `interval_secs` below the stored timeout without giving
//!   `timeout_secs` lowers the timeout with it. An explicit timeout above the
//!   interval is a 400.
//! - A PATCH is merged into the stored monitor and the result validated as a
//!   whole: switching to `keyword` needs a keyword; switching away from
//!   `keyword` drops the keyword; switching to `heartbeat` generates a token,
//!   away from it removes the token; `null` clears `target`, `keyword`,
//!   `keyword_type` (back to `contains` on keyword monitors) and
//!   `latency_warn_ms`, and is a 400 on every other field.
//! - Runtime state (status, failure streak, certificate expiry, last
//!   heartbeat) is kept across edits, pausing and resuming, except when what
//!   is watched changes (the type, or the target of an http/keyword monitor):
//!   then the monitor starts again as `pending`.

use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::{double_option, not_null, paginate, PageQuery, Problems, UrlRules};
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use uptime_contracts::{MonitorChange, MonitorChangedV1};
use uptime_db::models::{Monitor, NewMonitor};
use uptime_db::monitors::MonitorDefinition;
use utoipa::ToSchema;

pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(web::resource("/monitors").get(list).post(create))
        .service(
            web::resource("/monitors/{id}")
                .get(get)
                .patch(update)
                .delete(delete),
        );
}

pub const DEFAULT_INTERVAL_SECS: i64 = 300;
pub const DEFAULT_TIMEOUT_SECS: i64 = 30;
pub const DEFAULT_EXPECTED_STATUS: i64 = 200;
pub const DEFAULT_CONFIRMATION_COUNT: i64 = 1;
pub const DEFAULT_SSL_WARN_DAYS: i64 = 30;
const MAX_NAME_CHARS: usize = 200;
const MAX_KEYWORD_BYTES: usize = 1024;
const HEARTBEAT_TOKEN_PREFIX: &str = "hb_";

/// The kind of check.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorType {
    /// Passes when the target answers with `expected_status` within `timeout_secs`.
    Http,
    /// An http check that also needs `keyword` present (`contains`) or absent (`not_contains`).
    Keyword,
    /// Passes when pinged at `/api/v1/heartbeat/{heartbeat_token}` at least every
    /// `interval_secs` (plus `timeout_secs` of grace).
    Heartbeat,
}

impl MonitorType {
    fn as_str(self) -> &'static str {
        uptime_contracts::MonitorKind::from(self).as_str()
    }

    fn from_db(s: &str) -> Result<Self, ApiError> {
        use uptime_contracts::MonitorKind;
        match MonitorKind::parse(s) {
            Some(MonitorKind::Http) => Ok(Self::Http),
            Some(MonitorKind::Keyword) => Ok(Self::Keyword),
            Some(MonitorKind::Heartbeat) => Ok(Self::Heartbeat),
            None => Err(ApiError::Internal(format!(
                "monitor type {s:?} in the database"
            ))),
        }
    }
}

impl From<MonitorType> for uptime_contracts::MonitorKind {
    fn from(t: MonitorType) -> Self {
        match t {
            MonitorType::Http => Self::Http,
            MonitorType::Keyword => Self::Keyword,
            MonitorType::Heartbeat => Self::Heartbeat,
        }
    }
}

/// Whether the keyword must appear in the response body or must not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum KeywordType {
    Contains,
    NotContains,
}

impl KeywordType {
    fn as_str(self) -> &'static str {
        match self {
            KeywordType::Contains => uptime_contracts::KeywordType::Contains.as_str(),
            KeywordType::NotContains => uptime_contracts::KeywordType::NotContains.as_str(),
        }
    }

    fn from_db(s: &str) -> Result<Self, ApiError> {
        match uptime_contracts::KeywordType::parse(s) {
            Some(uptime_contracts::KeywordType::Contains) => Ok(Self::Contains),
            Some(uptime_contracts::KeywordType::NotContains) => Ok(Self::NotContains),
            None => Err(ApiError::Internal(format!(
                "keyword type {s:?} in the database"
            ))),
        }
    }
}

/// The monitor's current status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum MonitorStatus {
    /// Not checked yet (or what it watches changed since).
    Pending,
    Up,
    /// Passing, but slower than `latency_warn_ms`.
    Degraded,
    /// `confirmation_count` consecutive checks failed.
    Down,
}

impl MonitorStatus {
    fn from_db(s: &str) -> Result<Self, ApiError> {
        use uptime_contracts::MonitorStatus as S;
        match S::parse(s) {
            Some(S::Pending) => Ok(Self::Pending),
            Some(S::Up) => Ok(Self::Up),
            Some(S::Degraded) => Ok(Self::Degraded),
            Some(S::Down) => Ok(Self::Down),
            None => Err(ApiError::Internal(format!(
                "monitor status {s:?} in the database"
            ))),
        }
    }
}

/// A new monitor. Only `name` and `type` are required (and `target` for http
/// and keyword monitors, `keyword` for keyword monitors); the rest have defaults.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateMonitor {
    /// 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    #[serde(rename = "type")]
    pub kind: MonitorType,
    /// http/keyword: an absolute `http://` or `https://` URL without
    /// credentials (required). heartbeat: an optional label, never contacted.
    /// At most 2048 characters.
    #[schema(min_length = 1, max_length = 2048)]
    pub target: Option<String>,
    /// Seconds between checks, 10 to 86400 (default 300).
    #[schema(minimum = 10, maximum = 86400)]
    pub interval_secs: Option<i64>,
    /// Seconds before a check counts as failed, 1 to 120 and at most
    /// `interval_secs` (default 30, or `interval_secs` if that is smaller).
    /// For heartbeat monitors: the grace period after a missed ping.
    #[schema(minimum = 1, maximum = 120)]
    pub timeout_secs: Option<i64>,
    /// Keyword monitors only (required there): 1 to 1024 bytes of UTF-8.
    #[schema(min_length = 1, max_length = 1024)]
    pub keyword: Option<String>,
    /// Keyword monitors only: `contains` (default) or `not_contains`.
    pub keyword_type: Option<KeywordType>,
    /// 100 to 599 (default 200).
    #[schema(minimum = 100, maximum = 599)]
    pub expected_status: Option<i64>,
    /// Consecutive failed checks before the monitor is `down`, 1 to 10 (default 1).
    #[schema(minimum = 1, maximum = 10)]
    pub confirmation_count: Option<i64>,
    /// Warn when the certificate expires within this many days, 0 to 365 (default 30).
    #[schema(minimum = 0, maximum = 365)]
    pub ssl_warn_days: Option<i64>,
    /// A passing check slower than this many milliseconds makes the monitor
    /// `degraded`, 1 to 600000 (default: none).
    #[schema(minimum = 1, maximum = 600000)]
    pub latency_warn_ms: Option<i64>,
    /// The caller's alert contacts to notify on status changes.
    pub alert_contact_ids: Option<Vec<i64>>,
    /// `false` creates the monitor paused (default `true`).
    pub active: Option<bool>,
}

/// A partial update: fields left out keep their value. See the field
/// descriptions of the create request for the bounds.
#[derive(Debug, Default, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateMonitor {
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = String, required = false, min_length = 1, max_length = 200)]
    pub name: Option<Option<String>>,
    #[serde(default, rename = "type", deserialize_with = "double_option")]
    #[schema(value_type = MonitorType, required = false)]
    pub kind: Option<Option<MonitorType>>,
    /// `null` clears it (heartbeat monitors only).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 2048)]
    pub target: Option<Option<String>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 10, maximum = 86400)]
    pub interval_secs: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 1, maximum = 120)]
    pub timeout_secs: Option<Option<i64>>,
    /// `null` clears it (not allowed on keyword monitors).
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<String>, nullable, min_length = 1, max_length = 1024)]
    pub keyword: Option<Option<String>>,
    /// `null` resets it to `contains` on keyword monitors.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<KeywordType>, nullable)]
    pub keyword_type: Option<Option<KeywordType>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 100, maximum = 599)]
    pub expected_status: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 1, maximum = 10)]
    pub confirmation_count: Option<Option<i64>>,
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = i64, required = false, minimum = 0, maximum = 365)]
    pub ssl_warn_days: Option<Option<i64>>,
    /// `null` removes the latency threshold.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Option<i64>, nullable, minimum = 1, maximum = 600000)]
    pub latency_warn_ms: Option<Option<i64>>,
    /// Replaces the linked contacts; `[]` unlinks all.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = Vec<i64>, required = false)]
    pub alert_contact_ids: Option<Option<Vec<i64>>>,
    /// `false` pauses checks and alerts, `true` resumes them; status is kept.
    #[serde(default, deserialize_with = "double_option")]
    #[schema(value_type = bool, required = false)]
    pub active: Option<Option<bool>>,
}

/// A monitor, with its definition and its runtime state.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonitorResponse {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: MonitorType,
    pub target: Option<String>,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    /// Keyword monitors only.
    pub keyword: Option<String>,
    /// Keyword monitors only.
    pub keyword_type: Option<KeywordType>,
    pub expected_status: i32,
    pub confirmation_count: i32,
    /// Heartbeat monitors only: `hb_` and 32 lowercase hex characters.
    pub heartbeat_token: Option<String>,
    pub ssl_warn_days: i32,
    pub latency_warn_ms: Option<i32>,
    /// Failed checks in a row so far.
    pub consecutive_failures: i32,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// `notAfter` of the target's certificate, for https targets once checked.
    pub ssl_expires_at: Option<DateTime<Utc>>,
    /// `false` while paused.
    pub active: bool,
    pub status: MonitorStatus,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// Goes up by one whenever a change alters what a check does (type,
    /// target, timeout, expected status, keyword, a heartbeat's period).
    /// Each result records the version it was made for; only results of the
    /// current version move `status`.
    #[schema(minimum = 1)]
    pub definition_version: i64,
    /// Ascending.
    pub alert_contact_ids: Vec<i64>,
}

impl MonitorResponse {
    fn from_row(m: Monitor, alert_contact_ids: Vec<i64>) -> Result<Self, ApiError> {
        Ok(Self {
            kind: MonitorType::from_db(&m.kind)?,
            keyword_type: m
                .keyword_type
                .as_deref()
                .map(KeywordType::from_db)
                .transpose()?,
            status: MonitorStatus::from_db(&m.status)?,
            id: m.id,
            user_id: m.user_id,
            name: m.name,
            target: m.target,
            interval_secs: m.interval_secs,
            timeout_secs: m.timeout_secs,
            keyword: m.keyword,
            expected_status: m.expected_status,
            confirmation_count: m.confirmation_count,
            heartbeat_token: m.heartbeat_token,
            ssl_warn_days: m.ssl_warn_days,
            latency_warn_ms: m.latency_warn_ms,
            consecutive_failures: m.consecutive_failures,
            last_heartbeat_at: m.last_heartbeat_at,
            ssl_expires_at: m.ssl_expires_at,
            active: m.active,
            last_checked_at: m.last_checked_at,
            created_at: m.created_at,
            updated_at: m.updated_at,
            definition_version: m.definition_version,
            alert_contact_ids,
        })
    }
}

/// One page of monitors.
#[derive(Debug, Serialize, ToSchema)]
pub struct MonitorList {
    pub monitors: Vec<MonitorResponse>,
    /// Pass as `?cursor=` for the next page; `null` on the last page.
    pub next_cursor: Option<String>,
}

/// A monitor definition in API terms, before validation: what a create
/// request asks for with defaults applied, or a stored monitor with a PATCH
/// merged in. Numbers stay wide until validated, so out-of-range input gets a
/// range message rather than a parse error.
#[derive(Debug, Clone)]
struct Draft {
    name: String,
    kind: MonitorType,
    target: Option<String>,
    interval_secs: i64,
    timeout_secs: i64,
    keyword: Option<String>,
    keyword_type: Option<KeywordType>,
    expected_status: i64,
    confirmation_count: i64,
    ssl_warn_days: i64,
    latency_warn_ms: Option<i64>,
    active: bool,
}

/// The default timeout for an interval: 30 s, or the interval when shorter.
fn default_timeout(interval_secs: i64) -> i64 {
    DEFAULT_TIMEOUT_SECS.min(interval_secs).max(1)
}

impl Draft {
    fn from_create(req: CreateMonitor) -> Self {
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
        }
    }

    /// The stored monitor with `patch` applied. `null` on a field that cannot
    /// be cleared is recorded in `problems`.
    fn merge(
        stored: &Monitor,
        patch: UpdateMonitor,
        problems: &mut Problems,
    ) -> Result<Self, ApiError> {
        let stored_kind = MonitorType::from_db(&stored.kind)?;
        let kind = not_null(problems, "type", patch.kind).unwrap_or(stored_kind);

        let interval_secs = not_null(problems, "interval_secs", patch.interval_secs)
            .unwrap_or(i64::from(stored.interval_secs));
        let timeout_secs = not_null(problems, "timeout_secs", patch.timeout_secs)
            // Not given: keep the stored timeout, lowered to a new, shorter interval.
            .unwrap_or_else(|| i64::from(stored.timeout_secs).min(interval_secs).max(1));

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
            target: patch.target.unwrap_or_else(|| stored.target.clone()),
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
        })
    }

    /// Checks every rule, adding each broken one to `problems`.
    fn validate(&self, problems: &mut Problems, allow_private_targets: bool) {
        problems.check_len("name", &self.name, MAX_NAME_CHARS);
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
        }
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
        if (1..=120).contains(&self.timeout_secs)
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

    /// The definition as stored. Call after [`Draft::validate`] found nothing:
    /// every number then fits an `i32`.
    fn into_definition(
        self,
        heartbeat_token: Option<String>,
    ) -> Result<MonitorDefinition, ApiError> {
        let narrow = |field: &str, v: i64| {
            i32::try_from(v)
                .map_err(|_| ApiError::Internal(format!("{field} {v} passed validation")))
        };
        Ok(MonitorDefinition {
            name: self.name.trim().to_string(),
            kind: self.kind.as_str().to_string(),
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
        })
    }
}

/// `hb_` and 32 lowercase hex characters (128 bits from the OS's CSPRNG).
fn new_heartbeat_token() -> String {
    let mut bytes = [0u8; 16];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{HEARTBEAT_TOKEN_PREFIX}{}", hex::encode(bytes))
}

/// The ids sorted and deduplicated, or 400 naming those that are not the
/// user's contacts. Locks the contacts found until the transaction ends.
async fn checked_contact_ids(
    conn: &mut AsyncPgConnection,
    user_id: i64,
    mut ids: Vec<i64>,
) -> Result<Vec<i64>, ApiError> {
    ids.sort_unstable();
    ids.dedup();
    let owned = uptime_db::contacts::owned_ids_locked(conn, user_id, &ids).await?;
    let unknown: Vec<String> = ids
        .iter()
        .filter(|id| !owned.contains(id))
        .map(|id| id.to_string())
        .collect();
    if unknown.is_empty() {
        Ok(ids)
    } else {
        Err(ApiError::invalid_field(
            "alert_contact_ids",
            format!("no such alert contact: {}", unknown.join(", ")),
        ))
    }
}

/// Tells the scheduler (after the change committed). A failure is only
/// logged: the change is durable, and the scheduler resyncs from the database
/// periodically.
async fn announce(state: &AppState, monitor_id: i64, change: MonitorChange) {
    let msg = MonitorChangedV1 {
        monitor_id,
        change,
        changed_at: Utc::now(),
    };
    let msg_id = format!("monitor-{monitor_id}-{}", uuid::Uuid::new_v4());
    if let Err(error) = state.publish(&msg_id, &msg).await {
        tracing::warn!(
            monitor_id,
            ?change,
            ?error,
            "monitor change not published; the scheduler will pick it up on its next resync"
        );
    }
}

/// Create a monitor.
#[utoipa::path(post, path = "/api/v1/monitors", tag = "monitors", request_body = CreateMonitor,
    security(("bearer" = [])),
    responses((status = 201, body = MonitorResponse), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 403, body = ErrorBody, description = "quota exceeded: the user owns as many as their quota allows"),
        (status = 413, body = ErrorBody)))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateMonitor>,
) -> Result<HttpResponse, ApiError> {
    let mut req = body.into_inner();
    let contact_ids = req.alert_contact_ids.take().unwrap_or_default();
    let draft = Draft::from_create(req);
    let mut problems = Problems::new();
    draft.validate(&mut problems, state.settings.safety.allow_private_targets);
    problems.into_result()?;
    let token = (draft.kind == MonitorType::Heartbeat).then(new_heartbeat_token);
    let def = draft.into_definition(token)?;
    let new = NewMonitor {
        user_id: user.user_id,
        name: def.name,
        kind: def.kind,
        target: def.target,
        interval_secs: def.interval_secs,
        timeout_secs: def.timeout_secs,
        keyword: def.keyword,
        keyword_type: def.keyword_type,
        expected_status: def.expected_status,
        confirmation_count: def.confirmation_count,
        ssl_warn_days: def.ssl_warn_days,
        latency_warn_ms: def.latency_warn_ms,
        heartbeat_token: def.heartbeat_token,
        active: def.active,
    };

    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let (row, contact_ids) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                crate::quotas::ensure_room(
                    c,
                    &quotas,
                    user.user_id,
                    uptime_db::quotas::Owned::Monitors,
                )
                .await?;
                let contact_ids = checked_contact_ids(c, user.user_id, contact_ids).await?;
                let row = uptime_db::monitors::create(c, &new).await?;
                uptime_db::monitors::replace_contacts(c, row.id, &contact_ids).await?;
                Ok((row, contact_ids))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    announce(&state, row.id, MonitorChange::Upserted).await;
    Ok(HttpResponse::Created().json(MonitorResponse::from_row(row, contact_ids)?))
}

/// List the caller's monitors in id order, a page at a time.
#[utoipa::path(get, path = "/api/v1/monitors", tag = "monitors", security(("bearer" = [])),
    params(PageQuery),
    responses((status = 200, body = MonitorList), (status = 400, body = ErrorBody), (status = 401, body = ErrorBody)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.validate()?;
    let mut conn = state.conn().await?;
    let rows =
        uptime_db::monitors::list_page(&mut conn, user.user_id, page.after_id, page.limit + 1)
            .await?;
    let (rows, next_cursor) = paginate(rows, page.limit, |m| m.id);
    let ids: Vec<i64> = rows.iter().map(|m| m.id).collect();
    let mut contacts = uptime_db::monitors::contact_ids_of(&mut conn, &ids).await?;
    let monitors = rows
        .into_iter()
        .map(|m| {
            let contact_ids = contacts.remove(&m.id).unwrap_or_default();
            MonitorResponse::from_row(m, contact_ids)
        })
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(MonitorList {
        monitors,
        next_cursor,
    }))
}

/// Read one of the caller's monitors.
#[utoipa::path(get, path = "/api/v1/monitors/{id}", tag = "monitors", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 200, body = MonitorResponse), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    let row = uptime_db::monitors::get(&mut conn, user.user_id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    let contact_ids = uptime_db::monitors::contact_ids_of(&mut conn, &[id])
        .await?
        .remove(&id)
        .unwrap_or_default();
    Ok(HttpResponse::Ok().json(MonitorResponse::from_row(row, contact_ids)?))
}

/// Change some fields of one of the caller's monitors; `active` pauses and resumes it.
#[utoipa::path(patch, path = "/api/v1/monitors/{id}", tag = "monitors", request_body = UpdateMonitor,
    security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 200, body = MonitorResponse), (status = 400, body = ErrorBody),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody), (status = 413, body = ErrorBody)))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<UpdateMonitor>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut patch = body.into_inner();
    let allow_private = state.settings.safety.allow_private_targets;
    let mut conn = state.conn().await?;
    let (row, contact_ids) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored = uptime_db::monitors::get_for_update(c, user.user_id, id)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let mut problems = Problems::new();
                let new_contacts = not_null(
                    &mut problems,
                    "alert_contact_ids",
                    patch.alert_contact_ids.take(),
                );
                let draft = Draft::merge(&stored, patch, &mut problems)?;
                draft.validate(&mut problems, allow_private);
                problems.into_result()?;

                let watched_changed = draft.kind.as_str() != stored.kind
                    || (draft.kind != MonitorType::Heartbeat && draft.target != stored.target);
                let token = match (draft.kind, stored.heartbeat_token.clone()) {
                    (MonitorType::Heartbeat, Some(kept)) => Some(kept),
                    (MonitorType::Heartbeat, None) => Some(new_heartbeat_token()),
                    _ => None,
                };
                let def = draft.into_definition(token)?;
                let change = uptime_db::monitors::DefinitionChange {
                    check_changed: def.changes_checks_of(&stored),
                    reset_runtime_at: watched_changed.then(Utc::now),
                };
                let row = uptime_db::monitors::update_definition(c, id, &def, change).await?;
                if let Some(ids) = new_contacts {
                    let ids = checked_contact_ids(c, user.user_id, ids).await?;
                    uptime_db::monitors::replace_contacts(c, id, &ids).await?;
                }
                let contact_ids = uptime_db::monitors::contact_ids_of(c, &[id])
                    .await?
                    .remove(&id)
                    .unwrap_or_default();
                Ok((row, contact_ids))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    announce(&state, id, MonitorChange::Upserted).await;
    Ok(HttpResponse::Ok().json(MonitorResponse::from_row(row, contact_ids)?))
}

/// Delete one of the caller's monitors with its results.
#[utoipa::path(delete, path = "/api/v1/monitors/{id}", tag = "monitors", security(("bearer" = [])),
    params(("id" = i64, Path, description = "Monitor id")),
    responses((status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    // One statement: the links, results and rollups go with it (ON DELETE CASCADE).
    let deleted = uptime_db::monitors::delete(&mut conn, user.user_id, id).await?;
    drop(conn);
    if !deleted {
        return Err(ApiError::NotFound);
    }
    announce(&state, id, MonitorChange::Deleted).await;
    Ok(HttpResponse::NoContent().finish())
}
