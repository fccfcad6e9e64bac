//! Notices of status pages (migration 2026-11-27-000039): written by the
//! api-gateway ([`create`], [`add_update`], [`delete`]), read by it
//! ([`list`], [`get`]) and by the status-pages service ([`load_all`], one
//! statement per table per refresh).

use crate::owned_rows::OwnedTable;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{Array, BigInt, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct Notice {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub page_id: i64,
    #[diesel(sql_type = BigInt)]
    pub org_id: i64,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Text)]
    pub state: String,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
    #[diesel(sql_type = Nullable<Timestamptz>)]
    pub resolved_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct NoticeUpdate {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub notice_id: i64,
    #[diesel(sql_type = Text)]
    pub state: String,
    #[diesel(sql_type = Text)]
    pub body: String,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
}

const NOTICE: &str = "id, page_id, org_id, title, state, created_at, updated_at, resolved_at";

/// A page's notices, by id.
const NOTICES: OwnedTable = OwnedTable {
    table: "status_page_notices",
    owner: "page_id",
    columns: NOTICE,
};
const UPDATE: &str = "id, notice_id, state, body, created_at";

/// A new notice with its first update; then, past `keep` notices on the
/// page, the oldest resolved ones are deleted (the table's retention).
pub async fn create(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    page_id: i64,
    title: &str,
    state: &str,
    body: &str,
    keep: i64,
) -> DbResult<(Notice, NoticeUpdate)> {
    let notice: Notice = diesel::sql_query(format!(
        "INSERT INTO status_page_notices (page_id, org_id, title, state, resolved_at) \
         VALUES ($1, $2, $3, $4, CASE WHEN $4 = 'resolved' THEN now() END) RETURNING {NOTICE}"
    ))
    .bind::<BigInt, _>(page_id)
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(title)
    .bind::<Text, _>(state)
    .get_result(conn)
    .await?;
    let update: NoticeUpdate = diesel::sql_query(format!(
        "INSERT INTO status_page_notice_updates (notice_id, state, body) VALUES ($1, $2, $3) \
         RETURNING {UPDATE}"
    ))
    .bind::<BigInt, _>(notice.id)
    .bind::<Text, _>(state)
    .bind::<Text, _>(body)
    .get_result(conn)
    .await?;
    diesel::sql_query(
        "DELETE FROM status_page_notices WHERE id IN ( \
           SELECT id FROM status_page_notices WHERE page_id = $1 AND resolved_at IS NOT NULL \
           ORDER BY id DESC OFFSET GREATEST($2 - (SELECT count(*) FROM status_page_notices \
             WHERE page_id = $1 AND resolved_at IS NULL), 0))",
    )
    .bind::<BigInt, _>(page_id)
    .bind::<BigInt, _>(keep)
    .execute(conn)
    .await?;
    Ok((notice, update))
}

/// Adds an update (the notice takes its state); `None` when the notice is
/// not the page's.
pub async fn add_update(
    conn: &mut AsyncPgConnection,
    page_id: i64,
    notice_id: i64,
    state: &str,
    body: &str,
) -> DbResult<Option<NoticeUpdate>> {
    let changed = diesel::sql_query(
        "UPDATE status_page_notices SET state = $3, updated_at = now(), \
           resolved_at = CASE WHEN $3 = 'resolved' THEN COALESCE(resolved_at, now()) END \
         WHERE page_id = $1 AND id = $2",
    )
    .bind::<BigInt, _>(page_id)
    .bind::<BigInt, _>(notice_id)
    .bind::<Text, _>(state)
    .execute(conn)
    .await?;
    if changed == 0 {
        return Ok(None);
    }
    let update: NoticeUpdate = diesel::sql_query(format!(
        "INSERT INTO status_page_notice_updates (notice_id, state, body) VALUES ($1, $2, $3) \
         RETURNING {UPDATE}"
    ))
    .bind::<BigInt, _>(notice_id)
    .bind::<Text, _>(state)
    .bind::<Text, _>(body)
    .get_result(conn)
    .await?;
    Ok(Some(update))
}

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// How many updates a notice has.
pub async fn update_count(conn: &mut AsyncPgConnection, notice_id: i64) -> DbResult<i64> {
    let row: Count = diesel::sql_query(
        "SELECT count(*) AS n FROM status_page_notice_updates WHERE notice_id = $1",
    )
    .bind::<BigInt, _>(notice_id)
    .get_result(conn)
    .await?;
    Ok(row.n)
}

// `get`, `list` and `delete` (a notice goes with its updates).
crate::owned_rows::owned_table_fns!(NOTICES, Notice; get, page list, delete);

/// The updates of `notice_ids`, oldest first.
pub async fn updates_of(
    conn: &mut AsyncPgConnection,
    notice_ids: &[i64],
) -> DbResult<Vec<NoticeUpdate>> {
    Ok(diesel::sql_query(format!(
        "SELECT {UPDATE} FROM status_page_notice_updates WHERE notice_id = ANY($1) ORDER BY id"
    ))
    .bind::<Array<BigInt>, _>(notice_ids)
    .load(conn)
    .await?)
}

/// Every notice and every update (bounded per page and per notice): the
/// status-pages service's refresh, two statements.
pub async fn load_all(conn: &mut AsyncPgConnection) -> DbResult<(Vec<Notice>, Vec<NoticeUpdate>)> {
    let notices = diesel::sql_query(format!(
        "SELECT {NOTICE} FROM status_page_notices ORDER BY id"
    ))
    .load(conn)
    .await?;
    let updates = diesel::sql_query(format!(
        "SELECT {UPDATE} FROM status_page_notice_updates ORDER BY id"
    ))
    .load(conn)
    .await?;
    Ok((notices, updates))
}
