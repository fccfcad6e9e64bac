//! What the scheduler reads: the timing of active monitors (to place them on
//! its timeline), the check configuration of monitors about to be due (to
//! snapshot into a due check), and the advisory lock that makes one replica
//! the leader.
//!
//! Every query here is keyed by primary key (`id = ANY($1)` or a keyset page),
//! so the scheduler never scans the table on its hot path; only the periodic
//! resync pages through all active monitors.

use crate::models::columns::KindColumn;
use crate::schema::monitors;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uptime_contracts::MonitorKind;

/// The key of the session advisory lock the leading scheduler holds
/// (ASCII "uptSched", so it is recognisable in `pg_locks`).
pub const SCHEDULER_LEADER_LOCK: i64 = 0x7570_7453_6368_6564;

/// What placing a monitor on the timeline needs, and nothing more.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = monitors)]
pub struct MonitorTiming {
    pub id: i64,
    #[diesel(deserialize_as = KindColumn)]
    pub kind: MonitorKind,
    pub interval_secs: i32,
    pub timeout_secs: i32,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub last_checked_at: Option<DateTime<Utc>>,
    pub last_heartbeat_at: Option<DateTime<Utc>>,
    /// For the missed-heartbeat results, which carry it.
    pub definition_version: i64,
    /// Heartbeats: a cron schedule instead of the interval, and its zone.
    pub heartbeat_schedule: Option<String>,
    pub heartbeat_timezone: Option<String>,
    /// Heartbeats: the start ping of the run in progress.
    pub heartbeat_started_at: Option<DateTime<Utc>>,
}

/// What a checker needs to check a monitor, read just before the check is due.
#[derive(Debug, Clone, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = monitors)]
pub struct CheckConfig {
    pub id: i64,
    #[diesel(deserialize_as = KindColumn)]
    pub kind: MonitorKind,
    pub interval_secs: i32,
    pub target: Option<String>,
    pub timeout_secs: i32,
    pub expected_status: i32,
    pub keyword: Option<String>,
    pub keyword_type: Option<String>,
    pub definition_version: i64,
    pub check_options: Option<serde_json::Value>,
    /// Sealed: the scheduler passes it on and cannot open it.
    pub http_password_sealed: Option<crate::models::SealedText>,
    /// A legacy plain-text password is not sealed yet (see `Monitor`).
    #[diesel(select_expression = monitors::http_password.is_not_null())]
    #[diesel(select_expression_type = diesel::dsl::IsNotNull<monitors::http_password>)]
    pub http_password_unsealed: bool,
    /// The regions the round goes to (`None`: the deployment's default
    /// ones), read with the rest so a slot stays one query.
    pub regions: Option<Vec<String>>,
    /// The effect of the maintenance window the monitor is in (`pause`: this
    /// slot is skipped), read with the rest: no query of its own.
    pub maintenance_effect: Option<String>,
}

impl CheckConfig {
    /// Whether a `pause` maintenance window covers the monitor now.
    pub fn paused_for_maintenance(&self) -> bool {
        self.maintenance_effect.as_deref() == Some("pause")
    }
}

/// One page of active monitors with `id > after_id`, in id order.
pub async fn active_timings_page(
    conn: &mut AsyncPgConnection,
    after_id: i64,
    limit: i64,
) -> DbResult<Vec<MonitorTiming>> {
    Ok(monitors::table
        .filter(monitors::active.eq(true))
        .filter(monitors::id.gt(after_id))
        .order(monitors::id.asc())
        .limit(limit)
        .select(MonitorTiming::as_select())
        .load(conn)
        .await?)
}

/// The timing of those of `ids` that exist and are active (paused and deleted
/// monitors are simply absent from the answer).
pub async fn active_timings_by_ids(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
) -> DbResult<Vec<MonitorTiming>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .filter(monitors::active.eq(true))
        .select(MonitorTiming::as_select())
        .load(conn)
        .await?)
}

/// The check configuration of those of `ids` that exist and are active.
pub async fn active_check_configs(
    conn: &mut AsyncPgConnection,
    ids: &[i64],
) -> DbResult<Vec<CheckConfig>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(monitors::table
        .filter(monitors::id.eq_any(ids))
        .filter(monitors::active.eq(true))
        .select(CheckConfig::as_select())
        .load(conn)
        .await?)
}

#[derive(QueryableByName)]
struct Locked {
    #[diesel(sql_type = diesel::sql_types::Bool)]
    locked: bool,
}

/// Tries to take the scheduler's leader lock for the session of `conn`,
/// without waiting. The lock lives as long as that session (or until
/// [`release_leader_lock`]), so `conn` must be a dedicated connection, never
/// one that goes back to a pool.
pub async fn try_leader_lock(conn: &mut AsyncPgConnection) -> DbResult<bool> {
    let row: Locked = diesel::sql_query("SELECT pg_try_advisory_lock($1) AS locked")
        .bind::<diesel::sql_types::BigInt, _>(SCHEDULER_LEADER_LOCK)
        .get_result(conn)
        .await?;
    Ok(row.locked)
}

/// Makes the server notice within seconds that the peer of this session has
/// vanished (a host lost, a network cut) instead of after the kernel's default
/// two hours of TCP keepalive silence: the leader lock dies with the session,
/// so this bounds how long a standby waits after the leader's host is gone.
/// (A leader process that merely dies closes its socket and frees the lock at
/// once.) Keepalives probe after 1 s of silence, every second, three times;
/// data unacknowledged for 5 s also ends the session.
pub async fn detect_dead_peer_quickly(conn: &mut AsyncPgConnection) -> DbResult<()> {
    for setting in [
        "SET tcp_keepalives_idle = 1",
        "SET tcp_keepalives_interval = 1",
        "SET tcp_keepalives_count = 3",
        "SET tcp_user_timeout = 5000",
    ] {
        diesel::sql_query(setting).execute(conn).await?;
    }
    Ok(())
}

/// Gives the leader lock up (closing the session does the same).
pub async fn release_leader_lock(conn: &mut AsyncPgConnection) -> DbResult<()> {
    diesel::sql_query("SELECT pg_advisory_unlock($1)")
        .bind::<diesel::sql_types::BigInt, _>(SCHEDULER_LEADER_LOCK)
        .execute(conn)
        .await?;
    Ok(())
}

/// `SELECT 1` on `conn`: the leader's proof that its session (and so its
/// lock) is still alive.
pub async fn ping_connection(conn: &mut AsyncPgConnection) -> DbResult<()> {
    diesel::sql_query("SELECT 1").execute(conn).await?;
    Ok(())
}
