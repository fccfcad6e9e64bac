//! API keys. A key belongs to a member (`user_id`) of an organisation
//! (`org_id`) and acts on that organisation; the queries that take an
//! `org_id` are scoped to it.

use crate::models::{ApiKey, NewApiKey};
use crate::organisations::{Role, Scope};
use crate::schema::{api_keys, memberships};
use crate::DbResult;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel::sql_types::{BigInt, Nullable, Timestamptz};
use diesel_async::{AsyncPgConnection, RunQueryDsl};

pub async fn create(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
    scope: Scope,
    name: &str,
    prefix: &str,
    key_sha256: &str,
) -> DbResult<ApiKey> {
    create_with_selector(conn, org_id, user_id, scope, None, name, prefix, key_sha256).await
}

/// [`create`] for a key limited to the monitors whose labels hold every
/// pair of `label_selector` (a JSON object; `None`: every monitor).
#[allow(clippy::too_many_arguments)]
pub async fn create_with_selector(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    user_id: i64,
    scope: Scope,
    label_selector: Option<serde_json::Value>,
    name: &str,
    prefix: &str,
    key_sha256: &str,
) -> DbResult<ApiKey> {
    Ok(diesel::insert_into(api_keys::table)
        .values(NewApiKey {
            user_id,
            org_id,
            scope: scope.as_str(),
            label_selector,
            name,
            prefix,
            key_sha256,
        })
        .returning(ApiKey::as_returning())
        .get_result(conn)
        .await?)
}

/// An unrevoked key, its scope as issued and its holder's role in the
/// key's organisation.
#[derive(Debug, Clone)]
pub struct ActiveKey {
    pub key: ApiKey,
    pub scope: Scope,
    pub role: Role,
}

/// The unrevoked key with this digest, with its holder's role. A key exists
/// only while its membership does (a foreign key removes it with the
/// membership), so the join finds every key; a role this build does not
/// know, or a scope it does not know, is refused like no key.
pub async fn find_active_by_digest(
    conn: &mut AsyncPgConnection,
    key_sha256: &str,
) -> DbResult<Option<ActiveKey>> {
    let found: Option<(ApiKey, String)> = api_keys::table
        .inner_join(
            memberships::table.on(memberships::org_id
                .eq(api_keys::org_id)
                .and(memberships::user_id.eq(api_keys::user_id))),
        )
        .filter(api_keys::key_sha256.eq(key_sha256))
        .filter(api_keys::revoked_at.is_null())
        .select((ApiKey::as_select(), memberships::role))
        .first(conn)
        .await
        .optional()?;
    Ok(found.and_then(|(key, role)| {
        Some(ActiveKey {
            scope: Scope::parse(&key.scope)?,
            role: Role::parse(&role)?,
            key,
        })
    }))
}

/// Sets `last_used_at` to `now` unless it was set within `min_gap` of it;
/// one write per key a minute instead of one per request. `Some(previous)`
/// when it wrote (`previous`: the value it replaced, for deciding whether
/// the use is audited), `None` when it left the key alone.
pub async fn touch(
    conn: &mut AsyncPgConnection,
    key_id: i64,
    now: DateTime<Utc>,
    min_gap: chrono::Duration,
) -> DbResult<Option<Option<DateTime<Utc>>>> {
    #[derive(QueryableByName)]
    struct Replaced {
        #[diesel(sql_type = Nullable<Timestamptz>)]
        previous: Option<DateTime<Utc>>,
    }
    // The row is locked by the subquery, so `previous` is the value this
    // update replaced even when two replicas touch the key at once.
    let replaced: Option<Replaced> = diesel::sql_query(
        "UPDATE api_keys k SET last_used_at = $2
           FROM (SELECT id, last_used_at AS previous FROM api_keys WHERE id = $1 FOR UPDATE) p
          WHERE k.id = p.id AND (p.previous IS NULL OR p.previous < $3)
          RETURNING p.previous",
    )
    .bind::<BigInt, _>(key_id)
    .bind::<Timestamptz, _>(now)
    .bind::<Timestamptz, _>(now - min_gap)
    .get_result(conn)
    .await
    .optional()?;
    Ok(replaced.map(|r| r.previous))
}

/// The organisation's unrevoked keys, oldest first.
pub async fn list(conn: &mut AsyncPgConnection, org_id: i64) -> DbResult<Vec<ApiKey>> {
    Ok(api_keys::table
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::revoked_at.is_null())
        .order(api_keys::id.asc())
        .select(ApiKey::as_select())
        .load(conn)
        .await?)
}

/// The organisation's unrevoked keys (only `holder`'s, when given) by id,
/// after `after_id`, at most `limit`.
pub async fn list_page(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    holder: Option<i64>,
    after_id: Option<i64>,
    limit: i64,
) -> DbResult<Vec<ApiKey>> {
    let mut query = api_keys::table
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::revoked_at.is_null())
        .filter(api_keys::id.gt(after_id.unwrap_or(i64::MIN)))
        .into_boxed();
    if let Some(holder) = holder {
        query = query.filter(api_keys::user_id.eq(holder));
    }
    Ok(query
        .order(api_keys::id.asc())
        .limit(limit)
        .select(ApiKey::as_select())
        .load(conn)
        .await?)
}

/// One of the organisation's unrevoked keys, by id; `None` when it is not
/// the organisation's or is revoked.
pub async fn get(conn: &mut AsyncPgConnection, org_id: i64, id: i64) -> DbResult<Option<ApiKey>> {
    Ok(api_keys::table
        .filter(api_keys::id.eq(id))
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::revoked_at.is_null())
        .select(ApiKey::as_select())
        .first(conn)
        .await
        .optional()?)
}

/// Revokes the organisation's key and returns it as revoked (its digest is
/// what the gateways' caches must drop); `None` when there is no such
/// unrevoked key of the organisation's.
pub async fn revoke(
    conn: &mut AsyncPgConnection,
    org_id: i64,
    key_id: i64,
) -> DbResult<Option<ApiKey>> {
    Ok(diesel::update(api_keys::table)
        .filter(api_keys::id.eq(key_id))
        .filter(api_keys::org_id.eq(org_id))
        .filter(api_keys::revoked_at.is_null())
        .set(api_keys::revoked_at.eq(diesel::dsl::now))
        .returning(ApiKey::as_returning())
        .get_result(conn)
        .await
        .optional()?)
}
