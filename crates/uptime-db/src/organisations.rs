//! Organisations and their members (migration 000017). An organisation owns
//! every resource (monitors, alert contacts, API keys, quotas); a user
//! belongs to organisations through a membership with a [`Role`].

use crate::models::User;
use crate::schema::{memberships, organisations, users};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use serde::{Deserialize, Serialize};

/// What a member may do in an organisation, widest first. Stored as its
/// lowercase name (`memberships.role`, checked by the table).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Read only.
    Viewer,
    /// Manages resources (monitors, contacts, their own keys), not members.
    Editor,
    /// Everything but what is the owner's alone.
    Admin,
    /// Members and owners, organisation-level settings, deleting it.
    Owner,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Owner, Role::Admin, Role::Editor, Role::Viewer];

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Owner => "owner",
            Role::Admin => "admin",
            Role::Editor => "editor",
            Role::Viewer => "viewer",
        }
    }

    pub fn parse(text: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.as_str() == text)
    }
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a key may do, narrowest first (`api_keys.scope`, migration 000018).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// Read everything of the organisation, change nothing.
    Read,
    /// Create, change and delete resources; issue and revoke one's own keys.
    Write,
    /// Everything a role allows, members and others' keys included.
    Admin,
}

impl Scope {
    pub const ALL: [Scope; 3] = [Scope::Read, Scope::Write, Scope::Admin];

    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Write => "write",
            Scope::Admin => "admin",
        }
    }

    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Queryable, Selectable)]
#[diesel(table_name = organisations)]
pub struct Organisation {
    pub id: i64,
    pub name: String,
    pub created_at: DateTime<Utc>,
}

/// A user and the organisation of their own they own (its id is the user's
/// id: both come from the users' sequence, migration 000017).
pub async fn create_user_with_organisation(
    conn: &mut AsyncPgConnection,
    name: &str,
) -> DbResult<(User, Organisation)> {
    let name = name.to_string();
    conn.transaction(|c| {
        async move {
            let user: User = diesel::insert_into(users::table)
                .values(users::name.eq(&name))
                .returning(User::as_returning())
                .get_result(c)
                .await?;
            let organisation: Organisation = diesel::insert_into(organisations::table)
                .values((organisations::id.eq(user.id), organisations::name.eq(&name)))
                .returning(Organisation::as_returning())
                .get_result(c)
                .await?;
            add_member(c, organisation.id, user.id, Role::Owner).await?;
            Ok::<_, crate::DbError>((user, organisation))
        }
        .scope_boxed()
    })
    .await
}

/// Makes `user_id` a member of `org_id` with `role`.
pub async fn add_member(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
    role: Role,
) -> DbResult<()> {
    diesel::insert_into(memberships::table)
        .values((
            memberships::org_id.eq(org_id),
            memberships::user_id.eq(user_id),
            memberships::role.eq(role.as_str()),
        ))
        .execute(conn)
        .await?;
    Ok(())
}

/// The role of `user_id` in `org_id`; `None` when they are not a member
/// (or the stored role is one this build does not know).
pub async fn role_of(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
) -> DbResult<Option<Role>> {
    let role: Option<String> = memberships::table
        .find((org_id, user_id))
        .select(memberships::role)
        .first(conn)
        .await
        .optional()?;
    Ok(role.as_deref().and_then(Role::parse))
}

/// The organisation with this id.
pub async fn get(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<Option<Organisation>> {
    Ok(organisations::table
        .find(org_id)
        .select(Organisation::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Renames the organisation; `None` when it does not exist.
pub async fn rename(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    name: &str,
) -> DbResult<Option<Organisation>> {
    Ok(diesel::update(organisations::table.find(org_id))
        .set(organisations::name.eq(name))
        .returning(Organisation::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}

/// How much an organisation holds, for its summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, QueryableByName)]
pub struct Counts {
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub members: i64,
    /// `organisations.monitor_count`, kept by triggers.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub monitors: i64,
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub alert_contacts: i64,
    /// Unrevoked keys of every member.
    #[diesel(sql_type = diesel::sql_types::BigInt)]
    pub api_keys: i64,
}

/// The organisation's counts, in one statement.
pub async fn counts(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<Counts> {
    Ok(diesel::sql_query(
        "SELECT (SELECT count(*) FROM memberships WHERE org_id = o.id) AS members,
                o.monitor_count AS monitors,
                (SELECT count(*) FROM alert_contacts WHERE org_id = o.id) AS alert_contacts,
                (SELECT count(*) FROM api_keys WHERE org_id = o.id AND revoked_at IS NULL) AS api_keys
           FROM organisations o WHERE o.id = $1",
    )
    .bind::<diesel::sql_types::BigInt, _>(org_id)
    .get_result(conn)
    .await?)
}

/// Deletes the organisation and everything that is its: one statement,
/// the rest by foreign keys with `ON DELETE CASCADE` (memberships and
/// their API keys, monitors with their contact links, rollups, rounds and
/// manual checks, alert contacts with their deliveries and attempts,
/// quotas, the verification-mail log, invitations and the audit log).
/// Check results and outbox rows have no foreign key: results stay,
/// unreachable, until retention drops their day's partition; outbox rows
/// are published (the audit entry of the deletion among them) and pruned
/// like every published row. Returns the keys
/// that were unrevoked, for the gateways' key caches; `None` when the
/// organisation does not exist.
pub async fn delete(
    conn: &mut AsyncPgConnection,
    org_id: i64,
) -> DbResult<Option<Vec<crate::models::ApiKey>>> {
    use crate::schema::api_keys;
    let keys = api_keys::table
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::revoked_at.is_null())
        .select(crate::models::ApiKey::as_select())
        .load(conn)
        .await?;
    let n = diesel::delete(organisations::table.find(org_id))
        .execute(conn)
        .await?;
    Ok((n == 1).then_some(keys))
}

/// The organisation with this id (when `id_or_name` is a number) or this
/// name; an error message when there is none or the name is ambiguous.
pub async fn find(
    conn: &mut AsyncPgConnection,
    id_or_name: &str,
) -> DbResult<Result<Organisation, String>> {
    if let Ok(id) = id_or_name.parse::<i64>() {
        return Ok(get(conn, id)
            .await?
            .ok_or_else(|| format!("no organisation with id {id}")));
    }
    let mut found: Vec<Organisation> = organisations::table
        .filter(organisations::name.eq(id_or_name))
        .select(Organisation::as_select())
        .limit(2)
        .load(conn)
        .await?;
    Ok(match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("no organisation named {id_or_name:?}")),
        _ => Err(format!(
            "several organisations are named {id_or_name:?}; give the id instead"
        )),
    })
}

#[cfg(test)]
mod tests {
    use super::{Role, Scope};

    #[test]
    fn roles_are_ordered_narrowest_first_and_round_trip_their_names() {
        assert!(Role::Viewer < Role::Editor && Role::Editor < Role::Admin);
        assert!(Role::Admin < Role::Owner);
        for role in Role::ALL {
            assert_eq!(Role::parse(role.as_str()), Some(role));
        }
        assert_eq!(Role::parse("root"), None);
        assert!(Scope::Read < Scope::Write && Scope::Write < Scope::Admin);
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
    }
}
