//! Rows as Rust structs. A monitor's type and status come out typed, as the
//! enums of `uptime-contracts` (see [`columns`] for how and why); the other
//! enum-like columns are still `String`.

use crate::schema::*;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::prelude::*;
use serde::Deserialize;
use uptime_contracts::{MonitorKind, MonitorStatus};
use uuid::Uuid;

pub mod columns;
pub mod sealed;
use columns::{KindColumn, StatusColumn};
pub use sealed::SealedText;

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = users)]
pub struct User {
    pub id: i64,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = api_keys)]
pub struct ApiKey {
    pub id: i64,
    pub user_id: i64,
    pub name: String,
    pub prefix: String,
    pub key_sha256: String,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
    /// The organisation the key acts on; `user_id` is the member holding it.
    pub org_id: i64,
    /// `read`, `write` or `admin` (`organisations::Scope`), as issued.
    pub scope: String,
    /// The key sees and touches only monitors whose labels hold every pair
    /// of this object (`uptime_labels::Selector`); `None`: every monitor.
    pub label_selector: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = api_keys)]
pub struct NewApiKey<'a> {
    pub user_id: i64,
    pub org_id: i64,
    pub scope: &'a str,
    pub label_selector: Option<serde_json::Value>,
    pub name: &'a str,
    pub prefix: &'a str,
    pub key_sha256: &'a str,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = alert_contacts)]
pub struct AlertContact {
    pub id: i64,
    pub org_id: i64,
    pub kind: String,
    pub name: String,
    pub value: String,
    pub verified: bool,
    pub verification_token_sha256: Option<String>,
    pub signing_secret: Option<String>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    /// The provider's credential, sealed (`uptime-secrets`,
    /// `Purpose::ALERT_CONTACT_SECRET`): write-only, never returned.
    pub secret_sealed: Option<String>,
    /// Provider options that are not credentials (opsgenie `region`, ntfy `server`).
    pub options: serde_json::Value,
    /// The alert event types the contact receives; `None`: every one.
    pub event_kinds: Option<Vec<String>>,
    /// The least severity it receives (0 info, 1 warning, 2 critical).
    pub min_severity: i16,
}

#[derive(Debug, Clone, Insertable)]
#[diesel(table_name = alert_contacts)]
pub struct NewAlertContact {
    pub org_id: i64,
    pub kind: String,
    pub name: String,
    pub value: String,
    pub verified: bool,
    pub verification_token_sha256: Option<String>,
    pub signing_secret: Option<String>,
    pub secret_sealed: Option<String>,
    pub options: serde_json::Value,
    pub event_kinds: Option<Vec<String>>,
    pub min_severity: i16,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = monitors)]
