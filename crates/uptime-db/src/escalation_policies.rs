//! Escalation policies (migration 000034): an organisation's ordered steps
//! of contacts, each with a delay, and the monitors that alert through one
//! (`monitor_escalation_policies`). Written by the api-gateway; read by the
//! notifier's intake (step 0 is a policy monitor's contacts) and escalation
//! sweep ([`crate::escalations`]).

use crate::owned_rows::{ById, OwnedTable};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Int4, SmallInt, Text, Timestamptz};
use diesel::{OptionalExtension, QueryableByName};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// One step: the contacts it notifies and how long an unacknowledged
/// incident waits on it before the next step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub delay_secs: i32,
    /// Sorted, without repeats.
    pub contact_ids: Vec<i64>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policy {
    pub id: i64,
    pub org_id: i64,
    pub name: String,
    pub repeat_count: i16,
    pub steps: Vec<Step>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// What a create or a change writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDefinition {
    pub name: String,
    pub repeat_count: i16,
    pub steps: Vec<Step>,
}

#[derive(QueryableByName)]
struct PolicyRow {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = BigInt)]
    org_id: i64,
    #[diesel(sql_type = Text)]
    name: String,
    #[diesel(sql_type = SmallInt)]
    repeat_count: i16,
    #[diesel(sql_type = Timestamptz)]
    created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    updated_at: DateTime<Utc>,
}

#[derive(QueryableByName)]
struct StepRow {
    #[diesel(sql_type = BigInt)]
    policy_id: i64,
    #[diesel(sql_type = Int4)]
    delay_secs: i32,
    #[diesel(sql_type = Array<BigInt>)]
    contact_ids: Vec<i64>,
}

const POLICY_COLUMNS: &str = "id, org_id, name, repeat_count, created_at, updated_at";

/// An organisation's policies, by id.
const POLICIES: OwnedTable = OwnedTable {
    table: "escalation_policies",
    owner: "org_id",
    columns: POLICY_COLUMNS,
};

/// The policies of `rows` with their steps (one statement for all).
async fn with_steps(conn: &mut AsyncPgConnection, rows: Vec<PolicyRow>) -> DbResult<Vec<Policy>> {
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    let steps: Vec<StepRow> = diesel::sql_query(
        "SELECT s.policy_id, s.delay_secs, \
                ARRAY(SELECT sc.contact_id FROM escalation_step_contacts sc \
                      WHERE sc.policy_id = s.policy_id AND sc.position = s.position \
                      ORDER BY sc.contact_id) AS contact_ids \
         FROM escalation_steps s WHERE s.policy_id = ANY($1) \
         ORDER BY s.policy_id, s.position",
    )
    .bind::<Array<BigInt>, _>(&ids)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Policy {
            steps: steps
                .iter()
                .filter(|s| s.policy_id == r.id)
                .map(|s| Step {
                    delay_secs: s.delay_secs,
                    contact_ids: s.contact_ids.clone(),
                })
                .collect(),
            id: r.id,
            org_id: r.org_id,
            name: r.name,
            repeat_count: r.repeat_count,
            created_at: r.created_at,
            updated_at: r.updated_at,
        })
        .collect())
}

/// Up to `limit` of `org_id`'s policies with ids above `after_id`, by id.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    after_id: i64,
    limit: i64,
) -> DbResult<Vec<Policy>> {
    let rows: Vec<PolicyRow> = POLICIES.page(conn, org_id, after_id, limit).await?;
    with_steps(conn, rows).await
}

/// `org_id`'s policy `id`; `lock`: locked until the transaction ends.
pub async fn get(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    lock: bool,
) -> DbResult<Option<Policy>> {
    let row: Option<PolicyRow> = POLICIES
        .by_id(conn, org_id, id, ById::Read { for_update: lock })
        .await?;
    match row {
        Some(row) => Ok(with_steps(conn, vec![row]).await?.pop()),
        None => Ok(None),
    }
}

/// Writes `steps` as policy `policy_id`'s (two statements).
async fn insert_steps(
    conn: &mut AsyncPgConnection,
    policy_id: i64,
    steps: &[Step],
) -> DbResult<()> {
    let positions: Vec<i16> = (0..steps.len() as i16).collect();
    let delays: Vec<i32> = steps.iter().map(|s| s.delay_secs).collect();
    diesel::sql_query(
        "INSERT INTO escalation_steps (policy_id, position, delay_secs) \
         SELECT $1, p, d FROM unnest($2::smallint[], $3::int[]) AS s(p, d)",
    )
    .bind::<BigInt, _>(policy_id)
    .bind::<Array<SmallInt>, _>(&positions)
    .bind::<Array<Int4>, _>(&delays)
    .execute(conn)
    .await?;
    let (step_of, contacts): (Vec<i16>, Vec<i64>) = steps
        .iter()
        .enumerate()
        .flat_map(|(p, s)| s.contact_ids.iter().map(move |c| (p as i16, *c)))
        .unzip();
    diesel::sql_query(
        "INSERT INTO escalation_step_contacts (policy_id, position, contact_id) \
         SELECT $1, p, c FROM unnest($2::smallint[], $3::bigint[]) AS s(p, c) \
         ON CONFLICT DO NOTHING",
    )
    .bind::<BigInt, _>(policy_id)
    .bind::<Array<SmallInt>, _>(&step_of)
    .bind::<Array<BigInt>, _>(&contacts)
    .execute(conn)
    .await?;
    Ok(())
}

