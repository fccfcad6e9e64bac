//! `/api/v1/status-pages`: the organisation's status pages (slug, title,
//! groups of monitors, custom domain, public or private), and
//! `/api/v1/monitors/{id}/badge-token` ([`badges`]). The pages themselves are
//! served by the status-pages service, which reads these rows into its
//! snapshot; nothing here talks to it.
//!
//! A private page's access token is random, shown once (in the response
//! that issues it) and stored only as its SHA-256, like invitation tokens.

pub mod badges;
pub mod body;
pub mod notices;
mod resource;
pub mod subscribers;
mod writes;

use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::reach::Named;
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::{web, HttpResponse};
use body::{CheckedPage, CreateStatusPage, StatusPageResponse, UpdateStatusPage};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde::Serialize;
use serde_json::json;
use utoipa::ToSchema;

pub use resource::*;

/// The prefix of a page's access token (then 43 base64url characters).
pub const ACCESS_TOKEN_PREFIX: &str = "sp_";

const REF_KIND: uptime_db::refs::RefKind = uptime_db::refs::RefKind::StatusPage;

pub fn routes() -> Routes {
    routes![
        list: READ,
        create: WRITE,
        // Before `/status-pages/{id}/...`, which would take `by-ref` for an
        // id when the ref is `access-token` or `notices`.
        get_status_page_by_ref: READ,
        put_status_page_by_ref: WRITE,
        delete_status_page_by_ref: WRITE,
        get: READ,
        update: WRITE,
        delete: WRITE,
        rotate_access_token: WRITE,
    ]
    .then(notices::routes())
    .then(subscribers::routes())
    .then(badges::routes())
}

/// A new access token and its digest.
fn new_access_token() -> (String, String) {
    let token = format!("{ACCESS_TOKEN_PREFIX}{}", crate::verification::new_token());
    let digest = crate::verification::digest(&token);
    (token, digest)
}

/// The groups' monitor ids must be monitors the caller reaches, and their
/// selectors no wider than the key's (`crate::reach`).
async fn check_reach(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    page: &CheckedPage,
) -> Result<(), ApiError> {
    let mut problems = Problems::new();
    let wanted = page.monitor_ids();
    if !wanted.is_empty() {
        let found = user.reach().reached_among(conn, &wanted).await?;
        for (i, group) in page.groups.iter().enumerate() {
            if let Some(missing) = group.monitor_ids.iter().find(|id| !found.contains(id)) {
                problems.add(
                    &format!("groups[{i}].monitor_ids"),
                    format!("monitor {missing} is not one of the organisation's monitors this key reaches"),
                );
            }
        }
    }
    if let Some(key) = user.label_selector.as_deref() {
        for (i, group) in page.groups.iter().enumerate() {
            let Some(selector) = &group.selector else {
                continue;
            };
            let selector = uptime_labels::Labels(selector.clone()).to_json();
            if !user.holds_selector(&selector) {
                problems.add(
                    &format!("groups[{i}].selector"),
                    format!("must include this key's own selector ({})", key.selector),
                );
            }
        }
    }
    problems.into_result()
}

async fn ensure_free(
    conn: &mut AsyncPgConnection,
    page: &CheckedPage,
    except_id: i64,
) -> Result<(), ApiError> {
    match uptime_db::status_pages::taken(conn, &page.slug, page.custom_domain.as_deref(), except_id)
        .await?
    {
        Some(field) => Err(ApiError::ConflictOn {
            field,
            message: format!("another status page has this {}", field.replace('_', " ")),
        }),
        None => Ok(()),
    }
}

