//! Alert contacts. Every query that takes an `org_id` is scoped to that organisation:
//! another organisation's contact is indistinguishable from one that does not exist.

use crate::models::{AlertContact, NewAlertContact};
use crate::schema::alert_contacts;
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

pub async fn create(conn: &mut AsyncPgConnection, new: &NewAlertContact) -> DbResult<AlertContact> {
    Ok(diesel::insert_into(alert_contacts::table)
        .values(new)
        .returning(AlertContact::as_returning())
        .get_result(conn)
        .await?)
}

// `get`, `get_for_update`, and `delete` (its links to monitors go with it).
crate::owned_rows::org_row_by_id!(alert_contacts, AlertContact);

/// One page of the organisation's contacts in id order: those with an id above
/// `after_id` (all when `None`), at most `limit`.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<AlertContact>> {
    list_page_filtered(conn, org_id, None, None, after_id, limit).await
}

/// [`list_page`] keeping only contacts of `kind` and whose name contains
/// `name_contains` (without case; `%`, `_` and backslashes literal).
pub async fn list_page_filtered(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    kind: Option<&str>,
    name_contains: Option<&str>,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<AlertContact>> {
    let mut query = alert_contacts::table
        .filter(alert_contacts::org_id.eq(org_id))
        .filter(alert_contacts::id.gt(after_id.unwrap_or(0)))
        .into_boxed();
    if let Some(kind) = kind {
        query = query.filter(alert_contacts::kind.eq(kind));
    }
    if let Some(part) = name_contains {
        query = query.filter(crate::contains_ignoring_case("alert_contacts.name", part));
    }
    Ok(query
        .order(alert_contacts::id.asc())
        .limit(limit)
        .select(AlertContact::as_select())
        .load(conn)
        .await?)
}

/// Which of `ids` are the organisation's contacts. The rows found are share-locked
/// until the transaction ends, so a contact cannot be deleted between this
/// check and linking it to a monitor (run it inside that transaction).
pub async fn owned_ids_locked(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    ids: &[i64],
) -> DbResult<Vec<i64>> {
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    Ok(alert_contacts::table
        .filter(alert_contacts::org_id.eq(org_id))
        .filter(alert_contacts::id.eq_any(ids))
        .select(alert_contacts::id)
        .for_share()
        .load(conn)
        .await?)
}

/// What a PATCH may change. `verified` and `verification_token_sha256` are
/// set together: changing an email address makes the contact unverified and
/// voids any outstanding verification link.
#[derive(Debug, Clone, AsChangeset)]
#[diesel(table_name = alert_contacts, treat_none_as_null = true)]
pub struct ContactUpdate {
    pub name: String,
    pub value: String,
    pub verified: bool,
    pub verification_token_sha256: Option<String>,
    pub secret_sealed: Option<String>,
    pub options: serde_json::Value,
    pub event_kinds: Option<Vec<String>>,
    pub min_severity: i16,
}

/// Applies `update` to the organisation's contact (and bumps `updated_at`); `None`
/// when there is no such contact of theirs.
pub async fn update(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    update: &ContactUpdate,
) -> DbResult<Option<AlertContact>> {
    Ok(diesel::update(alert_contacts::table)
        .filter(alert_contacts::id.eq(id))
        .filter(alert_contacts::org_id.eq(org_id))
        .set((update, alert_contacts::updated_at.eq(diesel::dsl::now)))
        .returning(AlertContact::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}
