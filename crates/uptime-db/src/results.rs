//! Reading check results and the daily uptime rollup (the API's side; the
//! recorder writes them through [`crate::recording`]).

use crate::models::{CheckResult, DailyUptime};
use crate::schema::{check_results, daily_uptime};
use crate::DbResult;
use chrono::NaiveDate;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// Up to `limit` results of a monitor, newest first, with ids below `before`
/// (keyset pagination on the `(monitor_id, id DESC)` index, so deep pages cost
/// the same as the first).
pub async fn page(
    conn: &mut AsyncPgConnection,
    monitor_id: i64,
    before: Option<i64>,
    limit: i64,
) -> DbResult<Vec<CheckResult>> {
    let mut query = check_results::table
        .filter(check_results::monitor_id.eq(monitor_id))
        .into_boxed();
    if let Some(before) = before {
        query = query.filter(check_results::id.lt(before));
    }
    Ok(query
        .order(check_results::id.desc())
        .limit(limit)
        .select(CheckResult::as_select())
        .load(conn)
        .await?)
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
