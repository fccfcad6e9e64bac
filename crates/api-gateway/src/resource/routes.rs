//! The routes every [`Resource`] answers, generic over the kind. Each
//! kind's module declares them (`#[utoipa::path]` on a one-line handler
//! that calls these), so the OpenAPI document keeps its words per kind.
//!
//! By ref, the ref is resolved to its id (one indexed query: the partial
//! unique index on `(org_id, ref)`) and the id route's work runs, so the
//! answer, its `ETag`, `If-Match`, the key's reach and the audit entry are
//! the id route's. A ref is immutable and never moves to another row, so
//! the id found names the same resource when it is read; if it was deleted
//! in between, the `404` names the ref as when it never existed.

use super::{execute, plan, Listed, Resource};
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::etag::IfMatch;
use crate::refs::{naming_ref, resolve};
use crate::state::AppState;
use crate::validation::{paginate, PageQuery};
use actix_web::HttpResponse;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use std::future::Future;
use uptime_db::refs::RefKind;

/// `GET {PATH}/{id}`.
pub async fn get<K: Resource>(
    state: &AppState,
    user: &AuthUser,
    id: i64,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    let row = K::get(&mut conn, user, id, false).await?;
    let r#ref = uptime_db::refs::of_one(&mut conn, K::REF_KIND, id).await?;
    Ok(HttpResponse::Ok().json(K::shown(state, &row, r#ref.as_deref())?))
}

/// `DELETE {PATH}/{id}`: `If-Match` compared with the resource as read for
/// update (the middleware refuses one on the kinds that do not honour it).
pub async fn delete<K: Resource>(
    state: &AppState,
    user: &AuthUser,
    id: i64,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            let stored = K::get(c, user, id, true).await?;
            let stored_ref = uptime_db::refs::of_one(c, K::REF_KIND, id).await?;
            let shown = K::shown(state, &stored, stored_ref.as_deref())?;
            if_match.check(&crate::etag::of_json(&shown))?;
            K::remove(c, state, user, &stored, stored_ref.as_deref()).await
        }
        .scope_boxed()
    })
    .await?;
    K::removed(state, id).await;
    Ok(HttpResponse::NoContent().finish())
}

/// `GET {PATH}` of a [`Listed`] kind: a page in id order.
pub async fn list<K: Listed>(
    state: &AppState,
    user: &AuthUser,
    query: &PageQuery,
) -> Result<HttpResponse, ApiError> {
    let page = query.validate()?;
    let mut conn = state.conn().await?;
    let rows = K::page(&mut conn, user, page.after_id.unwrap_or(0), page.limit + 1).await?;
    let (rows, next_cursor) = paginate(rows, page.limit, K::id);
    let rows = K::reached(&mut conn, user, rows).await?;
    let ids: Vec<i64> = rows.iter().map(K::id).collect();
    let mut refs = uptime_db::refs::of(&mut conn, K::REF_KIND, &ids).await?;
    let items = rows
        .iter()
        .map(|row| K::shown(state, row, refs.remove(&K::id(row)).as_deref()))
        .collect::<Result<_, _>>()?;
    Ok(HttpResponse::Ok().json(K::list(items, next_cursor)))
}

/// The id route's answer `by_id` for the resource of `kind` with `r#ref`
/// (`400`/`404` naming `ref` when it is malformed or nothing has it).
pub async fn by_ref<F, Fut>(
    state: &AppState,
    user: &AuthUser,
    kind: RefKind,
    r#ref: &str,
    by_id: F,
) -> Result<HttpResponse, ApiError>
where
    F: FnOnce(i64) -> Fut,
    Fut: Future<Output = Result<HttpResponse, ApiError>>,
{
    let id = resolve(state, user.org_id, kind, r#ref).await?;
    naming_ref(by_id(id).await, kind, r#ref)
}

/// `GET {PATH}/by-ref/{ref}`.
pub async fn get_by_ref<K: Resource>(
    state: &AppState,
    user: &AuthUser,
    r#ref: &str,
) -> Result<HttpResponse, ApiError> {
    by_ref(state, user, K::REF_KIND, r#ref, |id| {
        get::<K>(state, user, id)
    })
    .await
}

/// `DELETE {PATH}/by-ref/{ref}`.
pub async fn delete_by_ref<K: Resource>(
    state: &AppState,
    user: &AuthUser,
    r#ref: &str,
    if_match: IfMatch,
) -> Result<HttpResponse, ApiError> {
    by_ref(state, user, K::REF_KIND, r#ref, |id| {
        delete::<K>(state, user, id, if_match)
    })
    .await
}

