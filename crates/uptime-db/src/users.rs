//! Users.

use crate::models::User;
use crate::schema::users;
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A new user, owner of a new organisation of their own whose id is the
/// user's id ([`crate::organisations::create_user_with_organisation`]).
pub async fn create(conn: &mut AsyncPgConnection, name: &str) -> DbResult<User> {
    Ok(
        crate::organisations::create_user_with_organisation(conn, name)
            .await?
            .0,
    )
}

/// The user with this id (when `id_or_name` is a number) or this name; an
/// error message when there is none or the name is ambiguous.
pub async fn find(
    conn: &mut AsyncPgConnection,
    id_or_name: &str,
) -> DbResult<Result<User, String>> {
    if let Ok(id) = id_or_name.parse::<i64>() {
        let found = users::table
            .find(id)
            .select(User::as_select())
            .first(conn)
            .await
            .optional()?;
        return Ok(found.ok_or_else(|| format!("no user with id {id}")));
    }
    let mut found: Vec<User> = users::table
        .filter(users::name.eq(id_or_name))
        .select(User::as_select())
        .limit(2)
        .load(conn)
        .await?;
    Ok(match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("no user named {id_or_name:?}")),
        _ => Err(format!(
            "several users are named {id_or_name:?}; give the id instead"
        )),
    })
}