/// Create a status page. A private page's access token is in this response
/// only.
#[utoipa::path(post, path = "/api/v1/status-pages", operation_id = "createStatusPage", tag = "status-pages",
    request_body = CreateStatusPage, responses((status = 201, body = StatusPageResponse),
        (status = 403, body = ErrorBody, description = "`quota exceeded`: the organisation has `status_pages.max_pages_per_org` pages"),
        (status = 409, body = ErrorBody, description = "`conflict` on `slug` or `custom_domain`: another page has it")))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    body: crate::validation::Json<CreateStatusPage>,
) -> Result<HttpResponse, ApiError> {
    let (page, private, r#ref) = writes::checked_create(body.into_inner())?;
    let token = private.then(new_access_token);
    let digest = token.as_ref().map(|(_, d)| d.clone());
    let limit = state.settings.status_pages.max_pages_per_org;
    let base_url = state.settings.status_pages.public_base_url.clone();
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let created = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                writes::insert(
                    c,
                    &user,
                    &page,
                    digest.as_deref(),
                    given_ref.as_deref(),
                    limit,
                )
                .await
            }
            .scope_boxed()
        })
        .await?;
    Ok(crate::http::response::created(
        format!("/api/v1/status-pages/{}", created.id),
        StatusPageResponse::of(created, &base_url, token.map(|(t, _)| t)).with_ref(r#ref),
    ))
}

/// Change a status page. Making it private issues an access token (in this
/// response only) unless it has one; making it public drops the token.
#[utoipa::path(patch, path = "/api/v1/status-pages/{id}", operation_id = "updateStatusPage", tag = "status-pages",
    request_body = UpdateStatusPage, params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = StatusPageResponse),
        (status = 409, body = ErrorBody, description = "`conflict` on `slug` or `custom_domain`: another page has it")))]
