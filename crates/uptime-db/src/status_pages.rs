//! Status pages and badge tokens (migration 2026-11-27-000035): the
//! api-gateway writes them ([`create`], [`update`], [`delete`],
//! [`set_access_token`], [`set_badge_token`]); the status-pages service reads
//! everything it shows in one set of statements per refresh
//! ([`crate::status_snapshot`]), never per page view.

use crate::owned_rows::OwnedTable;
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::sql_types::{BigInt, Jsonb, Nullable, Text, Timestamptz};
use diesel::QueryableByName;
use diesel_async::{AsyncPgConnection, RunQueryDsl};

/// A status page as stored (the access token only as its digest).
#[derive(Debug, Clone, PartialEq, QueryableByName)]
pub struct StatusPage {
    #[diesel(sql_type = BigInt)]
    pub id: i64,
    #[diesel(sql_type = BigInt)]
    pub org_id: i64,
    #[diesel(sql_type = Text)]
    pub slug: String,
    #[diesel(sql_type = Text)]
    pub title: String,
    #[diesel(sql_type = Nullable<Text>)]
    pub description: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub logo_url: Option<String>,
    #[diesel(sql_type = Nullable<Text>)]
    pub custom_domain: Option<String>,
    /// `[{"name", "monitor_ids", "selector"}]`, in order.
    #[diesel(sql_type = Jsonb)]
    pub groups: serde_json::Value,
    #[diesel(sql_type = Nullable<Text>)]
    pub access_token_sha256: Option<String>,
    #[diesel(sql_type = Timestamptz)]
    pub created_at: DateTime<Utc>,
    #[diesel(sql_type = Timestamptz)]
    pub updated_at: DateTime<Utc>,
}

/// What a page is made of (a create, or the whole page after an update).
#[derive(Debug, Clone)]
pub struct PageFields<'a> {
    pub slug: &'a str,
    pub title: &'a str,
    pub description: Option<&'a str>,
    pub logo_url: Option<&'a str>,
    pub custom_domain: Option<&'a str>,
    pub groups: &'a serde_json::Value,
}

const COLUMNS: &str = "id, org_id, slug, title, description, logo_url, custom_domain, groups, \
                       access_token_sha256, created_at, updated_at";

/// An organisation's pages, by id.
const PAGES: OwnedTable = OwnedTable {
    table: "status_pages",
    owner: "org_id",
    columns: COLUMNS,
};

