//! Per-user quotas: the operator's overrides (`user_quotas`) and the counts
//! they are compared with. A check that must hold against concurrent creates
//! runs [`lock_for_quota`] first, in the transaction that inserts.

use crate::schema::{alert_contacts, api_keys, user_quotas, users};
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// One user's overrides; `None` = the configured default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Queryable, Selectable)]
#[diesel(table_name = user_quotas)]
pub struct QuotaOverrides {
    pub monitors: Option<i64>,
    pub alert_contacts: Option<i64>,
    pub api_keys: Option<i64>,
}

/// What a user owns, per quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owned {
    Monitors,
    AlertContacts,
    /// Unrevoked keys only: revoking one frees its place.
    ApiKeys,
}

/// Locks the user's row until the transaction ends, so concurrent creates of
/// one user are counted one after the other. `false` if there is no such user.
pub async fn lock_user(conn: &mut AsyncPgConnection, user_id: i64) -> DbResult<bool> {
    let found: Option<i64> = users::table
        .find(user_id)
        .select(users::id)
        .for_update()
        .first(conn)
        .await
        .optional()?;
    Ok(found.is_some())
}

#[derive(QueryableByName)]
struct LockedUser {
    #[diesel(sql_type = diesel::sql_types::Int8)]
    monitor_count: i64,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Int8>)]
    monitors: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Int8>)]
    alert_contacts: Option<i64>,
    #[diesel(sql_type = diesel::sql_types::Nullable<diesel::sql_types::Int8>)]
    api_keys: Option<i64>,
}

/// What a quota decision needs: the user's overrides and how many of `what`
/// they own, read with the user's row locked (as [`lock_user`]) until the
/// transaction ends. The row, its overrides and the kept monitor count come
/// in one statement; other counts take a second. A user that does not
/// exist has no overrides and owns nothing (the insert that follows fails
/// on its foreign key).
pub async fn lock_for_quota(
    conn: &mut AsyncPgConnection,
    user_id: i64,
    what: Owned,
) -> DbResult<(QuotaOverrides, i64)> {
    let locked: Option<LockedUser> = diesel::sql_query(
        "SELECT u.monitor_count, q.monitors, q.alert_contacts, q.api_keys \
         FROM users u LEFT JOIN user_quotas q ON q.user_id = u.id \
         WHERE u.id = $1 FOR UPDATE OF u",
    )
    .bind::<diesel::sql_types::Int8, _>(user_id)
    .get_result(conn)
    .await
    .optional()?;
    let Some(locked) = locked else {
        return Ok((QuotaOverrides::default(), 0));
    };
    let overrides = QuotaOverrides {
        monitors: locked.monitors,
        alert_contacts: locked.alert_contacts,
        api_keys: locked.api_keys,
    };
    let owned = match what {
        Owned::Monitors => locked.monitor_count,
        other => count(conn, user_id, other).await?,
    };
    Ok((overrides, owned))
}

pub async fn count(conn: &mut AsyncPgConnection, user_id: i64, what: Owned) -> DbResult<i64> {
    Ok(match what {
        // Kept by triggers on monitors (migration 000011): one row read
        // instead of a scan of every monitor the user has.
        Owned::Monitors => users::table
            .find(user_id)
            .select(users::monitor_count)
            .first::<i64>(conn)
            .await
            .optional()?
            .unwrap_or(0),
        Owned::AlertContacts => {
            alert_contacts::table
                .filter(alert_contacts::user_id.eq(user_id))
                .count()
                .get_result(conn)
                .await?
        }
        Owned::ApiKeys => {
            api_keys::table
                .filter(api_keys::user_id.eq(user_id))
                .filter(api_keys::revoked_at.is_null())
                .count()
                .get_result(conn)
                .await?
        }
    })
}

/// Sets the overrides given (`Some`), keeps the others; returns them all.
pub async fn set(
    conn: &mut AsyncPgConnection,
    user_id: i64,
    changes: &QuotaOverrides,
) -> DbResult<QuotaOverrides> {
    use diesel::upsert::excluded;
    Ok(diesel::insert_into(user_quotas::table)
        .values((
            user_quotas::user_id.eq(user_id),
            user_quotas::monitors.eq(changes.monitors),
            user_quotas::alert_contacts.eq(changes.alert_contacts),
            user_quotas::api_keys.eq(changes.api_keys),
        ))
        .on_conflict(user_quotas::user_id)
        .do_update()
        .set((
            user_quotas::monitors.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.monitors, user_quotas.monitors)"
            )),
            user_quotas::alert_contacts.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.alert_contacts, user_quotas.alert_contacts)",
            )),
            user_quotas::api_keys.eq(diesel::dsl::sql::<
                diesel::sql_types::Nullable<diesel::sql_types::Int8>,
            >(
                "COALESCE(excluded.api_keys, user_quotas.api_keys)"
            )),
            user_quotas::updated_at.eq(excluded(user_quotas::updated_at)),
        ))
        .returning(QuotaOverrides::as_returning())
        .get_result(conn)
        .await?)
}
