//! Reading check results and the daily uptime rollup (the API's side; the
//! recorder writes them through [`crate::recording`]).
//!
//! `check_results` is partitioned by UTC day of `slot_at` ([`partitions`]),
//! so pages are ordered by `(slot_at, id)`, newest first: the newest results
//! of a monitor are in the newest partitions, and a query bounded in
//! `slot_at` only plans and reads the partitions of its days.

pub mod partitions;

use crate::models::{CheckResult, DailyUptime};
use crate::schema::{check_results, daily_uptime};
use crate::DbResult;
use chrono::{DateTime, Days, NaiveDate, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Where a page of results ends: the `(slot_at, id)` of its last result. The
/// next page holds the results strictly before it in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResultCursor {
    pub slot_at: DateTime<Utc>,
    pub id: i64,
}

/// How far back each successive query of a page reaches, in days before the
/// day the page starts in. Most monitors fill a page from the first window
/// (two partitions); a monitor with few results widens it step by step
/// instead of planning every partition for every page.
const WINDOWS_DAYS: [u64; 3] = [1, 7, 31];

/// Up to `limit` results of a monitor, newest first (by `slot_at`, then id),
/// strictly before `before`, each with its cursor. `now` anchors the first
/// page. With `region`, only the results of that region (`default` also
/// takes those recorded before regions existed, whose region is NULL).
///
/// Each query is bounded in `slot_at` with bound values, so PostgreSQL plans
/// only the partitions of its window and reads them through the
/// `(monitor_id, slot_at DESC, id DESC)` index of each: the first page of a
/// monitor checked every minute costs the same on a table of a billion rows
/// as on one of a thousand.
pub async fn page(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    before: Option<ResultCursor>,
    region: Option<&str>,
    limit: i64,
    now: DateTime<Utc>,
) -> DbResult<Vec<(CheckResult, ResultCursor)>> {
    let anchor = before.map_or(now, |c| c.slot_at).date_naive();
    let mut rows: Vec<(CheckResult, ResultCursor)> = Vec::new();
    // The newer end of the current window: the cursor (or, on the first page,
    // nothing, so results slotted ahead of `now` show too), then the older
    // end of the previous window.
    let mut newer: Option<DateTime<Utc>> = None;
    for lower in WINDOWS_DAYS
        .iter()
        .map(|days| {
            anchor
                .checked_sub_days(Days::new(*days))
                .map(partitions::start_of)
        })
        .chain(std::iter::once(None))
    {
        let wanted = limit - rows.len() as i64;
        if wanted <= 0 {
            break;
        }
        let mut query = check_results::table
            .filter(check_results::monitor_id.eq(monitor_id))
            .into_boxed();
        match region {
            Some(r) if r == uptime_contracts::regions::DEFAULT_REGION => {
                query = query.filter(
                    check_results::region
                        .eq(r)
                        .or(check_results::region.is_null()),
                )
            }
            Some(r) => query = query.filter(check_results::region.eq(r)),
            None => {}
        }
        if let Some(lower) = lower {
            query = query.filter(check_results::slot_at.ge(lower));
        }
        if let Some(newer) = newer {
            query = query.filter(check_results::slot_at.lt(newer));
        }
        if let Some(c) = before {
            // (slot_at, id) < (c.slot_at, c.id), with the first half as a
            // plain bound the planner prunes partitions with.
            query = query.filter(check_results::slot_at.le(c.slot_at)).filter(
                check_results::slot_at
                    .lt(c.slot_at)
                    .or(check_results::id.lt(c.id)),
            );
        }
        let found: Vec<(CheckResult, DateTime<Utc>)> = query
            .order((check_results::slot_at.desc(), check_results::id.desc()))
            .limit(wanted)
            .select((CheckResult::as_select(), check_results::slot_at))
            .load(conn)
            .await?;
        rows.extend(found.into_iter().map(|(r, slot_at)| {
            let id = r.id;
            (r, ResultCursor { slot_at, id })
        }));
        match lower {
            Some(lower) => newer = Some(lower),
            None => break,
        }
    }
    Ok(rows)
}

/// The rollup rows of a monitor for the UTC days `from..=to`, oldest first.
/// Days without checks have no row.
pub async fn daily(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    from: NaiveDate,
    to: NaiveDate,
) -> DbResult<Vec<DailyUptime>> {
    Ok(daily_uptime::table
        .filter(daily_uptime::monitor_id.eq(monitor_id))
        .filter(daily_uptime::day.between(from, to))
        .order(daily_uptime::day.asc())
        .select(DailyUptime::as_select())
        .load(conn)
        .await?)
}
