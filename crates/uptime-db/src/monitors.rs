//! Monitors and their alert-contact links, as the API reads and writes them.
//! Every query that takes an `org_id` is scoped to that organisation: another
//! organisation's monitor is indistinguishable from one that does not exist.
//!
//! Writes that touch a monitor and its links belong in one transaction; the
//! functions here take a connection so the caller can run them inside one.

use crate::models::columns::StatusColumn;
use crate::models::{Monitor, NewMonitor};
use crate::schema::{monitor_alert_contacts, monitors};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::IntoSql;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::collections::HashMap;
use uptime_contracts::{MonitorKind, MonitorStatus};

pub use crate::models::MonitorDefinition;

mod spec;
pub use spec::{check_spec, check_spec_sealed, CheckFields, SpecError};

mod round;
pub use round::{round_checks, sealed_round_checks, RoundOf};

pub mod sealing;

mod bulk;
pub use bulk::{create_many, create_many_labelled};

/// What the `check_options` column keeps of `options`: `None` when they are
/// all defaults, and never the basic-auth password (which has its column).
pub fn options_column(options: &uptime_contracts::CheckOptions) -> Option<serde_json::Value> {
    let stored = options.clone().without_password();
    (!stored.is_empty()).then(|| serde_json::to_value(&stored).expect("plain data serialises"))
}

pub async fn create(conn: &mut AsyncPgConnection, new: NewMonitor) -> DbResult<Monitor> {
    create_labelled(conn, new, None).await
}

/// [`create`] with `labels` (a JSON object; `None`: none, the column's
/// default `{}`).
pub async fn create_labelled(
    conn: &mut AsyncPgConnection,
    new: NewMonitor,
    labels: Option<serde_json::Value>,
) -> DbResult<Monitor> {
    let labelled = labels.is_some();
    let labels = labels.unwrap_or_else(no_labels);
    let mut row: Monitor = diesel::insert_into(monitors::table)
        .values((monitors::labels.eq(labels), new))
        .returning(Monitor::as_returning())
        .get_result(conn)
        .await?;
    // A window naming it by id cannot exist yet (the id is new): only a
    // label selector can already cover it.
    if labelled {
        crate::maintenance::markers::mark_joined_rows(conn, std::slice::from_mut(&mut row)).await?;
    }
    Ok(row)
}

/// The stored form of no labels.
pub fn no_labels() -> serde_json::Value {
    crate::reach::no_labels()
}

pub use crate::reach::Reach;

/// `monitors` the caller reaches whose labels hold `filter` (a JSON
/// object; `None`, or `{}`, holds for every monitor).
fn within<'a>(
    reach: Reach<'a>,
    filter: Option<&'a serde_json::Value>,
) -> crate::reach::BoxedMonitors<'a> {
    let mut query = reach.monitors();
    if let Some(test) = filter.filter(|t| t.as_object().is_some_and(|o| !o.is_empty())) {
        // `labels <> '{}'`: the partial GIN index's predicate (migration
        // 000021), so the planner may use it.
        query = query
            .filter(monitors::labels.contains(test))
            .filter(monitors::labels.ne(no_labels()));
    }
    query
}

/// The user's monitor with this id.
pub async fn get(conn: &mut AsyncPgConnection, org_id: i64, id: i64) -> DbResult<Option<Monitor>> {
    get_within(conn, Reach::org(org_id), id).await
}

