//! Rounds of monitors checked from several regions (`check_rounds`): the
//! answers merged as they arrive, the rounds the recorder's sweeper decides
//! once their deadline passed, marking a round decided, and retention.
//!
//! The recorder calls these inside its transactions, after it locked the
//! rounds' monitors (in id order), so a round is only ever changed by the
//! holder of its monitor's lock: decided once.

use crate::schema::check_rounds;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{Array, BigInt, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// A round's definition and the answers it holds: the answers of one
/// round to merge (and what the round is if this creates it), an undecided
/// round as stored, and the first columns of every round read
/// ([`crate::rounds_read::RoundRow`]).
#[derive(Debug, Clone, PartialEq, Queryable, Selectable, QueryableByName)]
#[diesel(table_name = check_rounds)]
pub struct RoundAnswers {
    pub round_id: Uuid,
    pub monitor_id: i64,
    pub definition_version: i64,
    /// `scheduled` or `manual`.
    pub trigger: String,
    pub due_at: DateTime<Utc>,
    pub deadline_at: DateTime<Utc>,
    pub regions: Vec<String>,
    pub quorum: i32,
    /// `{"<region>": <CheckResult>}`, the answers so far.
    pub answers: serde_json::Value,
}

/// An undecided round as stored.
pub type OpenRound = RoundAnswers;

impl OpenRound {
    /// Whether every region of the round answered.
    pub fn is_complete(&self) -> bool {
        self.regions
            .iter()
            .all(|r| self.answers.get(r.as_str()).is_some())
    }
}

const OPEN_ROUND_COLUMNS: &str = "round_id, monitor_id, definition_version, trigger, due_at, \
     deadline_at, regions, quorum, answers";

/// Merges `rounds` (each round at most once) into `check_rounds` in one
/// statement, creating the rounds not seen yet, and returns the undecided
/// rounds it touched, as they are now. A decided round is left alone (a late
/// answer changes nothing). Region names cannot hold commas
/// (`is_valid_region`), so each round's regions travel as one joined string
/// (UNNEST would flatten an array of arrays).
pub async fn merge_answers(
    conn: &mut AsyncPgConnection,
    rounds: &[RoundAnswers],
) -> DbResult<Vec<OpenRound>> {
    if rounds.is_empty() {
        return Ok(Vec::new());
    }
    let ids: Vec<Uuid> = rounds.iter().map(|r| r.round_id).collect();
    let monitor_ids: Vec<i64> = rounds.iter().map(|r| r.monitor_id).collect();
    let versions: Vec<i64> = rounds.iter().map(|r| r.definition_version).collect();
    let triggers: Vec<String> = rounds.iter().map(|r| r.trigger.clone()).collect();
    let due: Vec<DateTime<Utc>> = rounds.iter().map(|r| r.due_at).collect();
    let deadlines: Vec<DateTime<Utc>> = rounds.iter().map(|r| r.deadline_at).collect();
    let regions: Vec<String> = rounds.iter().map(|r| r.regions.join(",")).collect();
    let quorums: Vec<i32> = rounds.iter().map(|r| r.quorum).collect();
    let answers: Vec<serde_json::Value> = rounds.iter().map(|r| r.answers.clone()).collect();
    Ok(diesel::sql_query(format!(
        "INSERT INTO check_rounds AS c (round_id, monitor_id, definition_version, trigger, \
             due_at, deadline_at, regions, quorum, answers) \
         SELECT id, monitor_id, version, trigger, due_at, deadline_at, \
             string_to_array(regions, ','), quorum, answers \
         FROM UNNEST($1::uuid[], $2::bigint[], $3::bigint[], $4::text[], $5::timestamptz[], \
             $6::timestamptz[], $7::text[], $8::int[], $9::jsonb[]) \
             AS u(id, monitor_id, version, trigger, due_at, deadline_at, regions, quorum, answers) \
         ON CONFLICT (round_id) DO UPDATE SET answers = c.answers || EXCLUDED.answers \
             WHERE c.decided_at IS NULL \
         RETURNING {OPEN_ROUND_COLUMNS}"
    ))
    .bind::<Array<diesel::sql_types::Uuid>, _>(ids)
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<Array<BigInt>, _>(versions)
    .bind::<Array<Text>, _>(triggers)
    .bind::<Array<Timestamptz>, _>(due)
    .bind::<Array<Timestamptz>, _>(deadlines)
    .bind::<Array<Text>, _>(regions)
    .bind::<Array<Integer>, _>(quorums)
    .bind::<Array<Jsonb>, _>(answers)
    .load(conn)
    .await?)
}

#[derive(QueryableByName)]
struct RoundMonitor {
    #[diesel(sql_type = BigInt)]
    monitor_id: i64,
}

/// The monitors of up to `limit` undecided rounds whose deadline passed by
/// `now`, oldest deadline first (no lock: the caller locks the monitors, then
/// the rounds, in that order, as the recording path does).
pub async fn monitors_with_overdue_rounds(
    conn: &mut AsyncPgConnection,
    now: DateTime<Utc>,
    limit: i64,
) -> DbResult<Vec<i64>> {
    let rows: Vec<RoundMonitor> = diesel::sql_query(
        "SELECT monitor_id FROM (SELECT monitor_id, deadline_at FROM check_rounds \
             WHERE decided_at IS NULL AND deadline_at <= $1 \
             ORDER BY deadline_at LIMIT $2) d \
         GROUP BY monitor_id ORDER BY monitor_id",
    )
    .bind::<Timestamptz, _>(now)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| r.monitor_id).collect())
}