pub async fn update(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
    body: crate::validation::Json<UpdateStatusPage>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let body = body.into_inner();
    let mut problems = Problems::new();
    let slug = crate::validation::not_null(&mut problems, "slug", body.slug.map(Some));
    problems.into_result()?;
    let base_url = state.settings.status_pages.public_base_url.clone();
    let mut conn = state.conn().await?;
    let updated = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let before = reached_page(c, &user, id, true).await?;
                let stored_ref = uptime_db::refs::of_one(c, REF_KIND, id).await?;
                let groups = match body.groups {
                    Some(groups) => groups,
                    None => serde_json::from_value(before.groups.clone()).unwrap_or_default(),
                };
                let mut problems = Problems::new();
                let r#ref = crate::refs::patched(stored_ref.as_deref(), body.ref_, &mut problems);
                let page = CheckedPage {
                    slug: slug.unwrap_or_else(|| before.slug.clone()),
                    title: body.title.unwrap_or_else(|| before.title.clone()),
                    description: body
                        .description
                        .unwrap_or_else(|| before.description.clone()),
                    logo_url: body.logo_url.unwrap_or_else(|| before.logo_url.clone()),
                    custom_domain: body
                        .custom_domain
                        .unwrap_or_else(|| before.custom_domain.clone()),
                    groups,
                }
                .check(&mut problems);
                problems.into_result()?;
                check_reach(c, &user, &page).await?;
                ensure_free(c, &page, id).await?;
                let groups = page.groups_json();
                let before_audited = writes::audited(before.clone(), stored_ref.as_deref());
                let (stored_ref, new_ref, page, groups) =
                    (stored_ref.as_deref(), r#ref.as_deref(), &page, &groups);
                let private = body.private;
                // The closure below runs inside `audit::update`, which borrows `user` too.
                let who = &user;
                let written = audit::update(
                    c,
                    &user,
                    audit::kind::STATUS_PAGE,
                    Some(id),
                    &before_audited,
                    move |c| {
                        async move {
                            let updated = uptime_db::status_pages::update(
                                c,
                                user.org_id,
                                id,
                                &writes::fields_of(page, groups),
                            )
                            .await?
                            .ok_or(ApiError::NotFound)?;
                            let (updated, token) =
                                set_privacy(c, user.org_id, updated, private).await?;
                            crate::refs::set_if_new(c, REF_KIND, who, id, stored_ref, new_ref)
                                .await?;
                            let after = writes::audited(updated.clone(), new_ref);
                            Ok(((updated, token), after))
                        }
                        .scope_boxed()
                    },
                )
                .await?;
                // Nothing changed: nothing was written.
                let (updated, token) = written.unwrap_or((before, None));
                Ok((updated, token, r#ref))
            }
            .scope_boxed()
        })
        .await?;
    let (updated, token, r#ref) = updated;
    Ok(HttpResponse::Ok().json(StatusPageResponse::of(updated, &base_url, token).with_ref(r#ref)))
}

/// Makes the page `page` private (issuing a token when it has none: the
/// raw token returned, to be shown once) or public (dropping its token), as
/// `private` asks (`None`: as it is).
async fn set_privacy(
    c: &mut AsyncPgConnection,
    org_id: i64,
    page: uptime_db::status_pages::StatusPage,
    private: Option<bool>,
) -> Result<(uptime_db::status_pages::StatusPage, Option<String>), ApiError> {
    let id = page.id;
    Ok(match private {
        Some(true) if page.access_token_sha256.is_none() => {
            let (raw, digest) = new_access_token();
            let page = uptime_db::status_pages::set_access_token(c, org_id, id, Some(&digest))
                .await?
                .ok_or(ApiError::NotFound)?;
            (page, Some(raw))
        }
        Some(false) if page.access_token_sha256.is_some() => {
            let page = uptime_db::status_pages::set_access_token(c, org_id, id, None)
                .await?
                .ok_or(ApiError::NotFound)?;
            (page, None)
        }
        _ => (page, None),
    })
}

/// A new access token of a private page.
#[derive(Debug, Serialize, ToSchema)]
pub struct IssuedAccessToken {
    /// Shown this once; the page opens with `?access_token=...`.
    pub access_token: String,
}

/// Issue a new access token for a page (making it private if it was
/// public); the previous token stops working at the service's next refresh.
#[utoipa::path(post, path = "/api/v1/status-pages/{id}/access-token", operation_id = "rotateStatusPageAccessToken", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id")),
    responses((status = 200, body = IssuedAccessToken)))]
pub async fn rotate_access_token(
    state: web::Data<AppState>,
    user: AuthUser,
    id: web::Path<i64>,
) -> Result<HttpResponse, ApiError> {
    let id = id.into_inner();
    let (token, digest) = new_access_token();
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            reached_page(c, &user, id, true).await?;
            uptime_db::status_pages::set_access_token(c, user.org_id, id, Some(&digest))
                .await?
                .ok_or(ApiError::NotFound)?;
            audit::record(
                c,
                &user,
                audit::action::ROTATE,
                audit::kind::STATUS_PAGE,
                Some(id),
                json!({"access_token": {"before": "[changed]", "after": "[changed]"}}),
            )
            .await?;
            Ok(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(HttpResponse::Ok().json(IssuedAccessToken {
        access_token: token,
    }))
}

/// The page `page_id` if the caller reaches it (404 otherwise: another
/// organisation's, or one showing a monitor out of a label-limited key's
/// reach, `crate::reach`), locked with `for_update`.
pub(super) async fn reached_page(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    page_id: i64,
    for_update: bool,
) -> Result<uptime_db::status_pages::StatusPage, ApiError> {
    let page = uptime_db::status_pages::get(conn, user.org_id, page_id, for_update)
        .await?
        .ok_or(ApiError::NotFound)?;
    if !crate::reach::covers(conn, user, &Named::page_groups(&page.groups)).await? {
        return Err(ApiError::NotFound);
    }
    Ok(page)
}

/// [`reached_page`], unlocked: what the notices and subscribers routes
/// check before touching anything of a page.
pub(super) async fn own_page(
    conn: &mut AsyncPgConnection,
    user: &AuthUser,
    page_id: i64,
) -> Result<uptime_db::status_pages::StatusPage, ApiError> {
    reached_page(conn, user, page_id, false).await
}