/// The monitor with this id, if the caller reaches it.
pub async fn get_within(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    id: i64,
) -> DbResult<Option<Monitor>> {
    Ok(within(reach, None)
        .filter(monitors::id.eq(id))
        .select(Monitor::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Like [`get`], but locks the row until the transaction ends, so two PATCHes
/// of one monitor merge one after the other instead of overwriting each other.
pub async fn get_for_update(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
) -> DbResult<Option<Monitor>> {
    get_for_update_within(conn, Reach::org(org_id), id).await
}

/// [`get_within`], locking the row until the transaction ends.
pub async fn get_for_update_within(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    id: i64,
) -> DbResult<Option<Monitor>> {
    // A boxed query cannot lock: the row is picked by a subquery instead.
    let reached = within(reach, None)
        .filter(monitors::id.eq(id))
        .select(monitors::id);
    Ok(monitors::table
        .filter(monitors::id.eq_any(reached))
        .select(Monitor::as_select())
        .for_update()
        .first(conn)
        .await
        .optional()?)
}

/// One page of the organisation's monitors in id order: those with an id above
/// `after_id` (all when `None`), at most `limit`.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<Monitor>> {
    list_page_within(conn, Reach::org(org_id), None, after_id, limit).await
}

/// [`list_page`] of the monitors the caller reaches whose labels hold every
/// pair of `labels` (a JSON object; `None`: all).
pub async fn list_page_within(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    labels: Option<&serde_json::Value>,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<Monitor>> {
    let filter = ListFilter {
        labels,
        ..ListFilter::default()
    };
    list_page_filtered(conn, reach, &filter, after_id, limit).await
}

/// What a list of monitors keeps (every given test must hold).
#[derive(Debug, Clone, Copy, Default)]
pub struct ListFilter<'a> {
    /// Labels the monitor's must contain.
    pub labels: Option<&'a serde_json::Value>,
    /// The monitor's type (`http`, ...).
    pub kind: Option<&'a str>,
    /// Its current status (`up`, ...).
    pub status: Option<&'a str>,
    pub active: Option<bool>,
    /// A substring of its name, compared without case.
    pub name_contains: Option<&'a str>,
}

/// [`list_page_within`] with every test of `filter`. The organisation's
/// index bounds the scan; the name test is a `LIKE` without case in any
/// script ([`crate::contains_ignoring_case`]) with the pattern's own `%`,
/// `_` and `\` taken literally.
pub async fn list_page_filtered(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    filter: &ListFilter<'_>,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<Monitor>> {
    let mut query = within(reach, filter.labels);
    if let Some(kind) = filter.kind {
        query = query.filter(monitors::kind.eq(kind));
    }
    if let Some(status) = filter.status {
        query = query.filter(monitors::status.eq(status));
    }
    if let Some(active) = filter.active {
        query = query.filter(monitors::active.eq(active));
    }
    if let Some(part) = filter.name_contains {
        query = query.filter(crate::contains_ignoring_case("monitors.name", part));
    }
    Ok(query
        .filter(monitors::id.gt(after_id.unwrap_or(0)))
        .order(monitors::id.asc())
        .limit(limit)
        .select(Monitor::as_select())
        .load(conn)
        .await?)
}

/// The alert contacts linked to each of `monitor_ids`, ids ascending. Monitors
/// without contacts are absent from the map.
pub async fn contact_ids_of(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
) -> DbResult<HashMap<i64, Vec<i64>>> {
    if monitor_ids.is_empty() {
        return Ok(HashMap::new());
    }
    let links: Vec<(i64, i64)> = monitor_alert_contacts::table
        .filter(monitor_alert_contacts::monitor_id.eq_any(monitor_ids))
        .order((
            monitor_alert_contacts::monitor_id.asc(),
            monitor_alert_contacts::contact_id.asc(),
        ))
        .select((
            monitor_alert_contacts::monitor_id,
            monitor_alert_contacts::contact_id,
        ))
        .load(conn)
        .await?;
    let mut by_monitor: HashMap<i64, Vec<i64>> = HashMap::new();
    for (monitor_id, contact_id) in links {
        by_monitor.entry(monitor_id).or_default().push(contact_id);
    }
    Ok(by_monitor)
}

/// Makes `contact_ids` exactly the contacts linked to the monitor. The caller
/// has checked that they are the monitor owner's contacts.
pub async fn replace_contacts(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    contact_ids: &[i64],
) -> DbResult<()> {
    diesel::delete(monitor_alert_contacts::table)
        .filter(monitor_alert_contacts::monitor_id.eq(monitor_id))
        .execute(conn)
        .await?;
    if contact_ids.is_empty() {
        return Ok(());
    }
    let rows: Vec<_> = contact_ids
        .iter()
        .map(|&contact_id| {
            (
                monitor_alert_contacts::monitor_id.eq(monitor_id),
                monitor_alert_contacts::contact_id.eq(contact_id),
            )
        })
        .collect();
    diesel::insert_into(monitor_alert_contacts::table)
        .values(rows)
        .on_conflict_do_nothing()
        .execute(conn)
        .await?;
    Ok(())
}

impl MonitorDefinition {
    /// Whether checks made for `stored` would check something else under
    /// this definition: another type, target, timeout (a heartbeat's grace),
    /// expected status, keyword, check options (request, assertions, query,
    /// pinned certificate) or password, or another period or schedule for a
    /// heartbeat (whose missed periods are its failed checks). Names, thresholds, contacts and
    /// pausing change nothing a check observed.
    pub fn changes_checks_of(&self, stored: &Monitor) -> bool {
        self.kind != stored.kind
            || self.target != stored.target
            || self.timeout_secs != stored.timeout_secs
            || self.expected_status != stored.expected_status
            || self.keyword != stored.keyword
            || self.keyword_type != stored.keyword_type
            || self.check_options != stored.check_options
            || self.http_password_sealed != stored.http_password_sealed
            || self.regions != stored.regions
            || self.quorum != stored.quorum
            || (self.kind == MonitorKind::Heartbeat
                && (self.interval_secs != stored.interval_secs
                    || self.heartbeat_schedule != stored.heartbeat_schedule
                    || self.heartbeat_timezone != stored.heartbeat_timezone))
    }
}

/// The runtime state a monitor starts with again when what it watches changes
/// (its type or target): the old status, failure streak and certificate
/// describe something else. `status_since` is set to the reset time so a
/// heartbeat monitor's grace period counts from then.
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = monitors, treat_none_as_null = true)]
struct RuntimeReset {
    #[diesel(serialize_as = StatusColumn)]
    status: MonitorStatus,
    status_since: Option<DateTime<Utc>>,
    consecutive_failures: i32,
    last_heartbeat_at: Option<DateTime<Utc>>,
    ssl_expires_at: Option<DateTime<Utc>>,
    ssl_warned_for: Option<DateTime<Utc>>,
    heartbeat_counted_until: Option<DateTime<Utc>>,
    heartbeat_started_at: Option<DateTime<Utc>>,
}