/// Inserts a page; `None` when its slug or custom domain is taken.
pub async fn create(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    fields: &PageFields<'_>,
    access_token_sha256: Option<&str>,
) -> DbResult<Option<StatusPage>> {
    let rows: Vec<StatusPage> = diesel::sql_query(format!(
        "INSERT INTO status_pages (org_id, slug, title, description, logo_url, custom_domain, \
           groups, access_token_sha256) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
         ON CONFLICT DO NOTHING RETURNING {COLUMNS}"
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<Text, _>(fields.slug)
    .bind::<Text, _>(fields.title)
    .bind::<Nullable<Text>, _>(fields.description)
    .bind::<Nullable<Text>, _>(fields.logo_url)
    .bind::<Nullable<Text>, _>(fields.custom_domain)
    .bind::<Jsonb, _>(fields.groups)
    .bind::<Nullable<Text>, _>(access_token_sha256)
    .load(conn)
    .await?;
    Ok(rows.into_iter().next())
}

/// Replaces a page's fields; `Ok(None)` when there is no such page of the
/// organisation, `Err` (unique violation) when the slug or domain is taken.
pub async fn update(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    fields: &PageFields<'_>,
) -> DbResult<Option<StatusPage>> {
    let rows: Vec<StatusPage> = diesel::sql_query(format!(
        "UPDATE status_pages SET slug = $3, title = $4, description = $5, logo_url = $6, \
           custom_domain = $7, groups = $8, updated_at = now() \
         WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}"
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(id)
    .bind::<Text, _>(fields.slug)
    .bind::<Text, _>(fields.title)
    .bind::<Nullable<Text>, _>(fields.description)
    .bind::<Nullable<Text>, _>(fields.logo_url)
    .bind::<Nullable<Text>, _>(fields.custom_domain)
    .bind::<Jsonb, _>(fields.groups)
    .load(conn)
    .await?;
    Ok(rows.into_iter().next())
}

/// Sets (or with `None` clears: the page becomes public) the access token's
/// digest; `None` when there is no such page.
pub async fn set_access_token(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    id: i64,
    access_token_sha256: Option<&str>,
) -> DbResult<Option<StatusPage>> {
    let rows: Vec<StatusPage> = diesel::sql_query(format!(
        "UPDATE status_pages SET access_token_sha256 = $3, updated_at = now() \
         WHERE org_id = $1 AND id = $2 RETURNING {COLUMNS}"
    ))
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(id)
    .bind::<Nullable<Text>, _>(access_token_sha256)
    .load(conn)
    .await?;
    Ok(rows.into_iter().next())
}

// `get` (`for_update` for a read-modify-write), `list_page`, `delete`.
crate::owned_rows::owned_table_fns!(PAGES, StatusPage; get, page list_page, delete);

#[derive(QueryableByName)]
struct Count {
    #[diesel(sql_type = BigInt)]
    n: i64,
}

/// How many pages the organisation has.
pub async fn count(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<i64> {
    let row: Count = diesel::sql_query("SELECT count(*) AS n FROM status_pages WHERE org_id = $1")
        .bind::<BigInt, _>(org_id)
        .get_result(conn)
        .await?;
    Ok(row.n)
}

/// Which unique field another page (not `except_id`) holds already:
/// `slug` or `custom_domain`.
pub async fn taken(
    conn: &mut AsyncPgConnection,
    slug: &str,
    custom_domain: Option<&str>,
    except_id: i64,
) -> DbResult<Option<&'static str>> {
    #[derive(QueryableByName)]
    struct Taken {
        #[diesel(sql_type = diesel::sql_types::Bool)]
        slug: bool,
    }
    let rows: Vec<Taken> = diesel::sql_query(
        "SELECT slug = $1 AS slug FROM status_pages \
         WHERE id <> $3 AND (slug = $1 OR custom_domain = $2) LIMIT 1",
    )
    .bind::<Text, _>(slug)
    .bind::<Nullable<Text>, _>(custom_domain)
    .bind::<BigInt, _>(except_id)
    .load(conn)
    .await?;
    Ok(rows
        .into_iter()
        .next()
        .map(|t| if t.slug { "slug" } else { "custom_domain" }))
}

/// Gives a monitor of the organisation a new badge token (its digest),
/// replacing any earlier one; `false` when there is no such monitor.
pub async fn set_badge_token(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    monitor_id: i64,
    token_sha256: &str,
) -> DbResult<bool> {
    let n = diesel::sql_query(
        "INSERT INTO monitor_badges (monitor_id, org_id, token_sha256) \
         SELECT id, org_id, $3 FROM monitors WHERE org_id = $1 AND id = $2 \
         ON CONFLICT (monitor_id) DO UPDATE SET token_sha256 = EXCLUDED.token_sha256, \
           created_at = now()",
    )
    .bind::<BigInt, _>(org_id)
    .bind::<BigInt, _>(monitor_id)
    .bind::<Text, _>(token_sha256)
    .execute(conn)
    .await?;
    Ok(n == 1)
}

/// Removes a monitor's badge token (its badge URLs stop working); `false`
/// when it had none.
pub async fn delete_badge_token(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    monitor_id: i64,
) -> DbResult<bool> {
    let n = diesel::sql_query("DELETE FROM monitor_badges WHERE org_id = $1 AND monitor_id = $2")
        .bind::<BigInt, _>(org_id)
        .bind::<BigInt, _>(monitor_id)
        .execute(conn)
        .await?;
    Ok(n == 1)
}
