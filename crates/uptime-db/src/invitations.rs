//! Invitations to join an organisation (migration 000020). Only the token's
//! SHA-256 is stored. An invitation is open until it is accepted, revoked
//! or expires; [`accept`] settles it in one statement, so a token works
//! once even when two requests race. Inviting an address again replaces its
//! open invitation (a unique index allows one per address and organisation).
//! Pruned by [`delete_ended_before`] (uptime-retention).

use crate::organisations::Role;
use crate::schema::invitations;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::pg::Pg;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

#[derive(Debug, Clone, PartialEq, Queryable, Selectable)]
#[diesel(table_name = invitations)]
pub struct Invitation {
    pub id: i64,
    pub org_id: i64,
    pub email: String,
    /// `owner`, `admin`, `editor` or `viewer` ([`Role`]).
    pub role: String,
    pub token_sha256: String,
    pub invited_by: i64,
    pub created_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub accepted_at: Option<DateTime<Utc>>,
    pub accepted_by: Option<i64>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl Invitation {
    /// The role the invitee gets (`None`: one this build does not know).
    pub fn role(&self) -> Option<Role> {
        Role::parse(&self.role)
    }
}

/// What [`create`] stores.
#[derive(Debug, Clone)]
pub struct NewInvitation<'a> {
    pub org_id: i64,
    pub email: &'a str,
    pub role: Role,
    pub token_sha256: &'a str,
    pub invited_by: i64,
    pub expires_at: DateTime<Utc>,
}

/// Revokes the address's open invitation to the organisation, if any, and
/// stores the new one. Returns (the new invitation, the one it replaced).
/// Call it in a transaction: both statements must land together.
pub async fn create(
    conn: &mut AsyncPgConnection,
    new: NewInvitation<'_>,
) -> DbResult<(Invitation, Option<Invitation>)> {
    let replaced: Option<Invitation> = diesel::update(invitations::table)
        .filter(invitations::org_id.eq(new.org_id))
        // Addresses are stored lowercased (the api-gateway normalises them).
        .filter(invitations::email.eq(new.email))
        .filter(invitations::accepted_at.is_null())
        .filter(invitations::revoked_at.is_null())
        .set(invitations::revoked_at.eq(diesel::dsl::now))
        .returning(Invitation::as_returning())
        .get_result(conn)
        .await
        .optional()?;
    let created: Invitation = diesel::insert_into(invitations::table)
        .values((
            invitations::org_id.eq(new.org_id),
            invitations::email.eq(new.email),
            invitations::role.eq(new.role.as_str()),
            invitations::token_sha256.eq(new.token_sha256),
            invitations::invited_by.eq(new.invited_by),
            invitations::expires_at.eq(new.expires_at),
        ))
        .returning(Invitation::as_returning())
        .get_result(conn)
        .await?;
    Ok((created, replaced))
}

/// The organisation's open invitations (neither accepted nor revoked, not
/// expired at `now`) by id, after `after_id`, at most `limit`.
pub async fn list_open_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    now: DateTime<Utc>,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<Invitation>> {
    Ok(invitations::table
        .filter(invitations::org_id.eq(org_id))
        .filter(open_at(now))
        .filter(invitations::id.gt(after_id.unwrap_or(i64::MIN)))
        .order(invitations::id.asc())
        .limit(limit)
        .select(Invitation::as_select())
        .load(conn)
        .await?)
}

/// Open at `now`: neither accepted nor revoked, and not expired. The one
/// rule every read and every settlement of an open invitation applies.
#[diesel::dsl::auto_type]
pub(crate) fn open_at(now: DateTime<Utc>) -> _ {
    invitations::accepted_at
        .is_null()
        .and(invitations::revoked_at.is_null())
        .and(invitations::expires_at.gt(now))
}

/// The organisation's open invitation `id` at `now`; `None` when there is
/// no such open one.
pub async fn get_open(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    now: DateTime<Utc>,
) -> DbResult<Option<Invitation>> {
    let picked = invitations::table
        .filter(invitations::id.eq(id))
        .filter(invitations::org_id.eq(org_id));
    first_open(conn, picked.into_boxed(), now).await
}

/// The first of the invitations `picked` that is open at `now`.
async fn first_open(
    conn: &mut AsyncPgConnection,
    picked: invitations::BoxedQuery<'_, Pg>,
    now: DateTime<Utc>,
) -> DbResult<Option<Invitation>> {
    Ok(picked
        .filter(open_at(now))
        .select(Invitation::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// How many open invitations the organisation has at `now`.
pub async fn count_open(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    now: DateTime<Utc>,
) -> DbResult<i64> {
    Ok(invitations::table
        .filter(invitations::org_id.eq(org_id))
        .filter(open_at(now))
        .count()
        .get_result(conn)
        .await?)
}

/// Revokes the organisation's open invitation `id`; `None` when there is no
/// such open one (an expired one is still revoked: its link dies either way).
pub async fn revoke(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
) -> DbResult<Option<Invitation>> {
    Ok(diesel::update(invitations::table)
        .filter(invitations::id.eq(id))
        .filter(invitations::org_id.eq(org_id))
        .filter(invitations::accepted_at.is_null())
        .filter(invitations::revoked_at.is_null())
        .set(invitations::revoked_at.eq(diesel::dsl::now))
        .returning(Invitation::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// Settles the open, unexpired invitation with this token digest as
/// accepted by `user_id` at `now` and returns it; `None` when there is none
/// (unknown, used, revoked or expired). One statement: a token works once.
pub async fn accept(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
    user_id: i64,
    now: DateTime<Utc>,
) -> DbResult<Option<Invitation>> {
    Ok(diesel::update(invitations::table)
        .filter(invitations::token_sha256.eq(token_sha256))
        .filter(open_at(now))
        .set((
            invitations::accepted_at.eq(now),
            invitations::accepted_by.eq(user_id),
        ))
        .returning(Invitation::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// The open, unexpired invitation with this token digest, without settling
/// it (to learn its organisation before deciding who accepts).
pub async fn find_open(
    conn: &mut AsyncPgConnection,
    token_sha256: &str,
    now: DateTime<Utc>,
) -> DbResult<Option<Invitation>> {
    let picked = invitations::table.filter(invitations::token_sha256.eq(token_sha256));
    first_open(conn, picked.into_boxed(), now).await
}

crate::retention::delete_batch_fn! {
    /// Retention: removes at most `limit` invitations that ended (were
    /// accepted, revoked or expired) before `before`; returns how many.
    pub fn delete_ended_before(before): "invitations"
        where "coalesce(accepted_at, revoked_at, expires_at) < $1"
}
