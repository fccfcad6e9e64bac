//! The audit log (migration 000019): one entry per write through the API,
//! written by [`record`] in the transaction of the change it records,
//! together with the outbox row that publishes it
//! ([`uptime_contracts::audit::AuditRecordedV1`], relayed by the recorder).
//! Read newest first, a page at a time, with filters ([`list_page`]);
//! pruned by age ([`delete_older_than`], uptime-retention).

use crate::reach::Reach;
use crate::recording::NewOutboxEvent;
use crate::schema::{audit_log, outbox_events};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Bool, Jsonb};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uptime_contracts::audit::AuditRecordedV1;
use uptime_contracts::Message;

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = audit_log)]
pub struct AuditEntry {
    pub id: i64,
    pub org_id: i64,
    pub actor_user_id: i64,
    pub key_prefix: String,
    pub address: Option<String>,
    pub at: DateTime<Utc>,
    pub action: String,
    pub resource_kind: String,
    pub resource_id: Option<i64>,
    pub changes: serde_json::Value,
}

/// What [`record`] writes.
#[derive(Debug, Clone, PartialEq, Insertable)]
#[diesel(table_name = audit_log)]
pub struct NewAuditEntry {
    pub org_id: i64,
    pub actor_user_id: i64,
    pub key_prefix: String,
    pub address: Option<String>,
    pub action: String,
    pub resource_kind: String,
    pub resource_id: Option<i64>,
    pub changes: serde_json::Value,
}

/// Writes `entry` and the outbox row that publishes it. Call it inside the
/// transaction of the change: both commit with it or neither does.
pub async fn record(conn: &mut AsyncPgConnection, entry: NewAuditEntry) -> DbResult<AuditEntry> {
    let stored: AuditEntry = diesel::insert_into(audit_log::table)
        .values(&entry)
        .returning(AuditEntry::as_returning())
        .get_result(conn)
        .await?;
    let message = AuditRecordedV1 {
        event_id: uuid::Uuid::new_v4(),
        id: stored.id,
        org_id: stored.org_id,
        actor_user_id: stored.actor_user_id,
        key_prefix: stored.key_prefix.clone(),
        address: stored.address.clone(),
        at: stored.at,
        action: stored.action.clone(),
        resource_kind: stored.resource_kind.clone(),
        resource_id: stored.resource_id,
        changes: stored.changes.clone(),
    };
    diesel::insert_into(outbox_events::table)
        .values(NewOutboxEvent {
            id: message.event_id,
            monitor_id: None,
            subject: AuditRecordedV1::SUBJECT.to_string(),
            // A plain struct of JSON-able fields always serialises.
            payload: serde_json::to_value(&message).unwrap_or_default(),
        })
        .execute(conn)
        .await?;
    Ok(stored)
}

/// What [`list_page`] keeps; `None` keeps everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuditFilter {
    pub actor_user_id: Option<i64>,
    pub resource_kind: Option<String>,
    pub resource_id: Option<i64>,
    pub action: Option<String>,
    /// At or after.
    pub since: Option<DateTime<Utc>>,
    /// Before.
    pub until: Option<DateTime<Utc>>,
}

/// The monitor ids an entry names: its resource (a monitor, a monitor's
/// badge), and every id under a `monitor_id`, `monitor_ids` (a bulk
/// create, a window, a page's groups) or `depends_on` in its changes.
const NAMED_MONITORS: &str = "SELECT audit_log.resource_id AS id \
        WHERE audit_log.resource_kind IN ('monitor', 'monitor_badge') \
    UNION ALL SELECT (v #>> '{}')::bigint FROM jsonb_path_query(audit_log.changes, \
        'strict $.**.monitor_id.** ? (@.type() == \"number\")') v \
    UNION ALL SELECT (v #>> '{}')::bigint FROM jsonb_path_query(audit_log.changes, \
        'strict $.**.monitor_ids.** ? (@.type() == \"number\")') v \
    UNION ALL SELECT (v #>> '{}')::bigint FROM jsonb_path_query(audit_log.changes, \
        'strict $.**.depends_on.** ? (@.type() == \"number\")') v";

/// The label selectors an entry of a window or a page names (a window's
/// `label_selector`, a page's groups' `selector`), before and after.
const NAMED_SELECTORS: &str = "SELECT v FROM jsonb_path_query(audit_log.changes, \
        'lax $.label_selector.* ? (@.type() == \"object\")') v \
        WHERE audit_log.resource_kind IN ('maintenance_window', 'status_page') \
    UNION ALL SELECT v FROM jsonb_path_query(audit_log.changes, \
        'strict $.**.selector ? (@.type() == \"object\")') v \
        WHERE audit_log.resource_kind IN ('maintenance_window', 'status_page')";

/// Up to `limit` of the entries matching `filter` of the organisation the
/// caller reaches, newest first (by id), those with an id below `before_id`
/// when given. A caller limited by a label selector sees only the entries
/// whose named monitors it all reaches now (one deleted since is reached by
/// nobody) and whose named selectors hold its own: an entry about anything
/// of a monitor out of its reach is another organisation's to it.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    filter: &AuditFilter,
    before_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<AuditEntry>> {
    let mut query = audit_log::table
        .filter(audit_log::org_id.eq(reach.org_id))
        .into_boxed();
    if let Some(selector) = reach.narrowing() {
        query = query
            .filter(reach.around_reached_ids(
                &format!(
                    "NOT EXISTS (SELECT 1 FROM ({NAMED_MONITORS}) named \
                     WHERE named.id IS NOT NULL AND named.id NOT IN ("
                ),
                "))",
            ))
            .filter(
                diesel::dsl::sql::<Bool>(&format!(
                    "NOT EXISTS (SELECT 1 FROM ({NAMED_SELECTORS}) named(v) WHERE NOT named.v @> "
                ))
                .bind::<Jsonb, _>(selector.clone())
                .sql(")"),
            );
    }
    if let Some(before) = before_id {
        query = query.filter(audit_log::id.lt(before));
    }
    if let Some(actor) = filter.actor_user_id {
        query = query.filter(audit_log::actor_user_id.eq(actor));
    }
    if let Some(kind) = &filter.resource_kind {
        query = query.filter(audit_log::resource_kind.eq(kind.clone()));
    }
    if let Some(id) = filter.resource_id {
        query = query.filter(audit_log::resource_id.eq(id));
    }
    if let Some(action) = &filter.action {
        query = query.filter(audit_log::action.eq(action.clone()));
    }
    if let Some(since) = filter.since {
        query = query.filter(audit_log::at.ge(since));
    }
    if let Some(until) = filter.until {
        query = query.filter(audit_log::at.lt(until));
    }
    Ok(query
        .order(audit_log::id.desc())
        .limit(limit)
        .select(AuditEntry::as_select())
        .load(conn)
        .await?)
}

crate::retention::delete_batch_fn! {
    /// Deletes up to `limit` entries recorded before `before`; how many went.
    pub fn delete_older_than(before): "audit_log" where "at < $1"
}
