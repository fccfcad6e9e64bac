//! An organisation's members (`memberships`, migration 000017): listed,
//! their role changed, removed. A member's API keys belong to the
//! membership (a foreign key with `ON DELETE CASCADE`), so removing a
//! member removes their keys of that organisation; the functions that
//! change a membership return those keys, for the gateways' key caches.
//!
//! Decisions about owners ("the last owner cannot leave") are made with the
//! organisation's row locked ([`lock`]), so two concurrent demotions of the
//! last two owners cannot both pass.

use crate::models::{ApiKey, User};
use crate::organisations::Role;
use crate::schema::{api_keys, memberships, users};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A member as listed: the user, their role and when they joined.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    pub user_id: i64,
    pub name: String,
    /// `None` when the stored role is one this build does not know.
    pub role: Option<Role>,
    pub joined_at: DateTime<Utc>,
}

type MemberRow = (User, String, DateTime<Utc>);

fn member((user, role, joined_at): MemberRow) -> Member {
    Member {
        user_id: user.id,
        name: user.name,
        role: Role::parse(&role),
        joined_at,
    }
}

/// The organisation's members by user id, after `after_user_id`, at most
/// `limit`.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    after_user_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<Member>> {
    let rows: Vec<MemberRow> = memberships::table
        .inner_join(users::table.on(users::id.eq(memberships::user_id)))
        .filter(memberships::org_id.eq(org_id))
        .filter(memberships::user_id.gt(after_user_id.unwrap_or(i64::MIN)))
        .order(memberships::user_id.asc())
        .limit(limit)
        .select((
            User::as_select(),
            memberships::role,
            memberships::created_at,
        ))
        .load(conn)
        .await?;
    Ok(rows.into_iter().map(member).collect())
}

/// One member of the organisation; `None` when `user_id` is not one.
pub async fn get(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
) -> DbResult<Option<Member>> {
    let row: Option<MemberRow> = memberships::table
        .inner_join(users::table.on(users::id.eq(memberships::user_id)))
        .filter(memberships::org_id.eq(org_id))
        .filter(memberships::user_id.eq(user_id))
        .select((
            User::as_select(),
            memberships::role,
            memberships::created_at,
        ))
        .first(conn)
        .await
        .optional()?;
    Ok(row.map(member))
}

/// Locks the organisation's row until the transaction ends: decisions about
/// its members (how many owners are left) are then made one at a time.
/// `false` when the organisation does not exist.
pub async fn lock(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<bool> {
    crate::quotas::lock_organisation(conn, org_id).await
}

/// How many owners the organisation has.
pub async fn owner_count(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<i64> {
    Ok(memberships::table
        .filter(memberships::org_id.eq(org_id))
        .filter(memberships::role.eq(Role::Owner.as_str()))
        .count()
        .get_result(conn)
        .await?)
}

/// How many members the organisation has.
pub async fn count(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<i64> {
    Ok(memberships::table
        .filter(memberships::org_id.eq(org_id))
        .count()
        .get_result(conn)
        .await?)
}

/// Sets the member's role; `false` when `user_id` is not a member.
pub async fn set_role(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
    role: Role,
) -> DbResult<bool> {
    let n = diesel::update(memberships::table.find((org_id, user_id)))
        .set(memberships::role.eq(role.as_str()))
        .execute(conn)
        .await?;
    Ok(n == 1)
}

/// The member's unrevoked keys of this organisation (what a role change or
/// a removal must make the gateways forget).
pub async fn keys_of(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
) -> DbResult<Vec<ApiKey>> {
    Ok(api_keys::table
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::user_id.eq(user_id))
        .filter(api_keys::revoked_at.is_null())
        .select(ApiKey::as_select())
        .load(conn)
        .await?)
}

/// Removes the member; their keys of the organisation go with the
/// membership (foreign key, cascade) and are returned. `None` when
/// `user_id` is not a member.
pub async fn remove(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
) -> DbResult<Option<Vec<ApiKey>>> {
    let keys = keys_of(conn, org_id, user_id).await?;
    let n = diesel::delete(memberships::table.find((org_id, user_id)))
        .execute(conn)
        .await?;
    Ok((n == 1).then_some(keys))
}
