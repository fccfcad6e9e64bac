//! The recorder's reads of monitors: only the columns its decisions need
//! (the state machine, alert rules, rounds, maintenance and the events it
//! words), not the 45 of [`crate::models::Monitor`], which the api-gateway
//! shows and writes. Left out: what only a check or the API needs (the
//! keyword, expected status, check options, passwords, heartbeat token,
//! creation and update times, a heartbeat run's start).
//!
//! The lock a batch takes is `FOR NO KEY UPDATE`: the recorder writes the
//! monitor's state, never its key, so it still queues behind every other
//! writer of the row (and they behind it), but no longer blocks the key
//! share an insert elsewhere takes on the monitor it references.

use crate::models::columns::{KindColumn, StatusColumn};
use crate::models::{AlertRules, MaintenanceMarker};
use crate::schema::monitors;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uptime_contracts::{MonitorKind, MonitorStatus};

/// A monitor as the recorder decides on it. The fields mean what they mean
/// on [`crate::models::Monitor`].
#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = monitors)]
pub struct MonitorForDecisions {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    #[diesel(deserialize_as = KindColumn)]
    pub kind: MonitorKind,
    pub target: Option<String>,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    pub confirmation_count: i32,
    pub ssl_warn_days: i32,
    pub latency_warn_ms: Option<i32>,
    pub active: bool,
    #[diesel(deserialize_as = StatusColumn)]
    pub status: MonitorStatus,
    pub status_since: Option<DateTime<Utc>>,
    pub consecutive_failures: i32,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    pub ssl_expires_at: Option<DateTime<Utc>>,
    pub ssl_warned_for: Option<DateTime<Utc>>,
    pub heartbeat_counted_until: Option<DateTime<Utc>>,
    pub definition_version: i64,
    pub heartbeat_schedule: Option<String>,
    pub heartbeat_timezone: Option<String>,
    pub regions: Option<Vec<String>>,
    pub quorum: Option<i32>,
    pub labels: serde_json::Value,
    #[diesel(embed)]
    pub rules: AlertRules,
    pub flap_changes: Option<Vec<DateTime<Utc>>>,
    pub flapping_since: Option<DateTime<Utc>>,
    #[diesel(embed)]
    pub maintenance: MaintenanceMarker,
}

/// Locks the monitors `ids` for the rest of the transaction and returns those
/// that exist. Locking in id order means two recorders whose batches share
/// monitors queue behind each other instead of deadlocking.
pub async fn lock(conn: &mut AsyncPgConnection, ids: &[i64]) -> DbResult<Vec<MonitorForDecisions>> {
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .order(monitors::id.asc())
        .for_no_key_update()
        .select(MonitorForDecisions::as_select())
        .load(conn)
        .await?)
}

/// Locks the monitors `ids` that no other transaction holds, in id order,
/// without waiting (a sweeper on another replica, or a batch being recorded,
/// has the others; they are swept a second later).
pub async fn lock_free(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
) -> DbResult<Vec<MonitorForDecisions>> {
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .order(monitors::id.asc())
        .for_no_key_update()
        .skip_locked()
        .select(MonitorForDecisions::as_select())
        .load(conn)
        .await?)
}

/// The monitors `ids` in id order, unlocked (the sweepers read them to word
/// events, or hold their locks already).
pub async fn read(conn: &mut AsyncPgConnection, ids: &[i64]) -> DbResult<Vec<MonitorForDecisions>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .order(monitors::id.asc())
        .select(MonitorForDecisions::as_select())
        .load(conn)
        .await?)
}