/// What else changes with a monitor's definition.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DefinitionChange {
    /// What a check does changed: `definition_version` goes up by one, so
    /// results of checks made for the old definition no longer move state.
    pub check_changed: bool,
    /// What the monitor watches changed (its type or target): its runtime
    /// state starts again, as of this time.
    pub reset_runtime_at: Option<DateTime<Utc>>,
}

/// Writes the monitor's definition (bumping `updated_at`), with `change`.
pub async fn update_definition(
    conn: &mut AsyncPgConnection,
    id: i64,
    definition: MonitorDefinition,
    change: DefinitionChange,
) -> DbResult<Monitor> {
    update_definition_labelled(conn, id, definition, change, None).await
}

/// [`update_definition`], writing `labels` too when given (`None` keeps
/// them). Labels are no part of what a check does: they move no version.
pub async fn update_definition_labelled(
    conn: &mut AsyncPgConnection,
    id: i64,
    definition: MonitorDefinition,
    change: DefinitionChange,
    labels: Option<serde_json::Value>,
) -> DbResult<Monitor> {
    let relabelled = labels.is_some();
    let target = monitors::table.filter(monitors::id.eq(id));
    // Not given: `labels = COALESCE(NULL, labels)`, one statement either way.
    let labels = coalesce_labels(
        labels.into_sql::<diesel::sql_types::Nullable<diesel::sql_types::Jsonb>>(),
        monitors::labels,
    );
    let version = monitors::definition_version + i64::from(change.check_changed);
    let set_definition = (
        definition,
        // A legacy plain-text password never outlives a rewrite of its row
        // (the definition carries the sealed one).
        monitors::http_password.eq(None::<String>),
        monitors::updated_at.eq(diesel::dsl::now),
        monitors::definition_version.eq(version),
        monitors::labels.eq(labels),
    );
    let mut row = match change.reset_runtime_at {
        None => {
            diesel::update(target)
                .set(set_definition)
                .returning(Monitor::as_returning())
                .get_result(conn)
                .await?
        }
        Some(at) => {
            let reset = RuntimeReset {
                status: MonitorStatus::Pending,
                status_since: Some(at),
                consecutive_failures: 0,
                last_heartbeat_at: None,
                ssl_expires_at: None,
                ssl_warned_for: None,
                heartbeat_counted_until: None,
                heartbeat_started_at: None,
            };
            diesel::update(target)
                .set((set_definition, reset))
                .returning(Monitor::as_returning())
                .get_result(conn)
                .await?
        }
    };
    // New labels may put it under a window's selector: marked now, so its
    // next slot is already skipped under a `pause`.
    if relabelled {
        crate::maintenance::markers::mark_joined_rows(conn, std::slice::from_mut(&mut row)).await?;
    }
    Ok(row)
}

diesel::define_sql_function! {
    /// `COALESCE` of a given labels object and the stored ones.
    #[sql_name = "COALESCE"]
    fn coalesce_labels(
        given: diesel::sql_types::Nullable<diesel::sql_types::Jsonb>,
        stored: diesel::sql_types::Jsonb,
    ) -> diesel::sql_types::Jsonb;
}

/// Deletes the organisation's monitor (its rollups and links go with it); `false`
/// when there is no such monitor of theirs.
///
/// Its check results stay where they are, unseen (results are only read for
/// a monitor that exists, and monitor ids are never reused), and go when
/// their day's partition expires: deleting a monitor with millions of results
/// is one row, not a cascade that locks and rewrites them all.
pub async fn delete(conn: &mut AsyncPgConnection, org_id: i64, id: i64) -> DbResult<bool> {
    delete_within(conn, Reach::org(org_id), id).await
}

/// [`delete`] of a monitor the caller reaches.
pub async fn delete_within(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    id: i64,
) -> DbResult<bool> {
    let reached = within(reach, None)
        .filter(monitors::id.eq(id))
        .select(monitors::id);
    let n = diesel::delete(monitors::table)
        .filter(monitors::id.eq_any(reached))
        .execute(conn)
        .await?;
    Ok(n == 1)
}
