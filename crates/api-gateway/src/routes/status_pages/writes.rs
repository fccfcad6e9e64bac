//! The writes of a status page that `POST`, `PATCH`, `DELETE` and the
//! page as a `crate::resource::Resource` (`PUT .../by-ref/{ref}`, an
//! apply) share: the create body checked, the insert, the replacement and
//! the delete, each with its audit entry.

use super::body::{CheckedPage, CreateStatusPage, StatusPageResponse};
use super::{check_reach, ensure_free, set_privacy, REF_KIND};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::validation::Problems;
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncPgConnection;
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

/// The columns `page` writes, its groups as stored.
pub(super) fn fields_of<'a>(
    page: &'a CheckedPage,
    groups: &'a serde_json::Value,
) -> PageFields<'a> {
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
pub(super) fn is_as_stored(stored: &StatusPage, page: &CheckedPage, private: bool) -> bool {
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
pub(super) async fn rewrite(
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
    let before = audited(stored.clone(), Some(r#ref));
    let (fields, org_id) = (fields_of(page, &groups), user.org_id);
    let written = audit::update(
        c,
        user,
        audit::kind::STATUS_PAGE,
        Some(id),
        &before,
        move |c| {
            async move {
                let updated = uptime_db::status_pages::update(c, org_id, id, &fields)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let (updated, token) = set_privacy(c, org_id, updated, Some(private)).await?;
                let after = audited(updated.clone(), Some(r#ref));
                Ok(((updated, token), after))
            }
            .scope_boxed()
        },
    )
    .await?;
    Ok(written.unwrap_or((stored, None)))
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
