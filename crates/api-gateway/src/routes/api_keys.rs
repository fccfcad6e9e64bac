//! `/api/v1/api-keys`: create, list, revoke.

use crate::access::auth::AuthUser;
use crate::access::keys;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::http::error::{ApiError, ErrorBody};
use crate::http::validation::{list_body, ListBody, PageQuery, Problems};
use crate::state::AppState;
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use uptime_db::organisations::Scope;
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![list: READ "the caller's own keys; every member's with admin",
        create: WRITE "the new key's scope is at most the caller's",
        get: READ "another member's key needs admin",
        revoke: WRITE "another member's key needs admin",]
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKey {
    /// A descriptive name, 1 to 200 characters, not only whitespace.
    #[schema(min_length = 1, max_length = 200)]
    pub name: String,
    /// What the key may do; at most the calling key's own scope (which is
    /// at most what the caller's role allows). Default: the calling key's
    /// scope.
    #[serde(default)]
    pub scope: Option<KeyScope>,
    /// Limits the key to the monitors whose labels hold every pair given
    /// (e.g. `{"team": "payments"}` for a CI job): other monitors and
    /// everything of them (results, incidents, deliveries, metrics,
    /// windows and status pages naming them, audit entries) are `404` to
    /// it or absent from its lists, as another organisation's are; a ref
    /// one of them holds is the `409` of any taken ref. It may only create or
    /// change monitors whose labels keep holding it (else `403`, field
    /// `labels`). Keys and values as monitor labels have them, at most 32
    /// pairs. A key with a selector issues keys with at least its own pairs
    /// (default: its own selector). Default, or `null` or `{}`: every
    /// monitor.
    #[serde(default)]
    #[schema(value_type = Option<std::collections::BTreeMap<String, String>>)]
    pub label_selector: Option<uptime_labels::Labels>,
}

/// What a key may do: `read` (read everything, change nothing), `write`
/// (manage resources and one's own keys), `admin` (everything the holder's
/// role allows). A key never does more than its holder's role allows
/// (viewer: read, editor: write, admin and owner: admin), whatever it was
/// issued with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum KeyScope {
    Read,
    Write,
    Admin,
}

impl From<KeyScope> for Scope {
    fn from(scope: KeyScope) -> Self {
        match scope {
            KeyScope::Read => Scope::Read,
            KeyScope::Write => Scope::Write,
            KeyScope::Admin => Scope::Admin,
        }
    }
}

