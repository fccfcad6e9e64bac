//! The by-id and keyset-page statements of tables whose rows belong to an
//! owner (an organisation, a status page), written once: [`OwnedTable`]
//! for the tables read with `sql_query` (rows `QueryableByName`), and
//! `org_row_by_id!` for the Diesel tables whose rows are `Selectable`.
//! The owner is always part of the filter: another owner's row is one that
//! does not exist.

use crate::DbResult;
use diesel::deserialize::QueryableByName;
use diesel::pg::Pg;
use diesel::sql_types::BigInt;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A table of owned rows: its name, the column naming the owner, and the
/// columns a row is read with.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OwnedTable {
    pub table: &'static str,
    pub owner: &'static str,
    pub columns: &'static str,
}

/// What [`OwnedTable::by_id`] does with the row.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ById {
    /// Reads it; `for_update` locks it until the transaction ends.
    Read { for_update: bool },
    /// Deletes it, returning it.
    Delete,
}

impl OwnedTable {
    /// The owner's row `id`, read or deleted; `None` when there is none.
    pub async fn by_id<Row>(
        &self,
        conn: &mut AsyncPgConnection,
        owner_id: i64,
        id: i64,
        what: ById,
    ) -> DbResult<Option<Row>>
    where
        Row: QueryableByName<Pg> + Send + 'static,
    {
        let Self {
            table,
            owner,
            columns,
        } = self;
        let statement = match what {
            ById::Read { for_update } => {
                let lock = if for_update { " FOR UPDATE" } else { "" };
                format!("SELECT {columns} FROM {table} WHERE {owner} = $1 AND id = $2{lock}")
            }
            ById::Delete => {
                format!("DELETE FROM {table} WHERE {owner} = $1 AND id = $2 RETURNING {columns}")
            }
        };
        let rows: Vec<Row> = diesel::sql_query(statement)
            .bind::<BigInt, _>(owner_id)
            .bind::<BigInt, _>(id)
            .load(conn)
            .await?;
        Ok(rows.into_iter().next())
    }

    /// The owner's rows with ids above `after_id`, by id, at most `limit`.
    pub async fn page<Row>(
        &self,
        conn: &mut AsyncPgConnection,
        owner_id: i64,
        after_id: i64,
        limit: i64,
    ) -> DbResult<Vec<Row>>
    where
        Row: QueryableByName<Pg> + Send + 'static,
    {
        let Self {
            table,
            owner,
            columns,
        } = self;
        Ok(diesel::sql_query(format!(
            "SELECT {columns} FROM {table} WHERE {owner} = $1 AND id > $2 ORDER BY id LIMIT $3"
        ))
        .bind::<BigInt, _>(owner_id)
        .bind::<BigInt, _>(after_id)
        .bind::<BigInt, _>(limit)
        .load(conn)
        .await?)
    }
}

/// `get`, `get_for_update` and `delete` of an organisation's row by id, for
/// a table with `id` and `org_id` columns and its `Selectable` row: the
/// queries every kind that carries nothing else to check (alert contacts,
/// maintenance windows) runs the same way. The module invoking it imports
/// `diesel::prelude::*` and `diesel_async::RunQueryDsl`.
macro_rules! org_row_by_id {
    ($table:ident, $row:ty) => {
        $crate::owned_rows::org_row_by_id!(@get $table, $row,
            /// The organisation's row with this id.
            get);
        $crate::owned_rows::org_row_by_id!(@get $table, $row,
            /// Like [`get`], but locks the row until the transaction ends,
            /// for a read-modify-write that must not interleave with
            /// another one.
            get_for_update for_update);

        /// Deletes the organisation's row (what references it with a
        /// cascade goes with it); `false` when there is no such row of
        /// theirs.
        pub async fn delete(
            conn: &mut diesel_async::AsyncPgConnection,
            org_id: i64,
            id: i64,
        ) -> $crate::DbResult<bool> {
            let n = diesel::delete(
                $table::table
                    .filter($table::org_id.eq(org_id))
                    .filter($table::id.eq(id)),
            )
            .execute(conn)
            .await?;
            Ok(n > 0)
        }
    };
    (@get $table:ident, $row:ty, $(#[$doc:meta])* $name:ident $($lock:ident)?) => {
        $(#[$doc])*
        pub async fn $name(
            conn: &mut diesel_async::AsyncPgConnection,
            org_id: i64,
            id: i64,
        ) -> $crate::DbResult<Option<$row>> {
            Ok($table::table
                .filter($table::org_id.eq(org_id))
                .filter($table::id.eq(id))
                .select(<$row>::as_select())
                $(.$lock())?
                .first(conn)
                .await
                .optional()?)
        }
    };
}
pub(crate) use org_row_by_id;

/// The public functions of an [`OwnedTable`] (`$rows`, of `$row`s) its
/// module offers, each named as the module's callers know it: `get` (one
/// row, `for_update` locking it), `page NAME` (a keyset page) and `delete`
/// (the deleted row).
macro_rules! owned_table_fns {
    ($rows:ident, $row:ty;) => {};
    ($rows:ident, $row:ty; get $(, $($rest:tt)*)?) => {
        /// The owner's row `id`; `for_update` locks it for a
        /// read-modify-write.
        pub async fn get(
            conn: &mut diesel_async::AsyncPgConnection,
            owner_id: i64,
            id: i64,
            for_update: bool,
        ) -> $crate::DbResult<Option<$row>> {
            $rows
                .by_id(conn, owner_id, id, $crate::owned_rows::ById::Read { for_update })
                .await
        }
        $crate::owned_rows::owned_table_fns!($rows, $row; $($($rest)*)?);
    };
    ($rows:ident, $row:ty; page $name:ident $(, $($rest:tt)*)?) => {
        /// The owner's rows with ids above `after_id`, by id, at most `limit`.
        pub async fn $name(
            conn: &mut diesel_async::AsyncPgConnection,
            owner_id: i64,
            after_id: i64,
            limit: i64,
        ) -> $crate::DbResult<Vec<$row>> {
            $rows.page(conn, owner_id, after_id, limit).await
        }
        $crate::owned_rows::owned_table_fns!($rows, $row; $($($rest)*)?);
    };
    ($rows:ident, $row:ty; delete $(, $($rest:tt)*)?) => {
        /// Deletes the owner's row `id` (what references it with a cascade
        /// goes with it); the deleted row, `None` when there was none.
        pub async fn delete(
            conn: &mut diesel_async::AsyncPgConnection,
            owner_id: i64,
            id: i64,
        ) -> $crate::DbResult<Option<$row>> {
            $rows
                .by_id(conn, owner_id, id, $crate::owned_rows::ById::Delete)
                .await
        }
        $crate::owned_rows::owned_table_fns!($rows, $row; $($($rest)*)?);
    };
}
pub(crate) use owned_table_fns;
