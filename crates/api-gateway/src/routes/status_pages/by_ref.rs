//! `PUT /api/v1/status-pages/by-ref/{ref}`: create or replace the page
//! with this ref, from a create body checked exactly as a create is
//! ([`checked_create`], [`insert`], which `POST` uses too).

use super::body::{CheckedPage, CreateStatusPage, StatusPageResponse};
use super::{check_reach, ensure_free, new_access_token, set_privacy, REF_KIND};
use crate::apply::changes::FieldChange;
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::Problems;
use actix_web::{web, HttpResponse};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use uptime_db::status_pages::{PageFields, StatusPage};

/// The page a create body makes, every bound checked (`400` naming each
/// problem, the ref's syntax among them), whether it is private, and its
/// ref.
pub(super) fn checked_create(
    body: CreateStatusPage,
) -> Result<(CheckedPage, bool, Option<String>), ApiError> {
    let mut problems = Problems::new();
    if let Some(r#ref) = &body.ref_ {
        crate::refs::check(&mut problems, "ref", r#ref);
    }
    let page = CheckedPage {
        slug: body.slug,
        title: body.title,
        description: body.description,
        logo_url: body.logo_url,
        custom_domain: body.custom_domain,
        groups: body.groups,
    }
    .check(&mut problems);
    problems.into_result()?;
    Ok((page, body.private, body.ref_))
}

/// The page as the audit log compares it (never a token), with its ref
/// and its write-only secret: the access token's digest
/// (`audit::audited`).
pub(super) fn audited(page: StatusPage, r#ref: Option<&str>) -> serde_json::Value {
    let token = page.access_token_sha256.clone();
    audit::audited(
        &StatusPageResponse::of(page, "", None).with_ref(r#ref.map(str::to_string)),
        &[("access_token", token.as_deref())],
    )
}

fn fields_of<'a>(page: &'a CheckedPage, groups: &'a serde_json::Value) -> PageFields<'a> {
    PageFields {
        slug: &page.slug,
        title: &page.title,
        description: page.description.as_deref(),
        logo_url: page.logo_url.as_deref(),
        custom_domain: page.custom_domain.as_deref(),
        groups,
    }
}

/// Inserts a page (its monitors within the key's reach, within the
/// organisation's quota, its slug and domain free) with its ref and its
/// access token's digest, and its audit entry, in the caller's
/// transaction.
pub(super) async fn insert(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    page: &CheckedPage,
    token_digest: Option<&str>,
    r#ref: Option<&str>,
    limit: i64,
) -> Result<StatusPage, ApiError> {
    check_reach(c, user, page).await?;
    if uptime_db::status_pages::count(c, user.org_id).await? >= limit {
        return Err(ApiError::QuotaExceeded {
            quota: "status_pages",
            limit,
        });
    }
    ensure_free(c, page, 0).await?;
    let groups = page.groups_json();
    let created =
        uptime_db::status_pages::create(c, user.org_id, &fields_of(page, &groups), token_digest)
            .await?
            .ok_or(ApiError::ConflictOn {
                field: "slug",
                message: "another status page has this slug or custom domain".into(),
            })?;
    crate::refs::set_on_create(c, REF_KIND, user, created.id, r#ref).await?;
    audit::record(
        c,
        user,
        audit::action::CREATE,
        audit::kind::STATUS_PAGE,
        Some(created.id),
        audit::changes(None, Some(&audited(created.clone(), r#ref))),
    )
    .await?;
    Ok(created)
}

/// Whether `stored` already is `page`, private as asked.
fn is_as_stored(stored: &StatusPage, page: &CheckedPage, private: bool) -> bool {
    stored.slug == page.slug
        && stored.title == page.title
        && stored.description == page.description
        && stored.logo_url == page.logo_url
        && stored.custom_domain == page.custom_domain
        && stored.groups == page.groups_json()
        && stored.access_token_sha256.is_some() == private
}

/// Writes `page` over `stored` (the checks a `PATCH` makes), issuing or
/// dropping its access token as `private` asks (a private page keeps the
/// token it has), and its audit entry, in the caller's transaction. The
/// raw token when one was issued.
async fn rewrite(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    stored: StatusPage,
    r#ref: &str,
    page: &CheckedPage,
    private: bool,
) -> Result<(StatusPage, Option<String>), ApiError> {
    let id = stored.id;
    ensure_free(c, page, id).await?;
    let groups = page.groups_json();
    let updated = uptime_db::status_pages::update(c, user.org_id, id, &fields_of(page, &groups))
        .await?
        .ok_or(ApiError::NotFound)?;
    let (updated, token) = set_privacy(c, user.org_id, updated, Some(private)).await?;
    audit::record(
        c,
        user,
        audit::action::UPDATE,
        audit::kind::STATUS_PAGE,
        Some(id),
        audit::changes(
            Some(&audited(stored, Some(r#ref))),
            Some(&audited(updated.clone(), Some(r#ref))),
        ),
    )
    .await?;
    Ok((updated, token))
}

/// Create or replace the organisation's status page with this ref.
///
/// The body is a create body (`POST /api/v1/status-pages`), without `ref`
/// or with the path's, checked as a create is. No page has the ref: it is
/// created with it (`201`; a private one's access token in this answer
/// only). One has: it is replaced (`200`), every field not given back at
/// its default (`private` too: a page replaced without `"private": true`
/// becomes public and loses its token; a private page stays private with
/// the token it has). When that changes nothing, nothing is written (the
/// same `ETag` as before). `If-Match` is honoured (and fails when there is
/// no page).
#[utoipa::path(put, path = "/api/v1/status-pages/by-ref/{ref}", operation_id = "putStatusPageByRef", tag = "status-pages", request_body = CreateStatusPage,
    security(("bearer" = [])),
    params(("ref" = String, Path, description = "The page's ref: 1 to 255 of lowercase letters, digits, `.`, `_`, `-`, alphanumeric at both ends", min_length = 1, max_length = 255, pattern = "^[a-z0-9]([a-z0-9._-]{0,253}[a-z0-9])?$")),
    responses((status = 200, body = StatusPageResponse, description = "replaced, or unchanged"),
        (status = 201, body = StatusPageResponse, description = "created with this ref"),
        (status = 400, body = ErrorBody, description = "`invalid request body` naming each field refused; `ref` when the path's is malformed or the body names another"),
        (status = 401, body = ErrorBody),
        (status = 403, body = ErrorBody, description = "`quota exceeded`: the organisation has `status_pages.max_pages_per_org` pages"),
        (status = 409, body = ErrorBody, description = "`conflict` on `slug` or `custom_domain` (another page has it), or on `ref` (another request created a page with it meanwhile, or, for a key with a label selector, a page out of its reach has it; the message does not say which)"),
        (status = 412, body = ErrorBody, description = "`If-Match` names another version, or no page has this ref"),
        (status = 413, body = ErrorBody)))]
pub async fn put_status_page_by_ref(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<String>,
    if_match: crate::etag::IfMatch,
    body: crate::validation::Json<CreateStatusPage>,
) -> Result<HttpResponse, ApiError> {
    let r#ref = path.into_inner();
    let mut body = body.into_inner();
    crate::refs::check_path(&r#ref, body.ref_.take())?;
    // The body first (400), then the condition (412).
    let (page, private, _) = checked_create(body)?;
    let limit = state.settings.status_pages.max_pages_per_org;
    let base_url = state.settings.status_pages.public_base_url.clone();
    let tag_base_url = base_url.clone();
    let given_ref = r#ref.clone();
    let mut conn = state.conn().await?;
    let (row, token, created) = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                let stored =
                    match uptime_db::refs::find(c, REF_KIND, user.org_id, &given_ref).await? {
                        None => None,
                        // Held by a page out of the key's reach: a ref
                        // that is not free, as for a create.
                        Some(id) => Some(super::reached_page(c, &user, id, true).await.map_err(
                            |e| match e {
                                ApiError::NotFound => crate::refs::taken(REF_KIND, &user),
                                other => other,
                            },
                        )?),
                    };
                let Some(stored) = stored else {
                    check_reach(c, &user, &page).await?;
                    if_match.check_absent()?;
                    let token = private.then(new_access_token);
                    let digest = token.as_ref().map(|(_, d)| d.as_str());
                    let row = insert(c, &user, &page, digest, Some(&given_ref), limit).await?;
                    return Ok((row, token.map(|(raw, _)| raw), true));
                };
                check_reach(c, &user, &page).await?;
                let shown = StatusPageResponse::of(stored.clone(), &tag_base_url, None)
                    .with_ref(Some(given_ref.clone()));
                if_match.check(&crate::etag::of_json(&shown))?;
                if is_as_stored(&stored, &page, private) {
                    return Ok((stored, None, false));
                }
                let (row, token) = rewrite(c, &user, stored, &given_ref, &page, private).await?;
                Ok((row, token, false))
            }
            .scope_boxed()
        })
        .await?;
    let shown = StatusPageResponse::of(row, &base_url, token).with_ref(Some(r#ref));
    Ok(if created {
        HttpResponse::Created()
            .insert_header((
                actix_web::http::header::LOCATION,
                format!("/api/v1/status-pages/{}", shown.id),
            ))
            .json(shown)
    } else {
        HttpResponse::Ok().json(shown)
    })
}

/// Deletes the organisation's page `id` (with its ref) and records it, in
/// the caller's transaction (an apply's prune uses it too).
pub(crate) async fn remove(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    id: i64,
    r#ref: Option<&str>,
) -> Result<(), ApiError> {
    let deleted = uptime_db::status_pages::delete(c, user.org_id, id)
        .await?
        .ok_or(ApiError::NotFound)?;
    audit::record(
        c,
        user,
        audit::action::DELETE,
        audit::kind::STATUS_PAGE,
        Some(id),
        audit::changes(Some(&audited(deleted, r#ref)), None),
    )
    .await
}

/// The fields an apply's plan compares, as responses show them.
const COMPARED: &[&str] = &[
    "slug",
    "title",
    "description",
    "logo_url",
    "custom_domain",
    "groups",
    "private",
];

/// What a create body would do to the page with its ref.
pub(crate) enum PagePlan {
    Create {
        page: Box<CheckedPage>,
        private: bool,
    },
    Update {
        stored: Box<StatusPage>,
        page: Box<CheckedPage>,
        private: bool,
        changes: Vec<FieldChange>,
    },
    Unchanged(Box<StatusPage>),
}

impl PagePlan {
    /// The stored id (updates and unchanged).
    pub(crate) fn id(&self) -> Option<i64> {
        match self {
            PagePlan::Create { .. } => None,
            PagePlan::Update { stored, .. } | PagePlan::Unchanged(stored) => Some(stored.id),
        }
    }
}

/// Plans the page `r#ref` of an apply from its resolved spec (a create
/// body), stored as `stored`, exactly as its `PUT .../by-ref/{ref}` would.
/// Reads nothing: its monitors, slug and domain are checked when it is
/// written.
pub(crate) fn plan_page(
    r#ref: &str,
    stored: Option<StatusPage>,
    spec: serde_json::Value,
) -> Result<PagePlan, ApiError> {
    let body: CreateStatusPage =
        serde_json::from_value(spec).map_err(|e| ApiError::invalid_field("spec", e.to_string()))?;
    let (page, private, _) = checked_create(body)?;
    let Some(stored) = stored else {
        return Ok(PagePlan::Create {
            page: Box::new(page),
            private,
        });
    };
    if is_as_stored(&stored, &page, private) {
        return Ok(PagePlan::Unchanged(Box::new(stored)));
    }
    let after = StatusPage {
        slug: page.slug.clone(),
        title: page.title.clone(),
        description: page.description.clone(),
        logo_url: page.logo_url.clone(),
        custom_domain: page.custom_domain.clone(),
        groups: page.groups_json(),
        access_token_sha256: if private {
            stored.access_token_sha256.clone().or(Some(String::new()))
        } else {
            None
        },
        ..stored.clone()
    };
    let changes = crate::apply::changes::diff(
        &audited(stored.clone(), Some(r#ref)),
        &audited(after, Some(r#ref)),
        COMPARED,
    );
    Ok(PagePlan::Update {
        stored: Box::new(stored),
        page: Box::new(page),
        private,
        changes,
    })
}

/// Carries out a plan in the caller's transaction; the page's id. A
/// private page created or made private here gets an access token that
/// nobody sees: its owner issues one with `POST .../{id}/access-token`.
pub(crate) async fn execute_page(
    c: &mut AsyncPgConnection,
    user: &AuthUser,
    r#ref: &str,
    plan: PagePlan,
    limit: i64,
) -> Result<i64, ApiError> {
    Ok(match plan {
        PagePlan::Create { page, private } => {
            let token = private.then(new_access_token);
            let digest = token.as_ref().map(|(_, d)| d.as_str());
            insert(c, user, &page, digest, Some(r#ref), limit).await?.id
        }
        PagePlan::Update {
            stored,
            page,
            private,
            ..
        } => {
            check_reach(c, user, &page).await?;
            rewrite(c, user, *stored, r#ref, &page, private).await?.0.id
        }
        PagePlan::Unchanged(stored) => stored.id,
    })
}
