//! What an organisation's metrics endpoint (`GET /api/v1/metrics`) serves:
//! per monitor, its state and the figures the recorder already keeps (the
//! monitor row's runtime columns, the daily rollup), in one statement, so
//! a scrape costs one query however many monitors there are.

use crate::reach::Reach;
use crate::DbResult;
use chrono::{DateTime, NaiveDate, Utc};
use diesel::sql_types::{BigInt, Bool, Date, Integer, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// One monitor's figures. The uptime sums are over the daily rollup's UTC
/// days: `_1d` today so far, `_7d` and `_30d` the last 7 and 30 days,
/// today included.
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct MonitorFigures {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = Text)]
    pub name: String,
    #[diesel(sql_type = Text)]
    pub kind: String,
    #[diesel(sql_type = Text)]
    pub status: String,
    #[diesel(sql_type = Bool)]
    pub active: bool,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub last_checked_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Nullable<Integer>)]
    pub last_latency_ms: Option<i32>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub ssl_expires_at: Option<DateTime<Utc>>,
    #[diesel(sql_type = Integer)]
    pub consecutive_failures: i32,
    #[diesel(sql_type = BigInt)]
    pub total_1d: i64,
    #[diesel(sql_type = BigInt)]
    pub up_1d: i64,
    #[diesel(sql_type = BigInt)]
    pub total_7d: i64,
    #[diesel(sql_type = BigInt)]
    pub up_7d: i64,
    #[diesel(sql_type = BigInt)]
    pub total_30d: i64,
    #[diesel(sql_type = BigInt)]
    pub up_30d: i64,
}

/// The figures of the monitors the caller reaches, lowest id first, at
/// most `limit` of them; `today` is the UTC day the windows end on.
pub async fn monitor_figures(
    conn: &mut AsyncPgConnection,
    reach: Reach<'_>,
    today: NaiveDate,
    limit: i64,
) -> DbResult<Vec<MonitorFigures>> {
    // The rollup is read by its primary key (monitor_id, day) for the
    // organisation's monitors and 30 days, summed per window in one pass.
    let rows = diesel::sql_query(format!(
        "WITH picked AS ( \
             SELECT id FROM monitors p WHERE {} ORDER BY id LIMIT $3 \
         ), rollup AS ( \
             SELECT d.monitor_id, \
                 COALESCE(sum(d.total_checks) FILTER (WHERE d.day = $2), 0)::bigint AS total_1d, \
                 COALESCE(sum(d.up_checks) FILTER (WHERE d.day = $2), 0)::bigint AS up_1d, \
                 COALESCE(sum(d.total_checks) FILTER (WHERE d.day > $2 - 7), 0)::bigint AS total_7d, \
                 COALESCE(sum(d.up_checks) FILTER (WHERE d.day > $2 - 7), 0)::bigint AS up_7d, \
                 sum(d.total_checks)::bigint AS total_30d, \
                 sum(d.up_checks)::bigint AS up_30d \
             FROM daily_uptime d JOIN picked p ON p.id = d.monitor_id \
             WHERE d.day > $2 - 30 AND d.day <= $2 \
             GROUP BY d.monitor_id \
         ) \
         SELECT m.id, m.name, m.type AS kind, m.status, m.active, m.last_checked_at, \
             m.last_latency_ms, m.ssl_expires_at, m.consecutive_failures, \
             COALESCE(r.total_1d, 0) AS total_1d, COALESCE(r.up_1d, 0) AS up_1d, \
             COALESCE(r.total_7d, 0) AS total_7d, COALESCE(r.up_7d, 0) AS up_7d, \
             COALESCE(r.total_30d, 0) AS total_30d, COALESCE(r.up_30d, 0) AS up_30d \
         FROM picked p JOIN monitors m ON m.id = p.id \
         LEFT JOIN rollup r ON r.monitor_id = m.id \
         ORDER BY m.id",
        Reach::sql_test("p", "$1", "$4")
    ))
    .bind::<BigInt, _>(reach.org_id)
    .bind::<Date, _>(today)
    .bind::<BigInt, _>(limit)
    .bind::<Nullable<Jsonb>, _>(reach.bind())
    .load(conn)
    .await?;
    Ok(rows)
}