/// Creates a policy of `org_id` (its contacts checked by the caller).
pub async fn create(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    def: &PolicyDefinition,
) -> DbResult<Policy> {
    let row: PolicyRow = diesel::sql_query(format!(
        "INSERT INTO escalation_policies (org_id, name, repeat_count) VALUES ($1, $2, $3) \
         RETURNING {POLICY_COLUMNS}"
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(&def.name)
    .bind::<SmallInt, _>(def.repeat_count)
    .get_result(conn)
    .await?;
    insert_steps(conn, row.id, &def.steps).await?;
    Ok(with_steps(conn, vec![row]).await?.remove(0))
}

/// Replaces policy `id`'s name, repeat count and steps (lock it first with
/// [`get`]). Escalations in progress read the new steps at their next step.
pub async fn replace(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    def: &PolicyDefinition,
) -> DbResult<Option<Policy>> {
    let row: Option<PolicyRow> = diesel::sql_query(format!(
        "UPDATE escalation_policies SET name = $3, repeat_count = $4, updated_at = now() \
         WHERE org_id = $1 AND id = $2 RETURNING {POLICY_COLUMNS}"
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(id)
    .bind::<Text, _>(&def.name)
    .bind::<SmallInt, _>(def.repeat_count)
    .get_result(conn)
    .await
    .optional()?;
    let Some(row) = row else {
        return Ok(None);
    };
    diesel::sql_query("DELETE FROM escalation_steps WHERE policy_id = $1")
        .bind::<BigInt, _>(id)
        .execute(conn)
        .await?;
    insert_steps(conn, id, &def.steps).await?;
    Ok(with_steps(conn, vec![row]).await?.pop())
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// How many policies `org_id` has, its organisation row locked until the
/// transaction ends (concurrent creates are counted one after the other).
pub async fn count_locked(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<i64> {
    crate::quotas::lock_organisation(conn, org_id).await?;
    let count: Count =
        diesel::sql_query("SELECT count(*) AS n FROM escalation_policies WHERE org_id = $1")
            .bind::<BigInt, _>(org_id)
            .get_result(conn)
            .await?;
    Ok(count.n)
}

#[derive(QueryableByName)]
struct MonitorId {
    #[diesel(sql_type = BigInt)]
    monitor_id: i64,
}

/// The monitors alerting through policy `id` (at most `limit`), by id.
pub async fn monitors_using(
    conn: &mut AsyncPgConnection,
    id: i64,
    limit: i64,
) -> DbResult<Vec<i64>> {
    let rows: Vec<MonitorId> = diesel::sql_query(
        "SELECT monitor_id FROM monitor_escalation_policies WHERE policy_id = $1 \
         ORDER BY monitor_id LIMIT $2",
    )
    .bind::<BigInt, _>(id)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.monitor_id).collect())
}

/// Deletes policy `id` of `org_id` (no monitor may use it: check with
/// [`monitors_using`] under the policy's lock); whether it existed.
pub async fn delete(conn: &mut AsyncPgConnection, org_id: i64, id: i64) -> DbResult<bool> {
    let n = diesel::sql_query("DELETE FROM escalation_policies WHERE org_id = $1 AND id = $2")
        .bind::<BigInt, _>(org_id)
        .bind::<BigInt, _>(id)
        .execute(conn)
        .await?;
    Ok(n > 0)
}

#[derive(QueryableByName)]
struct PolicyId {
    #[diesel(sql_type = BigInt)]
    policy_id: i64,
}

/// The policy monitor `monitor_id` alerts through, if any.
pub async fn of_monitor(conn: &mut AsyncPgConnection, monitor_id: i64) -> DbResult<Option<i64>> {
    let row: Option<PolicyId> = diesel::sql_query(
        "SELECT policy_id FROM monitor_escalation_policies WHERE monitor_id = $1",
    )
    .bind::<BigInt, _>(monitor_id)
    .get_result(conn)
    .await
    .optional()?;
    Ok(row.map(|r| r.policy_id))
}

#[derive(QueryableByName)]
struct MonitorPolicy {
    #[diesel(sql_type = BigInt)]
    monitor_id: i64,
    #[diesel(sql_type = BigInt)]
    policy_id: i64,
}

/// The policy each of `monitor_ids` alerts through, for those that have
/// one (one query, for an apply's managed monitors).
pub async fn of_monitors(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
) -> DbResult<std::collections::HashMap<i64, i64>> {
    if monitor_ids.is_empty() {
        return Ok(std::collections::HashMap::new());
    }
    let rows: Vec<MonitorPolicy> = diesel::sql_query(
        "SELECT monitor_id, policy_id FROM monitor_escalation_policies \
         WHERE monitor_id = ANY($1)",
    )
    .bind::<diesel::sql_types::Array<BigInt>, _>(monitor_ids)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.monitor_id, r.policy_id))
        .collect())
}

/// Points monitor `monitor_id` at policy `policy_id`, or at none.
pub async fn set_for_monitor(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    policy_id: Option<i64>,
) -> DbResult<()> {
    match policy_id {
        Some(policy_id) => {
            diesel::sql_query(
                "INSERT INTO monitor_escalation_policies (monitor_id, policy_id) VALUES ($1, $2) \
                 ON CONFLICT (monitor_id) DO UPDATE SET policy_id = EXCLUDED.policy_id",
            )
            .bind::<BigInt, _>(monitor_id)
            .bind::<BigInt, _>(policy_id)
            .execute(conn)
            .await?;
        }
        None => {
            diesel::sql_query("DELETE FROM monitor_escalation_policies WHERE monitor_id = $1")
                .bind::<BigInt, _>(monitor_id)
                .execute(conn)
                .await?;
        }
    }
    Ok(())
}
