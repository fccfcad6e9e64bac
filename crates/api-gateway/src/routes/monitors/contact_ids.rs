//! The alert contacts a monitor names: checked to be the organisation's
//! (and locked until the write commits) before a create, PATCH, bulk create
//! or apply stores them.

use crate::error::ApiError;
use diesel_async::AsyncPgConnection;

/// The ids sorted and deduplicated, or 400 naming those that are not the
/// user's contacts. Locks the contacts found until the transaction ends.
pub(super) async fn checked_contact_ids(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    mut ids: Vec<i64>,
) -> Result<Vec<i64>, ApiError> {
    ids.sort_unstable();
    ids.dedup();
    let owned = uptime_db::contacts::owned_ids_locked(conn, org_id, &ids).await?;
    match no_such_contacts(&ids, &owned) {
        None => Ok(ids),
        Some(message) => Err(ApiError::invalid_field("alert_contact_ids", message)),
    }
}

/// The problem with `ids` when only `owned` are the user's contacts, if any.
pub(super) fn no_such_contacts(ids: &[i64], owned: &[i64]) -> Option<String> {
    let unknown: Vec<String> = ids
        .iter()
        .filter(|id| !owned.contains(id))
        .map(|id| id.to_string())
        .collect();
    (!unknown.is_empty()).then(|| format!("no such alert contact: {}", unknown.join(", ")))
}
