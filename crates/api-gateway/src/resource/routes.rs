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

/// Declares a kind's route handlers, each a call of the generic route
/// above, under the attributes given (its doc and `#[utoipa::path]`, whose
/// words are the kind's): `handler!(put_by_ref Policies, #[...] put_policy_by_ref)`.
macro_rules! handler {
    (list $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            query: actix_web::web::Query<crate::validation::PageQuery>,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            crate::resource::routes::list::<$kind>(&state, &user, &query).await
        }
    };
    (get $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            id: actix_web::web::Path<i64>,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            crate::resource::routes::get::<$kind>(&state, &user, id.into_inner()).await
        }
    };
    (delete $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            id: actix_web::web::Path<i64>,
            if_match: crate::etag::IfMatch,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            crate::resource::routes::delete::<$kind>(&state, &user, id.into_inner(), if_match).await
        }
    };
    (get_by_ref $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            path: crate::resource::ref_param::RefPath,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            crate::resource::routes::get_by_ref::<$kind>(&state, &user, &path).await
        }
    };
    (delete_by_ref $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            path: crate::resource::ref_param::RefPath,
            if_match: crate::etag::IfMatch,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            crate::resource::routes::delete_by_ref::<$kind>(&state, &user, &path, if_match).await
        }
    };
    (put_by_ref $kind:ty, $(#[$m:meta])* $name:ident) => {
        $(#[$m])*
        pub async fn $name(
            state: actix_web::web::Data<crate::state::AppState>,
            user: crate::auth::AuthUser,
            path: crate::resource::ref_param::RefPath,
            if_match: crate::etag::IfMatch,
            body: crate::validation::Json<<$kind as crate::resource::Resource>::Create>,
        ) -> Result<actix_web::HttpResponse, crate::error::ApiError> {
            let (r#ref, body) = (path.0, body.into_inner());
            crate::resource::routes::put_by_ref::<$kind>(&state, &user, r#ref, if_match, body).await
        }
    };
}
pub(crate) use handler;