/// `PUT {PATH}/by-ref/{ref}`: create (`201`) or replace (`200`) the
/// resource with this ref from a create body without `ref` or with the
/// path's. The body is checked first (`400`), then `If-Match` (`412`;
/// with no resource, any condition fails). A replacement that changes
/// nothing writes nothing: the same `ETag` as before. A ref held by a
/// resource beyond a label-limited key's reach is a ref that is not free
/// (`409`), as for a create.
pub async fn put_by_ref<K: Resource>(
    state: &AppState,
    user: &AuthUser,
    r#ref: String,
    if_match: IfMatch,
    mut body: K::Create,
) -> Result<HttpResponse, ApiError> {
    crate::refs::check_path(&r#ref, K::take_ref(&mut body))?;
    let given_ref = r#ref.as_str();
    let mut conn = state.conn().await?;
    let done = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored =
                    match uptime_db::refs::find(c, K::REF_KIND, user.org_id, given_ref).await? {
                        None => None,
                        Some(id) => Some(K::get(c, user, id, true).await.map_err(|e| match e {
                            ApiError::NotFound => crate::refs::taken(K::REF_KIND, user),
                            other => other,
                        })?),
                    };
                let plan = plan::<K>(c, state, user, given_ref, stored, body, false).await?;
                match plan.stored() {
                    None => if_match.check_absent()?,
                    Some(stored) => {
                        let shown = K::shown(state, stored, Some(given_ref))?;
                        if_match.check(&crate::etag::of_json(&shown))?;
                    }
                }
                execute::<K>(c, state, user, given_ref, plan, false).await
            }
            .scope_boxed()
        })
        .await?;
    drop(conn);
    let (id, created) = (K::id(&done.row), done.created);
    let shown = K::answered(state, done.row, &r#ref, done.extra, created).await?;
    Ok(if created {
        HttpResponse::Created()
            .insert_header((
                actix_web::http::header::LOCATION,
                format!("{}/{id}", K::PATH),
            ))
            .json(shown)
    } else {
        HttpResponse::Ok().json(shown)
    })
}