pub struct Monitor {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    #[diesel(deserialize_as = KindColumn)]
    pub kind: MonitorKind,
    pub target: Option<String>,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    pub keyword: Option<String>,
    pub keyword_type: Option<String>,
    pub expected_status: i32,
    pub confirmation_count: i32,
    pub ssl_warn_days: i32,
    pub latency_warn_ms: Option<i32>,
    pub heartbeat_token: Option<String>,
    pub active: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    #[diesel(deserialize_as = StatusColumn)]
    pub status: MonitorStatus,
    pub status_since: Option<DateTime<Utc>>,
    pub consecutive_failures: i32,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub ssl_warned_for: Option<DateTime<Utc>>,
    /// Heartbeat monitors: when the period of the last ping counted in the
    /// daily uptime ends (pings before then count for nothing more).
    pub heartbeat_counted_until: Option<DateTime<Utc>>,
    /// Goes up by one whenever what a check of this monitor does changes;
    /// only results of the current version move its state.
    pub definition_version: i64,
    /// What a check needs besides the target (`CheckOptions` as JSON;
    /// `None`: the kind's defaults). See [`Monitor::options`].
    pub check_options: Option<serde_json::Value>,
    /// The basic-auth password, sealed (`uptime-secrets`): write-only, never
    /// returned by the API, opened only by a checker. The legacy plain-text
    /// column `http_password` is in no model: only the api-gateway's
    /// start-up job reads it, to seal it ([`crate::monitors::sealing`]).
    pub http_password_sealed: Option<SealedText>,
    /// A legacy plain-text password waits in `http_password` to be sealed
    /// (by the api-gateway's start): no check can carry it until then.
    #[diesel(select_expression = monitors::http_password.is_not_null())]
    #[diesel(select_expression_type = diesel::dsl::IsNotNull<monitors::http_password>)]
    pub http_password_unsealed: bool,
    /// Heartbeats: a five-field cron expression (instead of the interval).
    pub heartbeat_schedule: Option<String>,
    /// Heartbeats: the IANA time zone of `heartbeat_schedule` (`None`: UTC).
    pub heartbeat_timezone: Option<String>,
    /// Heartbeats: when the run in progress sent its start ping.
    pub heartbeat_started_at: Option<DateTime<Utc>>,
    /// The regions the monitor is checked from (`None`: the deployment's
    /// default regions).
    pub regions: Option<Vec<String>>,
    /// How many regions must see a failure for a round to fail (`None`: a
    /// majority of the regions).
    pub quorum: Option<i32>,
    /// The monitor's labels, an object of key -> value
    /// (`uptime_labels::Labels`); `{}` when it has none.
    pub labels: serde_json::Value,
    /// Reminders, dependencies and flapping, as the API writes them.
    #[diesel(embed)]
    pub rules: AlertRules,
    /// The recorder's flapping state: the recent changes (only with a threshold).
    pub flap_changes: Option<Vec<DateTime<Utc>>>,
    /// Since when the monitor is flapping.
    pub flapping_since: Option<DateTime<Utc>>,
    /// The maintenance window it is in now, as the maintenance sweep marked it.
    #[diesel(embed)]
    pub maintenance: MaintenanceMarker,
}

/// A monitor's alert rules as the API writes them (`None`: off / default),
/// read with the monitor row ([`Monitor`] and
/// [`crate::monitor_decisions::MonitorForDecisions`]) and written by
/// [`crate::alerting::set_rules`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Queryable, Selectable, AsChangeset)]
#[diesel(table_name = monitors, treat_none_as_null = true)]
pub struct AlertRules {
    /// Repeat the down alert this often while unacknowledged (`None`: no reminders).
    pub reminder_interval_secs: Option<i32>,
    /// At most this many reminders per incident (`None`: no limit).
    pub reminder_max: Option<i32>,
    /// Monitors of the organisation this one depends on (`{}`: none).
    pub depends_on: Vec<i64>,
    /// Flapping: more changes than this within the window (`None`: off).
    pub flap_threshold: Option<i32>,
    pub flap_window_secs: Option<i32>,
    pub flap_stable_secs: Option<i32>,
}

impl AlertRules {
    /// The rules stored on `m`.
    pub fn of(m: &Monitor) -> Self {
        m.rules.clone()
    }
}

/// The marker the recorder's maintenance sweep keeps on a monitor while a
/// maintenance window covers it (migration 000032): read with the monitor
/// row, so being in maintenance costs no query of its own per check.
#[derive(Debug, Clone, Default, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = monitors)]
pub struct MaintenanceMarker {
    /// `silence` or `pause`; `None`: in no window.
    #[diesel(column_name = maintenance_effect)]
    pub effect: Option<String>,
    /// The start of the open occurrence.
    #[diesel(column_name = maintenance_since)]
    pub since: Option<DateTime<Utc>>,
    /// Its planned end (the sweep clears the marker when it closes it).
    #[diesel(column_name = maintenance_until)]
    pub until: Option<DateTime<Utc>>,
}

impl MaintenanceMarker {
    /// Whether something that happened `at` happened inside the window.
    /// The window lasts for the pipeline until the sweep closes it (within
    /// one sweep interval of its planned end), so alerts held in it and the
    /// release at its end never overlap.
    pub fn covers(&self, at: DateTime<Utc>) -> bool {
        self.effect.is_some() && self.since.is_some_and(|since| since <= at)
    }
}