impl From<Scope> for KeyScope {
    fn from(scope: Scope) -> Self {
        match scope {
            Scope::Read => KeyScope::Read,
            Scope::Write => KeyScope::Write,
            Scope::Admin => KeyScope::Admin,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
pub struct ApiKeyResponse {
    pub id: i64,
    /// The member who holds the key.
    pub user_id: i64,
    /// The organisation the key acts on.
    pub org_id: i64,
    /// The scope it was issued with (it acts with at most its holder's
    /// role's widest).
    pub scope: KeyScope,
    /// The monitors the key reaches: those whose labels hold every pair;
    /// `null`: every monitor of the organisation.
    #[schema(value_type = Option<std::collections::BTreeMap<String, String>>)]
    pub label_selector: Option<uptime_labels::Labels>,
    pub name: String,
    /// The first 8 characters of the raw key.
    pub prefix: String,
    pub last_used_at: Option<DateTime<Utc>>,
    pub created_at: DateTime<Utc>,
    /// The raw key: only in the response that created it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

impl ApiKeyResponse {
    pub(crate) fn from_row(k: uptime_db::models::ApiKey, raw: Option<String>) -> Self {
        Self {
            id: k.id,
            user_id: k.user_id,
            org_id: k.org_id,
            // The column is checked (read, write, admin); an unknown value
            // would have refused the key at authentication.
            scope: Scope::parse(&k.scope).map_or(KeyScope::Read, KeyScope::from),
            label_selector: k
                .label_selector
                .as_ref()
                .map(uptime_labels::Labels::from_json),
            name: k.name,
            prefix: k.prefix,
            last_used_at: k.last_used_at,
            created_at: k.created_at,
            key: raw,
        }
    }
}

list_body!(ApiKeyList, api_keys: ApiKeyResponse);

/// Create an API key. The raw key is in this response only.
#[utoipa::path(post, path = "/api/v1/api-keys", operation_id = "createApiKey", tag = "api-keys", request_body = CreateApiKey,
    responses((status = 201, body = ApiKeyResponse),
        (status = 403, body = ErrorBody, description = "quota exceeded: the user owns as many as their quota allows")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::http::validation::Json<CreateApiKey>,
) -> Result<HttpResponse, ApiError> {
    let mut problems = Problems::new();
    problems.check_len("name", &body.name, 200);
    let selector = new_key_selector(&user, body.label_selector.clone(), &mut problems)?;
    problems.into_result()?;
    // Never wider than the calling key (itself never wider than its
    // holder's role): a narrow key cannot mint a wide one.
    let scope = body.scope.map_or(user.scope, Scope::from);
    if scope > user.scope {
        return Err(crate::api::scopes::forbidden(format!(
            "a new key's scope is at most the calling key's ({}); {scope} was asked for",
            user.scope
        )));
    }

    let raw = keys::generate();
    let name = body.name.trim().to_string();
    let (prefix, digest) = (
        raw[..keys::SHOWN_PREFIX_LEN].to_string(),
        keys::digest(&raw),
    );
    let quotas = state.settings.quotas.clone();
    let mut conn = state.conn().await?;
    let row = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                crate::quotas::ensure_room(
                    c,
                    &quotas,
                    user.org_id,
                    uptime_db::quotas::Owned::ApiKeys,
                )
                .await?;
                let row = uptime_db::api_keys::create_with_selector(
                    c,
                    user.org_id,
                    user.user_id,
                    scope,
                    selector,
                    &name,
                    &prefix,
                    &digest,
                )
                .await?;
                let shown = audit::shown(&ApiKeyResponse::from_row(row.clone(), None));
                audit::record(
                    c,
                    &user,
                    audit::action::CREATE,
                    audit::kind::API_KEY,
                    Some(row.id),
                    audit::changes(None, Some(&shown)),
                )
                .await?;
                Ok(row)
            }
            .scope_boxed()
        })
        .await?;
    Ok(crate::http::response::created(
        format!("/api/v1/api-keys/{}", row.id),
        ApiKeyResponse::from_row(row, Some(raw)),
    ))
}

/// The label selector of a new key, as stored (`None`: every monitor):
/// the one asked for, validated, or the calling key's. 403 when it would
/// reach a monitor the calling key does not.
fn new_key_selector(
    user: &AuthUser,
    asked: Option<uptime_labels::Labels>,
    problems: &mut Problems,
) -> Result<Option<serde_json::Value>, ApiError> {
    let caller = user.label_selector.as_deref().map(|k| &k.selector);
    let Some(asked) = asked.filter(|l| !l.is_empty()) else {
        return Ok(caller.map(uptime_labels::Selector::to_json));
    };
    for (place, error) in asked.problems() {
        let field = match place {
            uptime_labels::Where::All => "label_selector".to_string(),
            uptime_labels::Where::Key(key) | uptime_labels::Where::Value(key) => {
                format!(
                    "label_selector.{}",
                    key.chars().take(64).collect::<String>()
                )
            }
        };
        problems.add(&field, error.to_string());
    }
    let asked = uptime_labels::Selector(asked);
    if let Some(caller) = caller {
        if !asked.within(caller) {
            return Err(ApiError::Forbidden {
                field: "label_selector",
                message: format!(
                    "a new key reaches at most the calling key's monitors: its label_selector must \
                     hold {caller}"
                ),
            });
        }
    }
    Ok(Some(asked.to_json()))
}

/// List API keys: the caller's own, or every member's with the `admin` scope.
///
/// Unrevoked keys in id order, a page at a time, never the raw keys. A key
/// with the `admin` scope (an owner's or an admin's) sees every member's
/// keys; any other key only its holder's.
#[utoipa::path(get, path = "/api/v1/api-keys", operation_id = "listApiKeys", tag = "api-keys",
    params(PageQuery), responses((status = 200, body = ApiKeyList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page = query.keyset()?;
    let holder = (!user.may_manage_keys_of_others()).then_some(user.user_id);
    let mut conn = state.conn().await?;
    ApiKeyList::respond(
        page,
        |after, n| uptime_db::api_keys::list_page(&mut conn, user.org_id, holder, after, n),
        |k| k.id,
        |k| ApiKeyResponse::from_row(k, None),
    )
    .await
}

/// Read an API key: the caller's own, or any member's with the `admin` scope.
///
/// Never the raw key. Another member's key read with a narrower key is
/// `403` naming `scope`.
#[utoipa::path(get, path = "/api/v1/api-keys/{id}", operation_id = "getApiKey", tag = "api-keys",
    params(("id" = i64, Path, description = "API key id")),
    responses((status = 200, body = ApiKeyResponse)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let key = held_key(&mut conn, &user, id.into_inner(), "reading").await?;
    Ok(HttpResponse::Ok().json(ApiKeyResponse::from_row(key, None)))
}

/// The organisation's key `id`: 404 when there is none, 403 when another
/// member holds it and the caller may not manage others' keys (an editor,
/// a `write` key, manages their own only), naming what it was `doing`.
async fn held_key(
    conn: &mut diesel_async::AsyncPgConnection,
    user: &AuthUser,
    id: i64,
    doing: &str,
) -> Result<uptime_db::models::ApiKey, ApiError> {
    let key = uptime_db::api_keys::get(conn, user.org_id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    if key.user_id != user.user_id && !user.may_manage_keys_of_others() {
        return Err(crate::api::scopes::forbidden(format!(
            "{doing} another member's key needs the admin scope"
        )));
    }
    Ok(key)
}

/// Revoke an API key: the caller's own, or any member's with the `admin` scope.
///
/// It is refused from the next request on, by every replica.
#[utoipa::path(delete, path = "/api/v1/api-keys/{id}", operation_id = "revokeApiKey", tag = "api-keys",
    params(("id" = i64, Path, description = "API key id")), responses((status = 204)))]
pub async fn revoke(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let mut conn = state.conn().await?;
    let key = held_key(&mut conn, &user, id, "revoking").await?;
    let revoked = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let Some(revoked) = uptime_db::api_keys::revoke(c, user.org_id, id).await? else {
                    return Ok(None);
                };
                // The listed fields do not change; the revocation does.
                let changes = serde_json::json!({
                    "revoked_at": {"before": key.revoked_at, "after": revoked.revoked_at},
                });
                audit::record(
                    c,
                    &user,
                    audit::action::REVOKE,
                    audit::kind::API_KEY,
                    Some(id),
                    changes,
                )
                .await?;
                Ok(Some(revoked))
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let Some(key) = revoked else {
        return Err(ApiError::NotFound);
    };
    // Committed: this replica forgets the key itself (not waiting for its
    // own message), then every replica is told.
    state.known_keys.forget(&key.key_sha256);
    crate::access::key_revocations::announce(&state, &key).await;
    Ok(HttpResponse::NoContent().finish())
}