/// Declares a kind's route handlers, each a one-line call of a generic
/// route above under its doc and `#[utoipa::path]`, from what is the
/// kind's own: its collection's path and tag, its ref parameter and
/// bodies, the `id` parameter's description, the `404` of a ref nothing
/// has and, per route, its doc (the operation's summary and description),
/// operation id, handler name and answers of its own. utoipa takes no
/// constant where a path, an operation id or a description goes, so these
/// are literals (`concat!` makes the routes' paths of the collection's).
///
/// The answers every kind shares are written here once; the `304`, the
/// `412` of the routes honouring `If-Match`, a malformed ref's `400` and
/// the rest come from `crate::openapi`. `bad` (a `PUT`'s `400`) has a
/// default; `list` is for a [`Listed`] kind.
macro_rules! kind_routes {
    (
        $kind:ident at $path:literal, tag $tag:literal, $ref_param:ident,
        shows $shown:ident, creates $create:ident;
        id $id_doc:literal $(, minimum $min:tt)?;
        no_ref $no_ref:literal;
        $(#[$get_doc:meta])* get $get_id:literal => $get_fn:ident;
        $(#[$delete_doc:meta])* delete $delete_id:literal => $delete_fn:ident $(, $delete_answer:tt)*;
        $(#[$gbr_doc:meta])* get_by_ref $gbr_id:literal => $gbr_fn:ident;
        $(#[$dbr_doc:meta])* delete_by_ref $dbr_id:literal => $dbr_fn:ident $(, $dbr_answer:tt)*;
        $(#[$put_doc:meta])* put_by_ref $put_id:literal => $put_fn:ident,
            $(bad $bad:literal,)? forbidden $forbidden:literal, conflict $conflict:literal;
        $($(#[$list_doc:meta])* list $list_id:literal => $list_fn:ident, $list:ident;)?
    ) => {
        $crate::resource::routes::handler!(
            $(#[$get_doc])*
            #[utoipa::path(get, path = concat!($path, "/{id}"), operation_id = $get_id, tag = $tag,
                params(("id" = i64, Path, description = $id_doc $(, minimum = $min)?)),
                responses((status = 200, body = $shown)))]
            $get_fn(state, user, id: actix_web::web::Path<i64>)
                => $crate::resource::routes::get::<$kind>(&state, &user, id.into_inner())
        );
        $crate::resource::routes::handler!(
            $(#[$delete_doc])*
            #[utoipa::path(delete, path = concat!($path, "/{id}"), operation_id = $delete_id, tag = $tag,
                params(("id" = i64, Path, description = $id_doc $(, minimum = $min)?)),
                responses((status = 204) $(, $delete_answer)*))]
            $delete_fn(state, user, id: actix_web::web::Path<i64>, if_match: $crate::etag::IfMatch)
                => $crate::resource::routes::delete::<$kind>(&state, &user, id.into_inner(), if_match)
        );
        $crate::resource::routes::handler!(
            $(#[$gbr_doc])*
            #[utoipa::path(get, path = concat!($path, "/by-ref/{ref}"), operation_id = $gbr_id, tag = $tag,
                params($ref_param), responses((status = 200, body = $shown),
                    (status = 404, body = $crate::error::ErrorBody, description = $no_ref)))]
            $gbr_fn(state, user, path: $crate::resource::ref_param::RefPath)
                => $crate::resource::routes::get_by_ref::<$kind>(&state, &user, &path)
        );
        $crate::resource::routes::handler!(
            $(#[$dbr_doc])*
            #[utoipa::path(delete, path = concat!($path, "/by-ref/{ref}"), operation_id = $dbr_id, tag = $tag,
                params($ref_param), responses((status = 204),
                    (status = 404, body = $crate::error::ErrorBody, description = $no_ref) $(, $dbr_answer)*))]
            $dbr_fn(state, user, path: $crate::resource::ref_param::RefPath, if_match: $crate::etag::IfMatch)
                => $crate::resource::routes::delete_by_ref::<$kind>(&state, &user, &path, if_match)
        );
        $crate::resource::routes::handler!(
            $(#[$put_doc])*
            #[utoipa::path(put, path = concat!($path, "/by-ref/{ref}"), operation_id = $put_id, tag = $tag,
                request_body = $create, params($ref_param),
                responses((status = 200, body = $shown, description = "replaced, or unchanged"),
                    (status = 201, body = $shown, description = "created with this ref"),
                    (status = 400, body = $crate::error::ErrorBody, description = $crate::resource::routes::given_or!($($bad)?,
                        "`invalid request body` naming each field refused; `ref` when the path's is malformed or the body names another")),
                    (status = 403, body = $crate::error::ErrorBody, description = $forbidden),
                    (status = 409, body = $crate::error::ErrorBody, description = $conflict)))]
            $put_fn(state, user, path: $crate::resource::ref_param::RefPath, if_match: $crate::etag::IfMatch,
                body: $crate::validation::Json<$create>)
                => $crate::resource::routes::put_by_ref::<$kind>(&state, &user, path.0, if_match, body.into_inner())
        );
        $($crate::resource::routes::handler!(
            $(#[$list_doc])*
            #[utoipa::path(get, path = $path, operation_id = $list_id, tag = $tag,
                params($crate::validation::PageQuery), responses((status = 200, body = $list)))]
            $list_fn(state, user, query: actix_web::web::Query<$crate::validation::PageQuery>)
                => $crate::resource::routes::list::<$kind>(&state, &user, &query)
        );)?
    };
}
pub(crate) use kind_routes;

/// One route handler of [`kind_routes!`]: the state, the caller, then the
/// route's own extractors, answered by `$call`. (The state's and caller's
/// names are given so that `$call` may name them.)
macro_rules! handler {
    ($(#[$m:meta])* $name:ident($state:ident, $user:ident $(, $arg:ident: $t:ty)*) => $call:expr) => {
        $(#[$m])*
        pub async fn $name(
            $state: actix_web::web::Data<$crate::state::AppState>,
            $user: $crate::auth::AuthUser,
            $($arg: $t),*
        ) -> Result<actix_web::HttpResponse, $crate::error::ApiError> {
            $call.await
        }
    };
}
pub(crate) use handler;

/// `$given` when there is one, else `$default`.
macro_rules! given_or {
    ($given:literal, $default:literal) => {
        $given
    };
    (, $default:literal) => {
        $default
    };
}
pub(crate) use given_or;