impl Monitor {
    /// The check options, typed (the kind's defaults when the column is NULL).
    pub fn options(&self) -> Result<uptime_contracts::CheckOptions, serde_json::Error> {
        options_of(self.check_options.as_ref())
    }
}

/// A `check_options` column value, typed: NULL is the kind's defaults.
/// Beside the row it reads, so that the rows need nothing of the queries.
pub fn options_of(
    column: Option<&serde_json::Value>,
) -> Result<uptime_contracts::CheckOptions, serde_json::Error> {
    match column {
        None => Ok(Default::default()),
        Some(value) => uptime_contracts::CheckOptions::deserialize(value),
    }
}

/// A monitor's whole definition: what the API creates a monitor with and
/// what a PATCH writes after merging. As a changeset `None` writes NULL (the
/// merged definition is complete, so an absent optional value means
/// "cleared"); as an insert it leaves the column to its default, which for
/// these nullable columns is NULL too.
///
/// Owned values only: the typed `kind` goes through its column newtype, and
/// diesel converts such fields by value.
#[derive(Debug, Clone, PartialEq, Eq, Insertable, AsChangeset)]
#[diesel(table_name = monitors, treat_none_as_null = true)]
pub struct MonitorDefinition {
    pub name: String,
    #[diesel(serialize_as = KindColumn)]
    pub kind: MonitorKind,
    pub target: Option<String>,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    pub keyword: Option<String>,
    pub keyword_type: Option<String>,
    pub expected_status: i32,
    pub confirmation_count: i32,
    pub ssl_warn_days: i32,
    pub latency_warn_ms: Option<i32>,
    pub heartbeat_token: Option<String>,
    pub active: bool,
    /// `CheckOptions` as JSON, without the basic-auth password; `None`:
    /// the kind's defaults.
    pub check_options: Option<serde_json::Value>,
    /// The basic-auth password, sealed; `None`: no password.
    pub http_password_sealed: Option<SealedText>,
    pub heartbeat_schedule: Option<String>,
    pub heartbeat_timezone: Option<String>,
    pub regions: Option<Vec<String>>,
    pub quorum: Option<i32>,
    /// What running the monitor costs, in thousandths of a check per minute
    /// ([`crate::quotas::check_load_millis`]); the owner's load budget sums
    /// it over their active monitors (migration 000014).
    pub check_load_millis: i32,
}

/// A new monitor: its owning organisation and its definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewMonitor {
    pub org_id: i64,
    pub definition: MonitorDefinition,
}

// By hand rather than derived with `#[diesel(embed)]`: the derive would also
// implement `Insertable` for `&NewMonitor`, which needs a borrowed insert of
// the definition that its typed `kind` cannot give (see above).
impl Insertable<monitors::table> for NewMonitor {
    type Values = <(diesel::dsl::Eq<monitors::org_id, i64>, MonitorDefinition) as Insertable<
        monitors::table,
    >>::Values;

    fn values(self) -> Self::Values {
        (monitors::org_id.eq(self.org_id), self.definition).values()
    }
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = check_results)]
pub struct CheckResult {
    pub id: i64,
    pub check_id: Uuid,
    pub monitor_id: i64,
    pub trigger: String,
    pub status: String,
    pub checked_at: DateTime<Utc>,
    pub due_at: Option<DateTime<Utc>>,
    pub latency_ms: Option<i32>,
    pub http_status: Option<i32>,
    pub error: Option<String>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub reporter: String,
    pub recorded_at: DateTime<Utc>,
    /// The monitor's `definition_version` the check was made for; `None` for
    /// results that came as version-1 messages.
    pub definition_version: Option<i64>,
    /// Where the check ran (`None`: recorded before regions existed).
    pub region: Option<String>,
    /// The round the check was part of.
    pub round_id: Option<Uuid>,
    /// Checked inside a maintenance window: left out of the daily uptime.
    pub in_maintenance: bool,
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = daily_uptime)]
pub struct DailyUptime {
    pub monitor_id: i64,
    pub day: NaiveDate,
    pub total_checks: i32,
    pub up_checks: i32,
}
