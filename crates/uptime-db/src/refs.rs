//! Resource refs: the caller-chosen stable name of a monitor, alert contact,
//! maintenance window, status page or escalation policy (migration 000047),
//! unique per organisation and kind, immutable once set.
//!
//! The column lives beside each kind's row but in none of the row models:
//! every reader of a model (scheduler, recorder, status pages) would pay for
//! a field only the API shows. The API reads refs here, one query for any
//! number of rows, and writes them in the transaction of the row's write.

use crate::DbResult;
use diesel::sql_types::{Array, BigInt, Text};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use std::collections::HashMap;

/// A kind of resource that carries a ref.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RefKind {
    Monitor,
    AlertContact,
    MaintenanceWindow,
    StatusPage,
    EscalationPolicy,
}

impl RefKind {
    /// The kind's table (a fixed name, never input).
    pub fn table(self) -> &'static str {
        match self {
            RefKind::Monitor => "monitors",
            RefKind::AlertContact => "alert_contacts",
            RefKind::MaintenanceWindow => "maintenance_windows",
            RefKind::StatusPage => "status_pages",
            RefKind::EscalationPolicy => "escalation_policies",
        }
    }
}

/// Why a ref could not be written.
#[derive(Debug, thiserror::Error)]
pub enum RefError {
    /// Another resource of the organisation and kind has it.
    #[error("ref already taken")]
    Taken,
    #[error(transparent)]
    Db(#[from] crate::DbError),
}

impl From<diesel::result::Error> for RefError {
    fn from(e: diesel::result::Error) -> Self {
        use diesel::result::{DatabaseErrorKind, Error};
        match e {
            Error::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => RefError::Taken,
            other => RefError::Db(other.into()),
        }
    }
}

#[derive(QueryableByName)]
struct IdRef {
    #[diesel(sql_type = BigInt)]
    id: i64,
    #[diesel(sql_type = Text)]
    r#ref: String,
}

#[derive(QueryableByName)]
struct Id {
    #[diesel(sql_type = BigInt)]
    id: i64,
}

/// The refs of those of `ids` that have one (one query).
pub async fn of(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    ids: &[i64],
) -> DbResult<HashMap<i64, String>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let rows: Vec<IdRef> = diesel::sql_query(format!(
        "SELECT id, ref FROM {} WHERE id = ANY($1) AND ref IS NOT NULL",
        kind.table()
    ))
    .bind::<Array<BigInt>, _>(ids)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.r#ref)).collect())
}

/// The ref of one row, if it has one.
pub async fn of_one(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    id: i64,
) -> DbResult<Option<String>> {
    Ok(of(conn, kind, &[id]).await?.remove(&id))
}

/// The id of the organisation's resource of `kind` with this ref.
pub async fn find(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    org_id: i64,
    r#ref: &str,
) -> DbResult<Option<i64>> {
    let rows: Vec<Id> = diesel::sql_query(format!(
        "SELECT id FROM {} WHERE org_id = $1 AND ref = $2",
        kind.table()
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(r#ref)
    .load(conn)
    .await?;
    Ok(rows.into_iter().next().map(|r| r.id))
}

/// Every `(id, ref)` of the organisation's resources of `kind` that carry a
/// ref, in id order (one query; the partial unique index holds just these).
pub async fn all(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    org_id: i64,
) -> DbResult<Vec<(i64, String)>> {
    let rows: Vec<IdRef> = diesel::sql_query(format!(
        "SELECT id, ref FROM {} WHERE org_id = $1 AND ref IS NOT NULL ORDER BY id",
        kind.table()
    ))
    .bind::<BigInt, _>(org_id)
    .load(conn)
    .await?;
    Ok(rows.into_iter().map(|r| (r.id, r.r#ref)).collect())
}

/// Gives the organisation's row `id` of `kind` the ref (the caller checked
/// the syntax and that the row has none yet). [`RefError::Taken`] when
/// another row of the organisation and kind has it; the statement then
/// failed, which aborts the caller's transaction.
pub async fn set(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    org_id: i64,
    id: i64,
    r#ref: &str,
) -> Result<(), RefError> {
    set_many(conn, kind, org_id, &[id], &[r#ref.to_string()]).await
}

/// [`set`] for many rows in one statement: `ids[i]` gets `refs[i]`.
pub async fn set_many(
    conn: &mut AsyncPgConnection,
    kind: RefKind,
    org_id: i64,
    ids: &[i64],
    refs: &[String],
) -> Result<(), RefError> {
    if ids.is_empty() {
        return Ok(());
    }
    diesel::sql_query(format!(
        "UPDATE {table} AS t SET ref = given.ref \
         FROM unnest($1::bigint[], $2::text[]) AS given(id, ref) \
         WHERE t.id = given.id AND t.org_id = $3",
        table = kind.table()
    ))
    .bind::<Array<BigInt>, _>(ids)
    .bind::<Array<Text>, _>(refs)
    .bind::<BigInt, _>(org_id)
    .execute(conn)
    .await?;
    Ok(())
}

/// The organisation's monitors among `ids`, locked until the transaction
/// ends, in id order: one query however many (an apply reads every
/// monitor it manages at once, never one by one).
pub async fn monitors_locked(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    ids: &[i64],
) -> DbResult<Vec<crate::models::Monitor>> {
    use crate::schema::monitors;
    use diesel::{ExpressionMethods, QueryDsl, SelectableHelper};
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(monitors::table
        .filter(monitors::org_id.eq(org_id))
        .filter(monitors::id.eq_any(ids))
        .order(monitors::id.asc())
        .select(crate::models::Monitor::as_select())
        .for_update()
        .load(conn)
        .await?)
}

/// [`monitors_locked`] for alert contacts.
pub async fn contacts_locked(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    ids: &[i64],
) -> DbResult<Vec<crate::models::AlertContact>> {
    use crate::schema::alert_contacts;
    use diesel::{ExpressionMethods, QueryDsl, SelectableHelper};
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(alert_contacts::table
        .filter(alert_contacts::org_id.eq(org_id))
        .filter(alert_contacts::id.eq_any(ids))
        .order(alert_contacts::id.asc())
        .select(crate::models::AlertContact::as_select())
        .for_update()
        .load(conn)
        .await?)
}