/// The undecided rounds of `monitor_ids` whose deadline passed by `now`,
/// locked (skipping any another transaction holds), at most `limit`.
pub async fn lock_overdue_rounds(
    conn: &mut AsyncPgConnection,
    monitor_ids: &[i64],
    now: DateTime<Utc>,
    limit: i64,
) -> DbResult<Vec<OpenRound>> {
    Ok(diesel::sql_query(format!(
        "SELECT {OPEN_ROUND_COLUMNS} FROM check_rounds \
         WHERE decided_at IS NULL AND deadline_at <= $1 AND monitor_id = ANY($2) \
         ORDER BY deadline_at LIMIT $3 FOR UPDATE SKIP LOCKED"
    ))
    .bind::<Timestamptz, _>(now)
    .bind::<Array<BigInt>, _>(monitor_ids)
    .bind::<BigInt, _>(limit)
    .load(conn)
    .await?)
}

/// A round's decision, to write.
#[derive(Debug, Clone, PartialEq)]
pub struct DecidedRound {
    pub round_id: Uuid,
    /// `up`, `degraded`, `down`, or `None` when no region answered.
    pub verdict: Option<String>,
    /// The decided round (`Round`).
    pub decision: serde_json::Value,
}

/// Marks `rounds` decided at `now`; a round already decided keeps its first
/// decision.
pub async fn mark_decided(
    conn: &mut AsyncPgConnection,
    rounds: &[DecidedRound],
    now: DateTime<Utc>,
) -> DbResult<usize> {
    if rounds.is_empty() {
        return Ok(0);
    }
    let ids: Vec<Uuid> = rounds.iter().map(|r| r.round_id).collect();
    let verdicts: Vec<Option<String>> = rounds.iter().map(|r| r.verdict.clone()).collect();
    let decisions: Vec<serde_json::Value> = rounds.iter().map(|r| r.decision.clone()).collect();
    Ok(diesel::sql_query(
        "UPDATE check_rounds AS c SET decided_at = $4, verdict = u.verdict, decision = u.decision \
         FROM UNNEST($1::uuid[], $2::text[], $3::jsonb[]) AS u(id, verdict, decision) \
         WHERE c.round_id = u.id AND c.decided_at IS NULL",
    )
    .bind::<Array<diesel::sql_types::Uuid>, _>(ids)
    .bind::<Array<Nullable<Text>>, _>(verdicts)
    .bind::<Array<Jsonb>, _>(decisions)
    .bind::<Timestamptz, _>(now)
    .execute(conn)
    .await?)
}

/// Retention: deletes up to `limit` rounds decided before `decided_before`,
/// then, while under `limit`, rounds still undecided and created before
/// `open_before` (`None`: none); returns how many went (at most `limit`).
pub async fn delete_old_rounds(
    conn: &mut AsyncPgConnection,
    decided_before: DateTime<Utc>,
    open_before: Option<DateTime<Utc>>,
    limit: i64,
) -> DbResult<u64> {
    // Each finds its rows through a partial index (check_rounds_decided_idx;
    // check_rounds_undecided_idx is on the deadline, a little after
    // creation) and hands them over as an array, so the DELETE is key
    // lookups; a round locked right now (being decided) is skipped.
    let decided = diesel::sql_query(
        "DELETE FROM check_rounds WHERE round_id = ANY (ARRAY( \
             SELECT round_id FROM check_rounds \
             WHERE decided_at IS NOT NULL AND decided_at < $1 \
             LIMIT $2 FOR UPDATE SKIP LOCKED)) \
         AND decided_at IS NOT NULL AND decided_at < $1",
    )
    .bind::<Timestamptz, _>(decided_before)
    .bind::<BigInt, _>(limit)
    .execute(conn)
    .await? as i64;
    let Some(open_before) = open_before.filter(|_| decided < limit) else {
        return Ok(decided as u64);
    };
    let open = diesel::sql_query(
        "DELETE FROM check_rounds WHERE round_id = ANY (ARRAY( \
             SELECT round_id FROM check_rounds \
             WHERE decided_at IS NULL AND deadline_at < $1 AND created_at < $1 \
             LIMIT $2 FOR UPDATE SKIP LOCKED)) \
         AND decided_at IS NULL AND created_at < $1",
    )
    .bind::<Timestamptz, _>(open_before)
    .bind::<BigInt, _>(limit - decided)
    .execute(conn)
    .await? as i64;
    Ok((decided + open) as u64)
}
