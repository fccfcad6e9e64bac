//! Users.

use crate::models::User;
use crate::schema::users;
use crate::DbResult;
use diesel::prelude::*;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

pub async fn create(conn: &mut AsyncPgConnection, name: &str) -> DbResult<User> {
    Ok(diesel::insert_into(users::table)
        .values(users::name.eq(name))
        .returning(User::as_returning())
        .get_result(conn)
        .await?)
}
