//! Reading a monitor's rounds (`check_rounds`) for the API. The recorder
//! writes them ([`crate::rounds`]); this is the read side only.

use crate::rounds::RoundAnswers;
use crate::schema::check_rounds;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use uuid::Uuid;

/// A round as the API shows it: decided or still open.
#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = check_rounds)]
pub struct RoundRow {
    /// What the round is and its answers so far.
    #[diesel(embed)]
    pub round: RoundAnswers,
    pub decided_at: Option<DateTime<Utc>>,
    pub verdict: Option<String>,
    /// The decided round (`Round`).
    pub decision: Option<serde_json::Value>,
}

/// The newest `limit` rounds of a monitor, newest first (by when they were
/// due, then id), read through `check_rounds_monitor_idx`.
pub async fn newest(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    limit: i64,
) -> DbResult<Vec<RoundRow>> {
    page(conn, monitor_id, None, limit).await
}

/// At most `limit` rounds of a monitor in [`newest`]'s order, those after
/// `after` (a round's `due_at` and `round_id`) in that order.
pub async fn page(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: i64,
) -> DbResult<Vec<RoundRow>> {
    let mut query = check_rounds::table
        .filter(check_rounds::monitor_id.eq(monitor_id))
        .into_boxed();
    if let Some((at, id)) = after {
        query = query.filter(
            check_rounds::due_at.lt(at).or(check_rounds::due_at
                .eq(at)
                .and(check_rounds::round_id.lt(id))),
        );
    }
    Ok(query
        .order((check_rounds::due_at.desc(), check_rounds::round_id.desc()))
        .limit(limit)
        .select(RoundRow::as_select())
        .load(conn)
        .await?)
}
