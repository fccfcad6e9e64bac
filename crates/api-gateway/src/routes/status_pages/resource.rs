//! Status pages as a [`Resource`]: `PUT`, `GET` and `DELETE` by ref,
//! `GET`/`DELETE` by id, the list, and each page of an apply, all through
//! `crate::resource`. A key with a label selector reaches only the pages
//! showing monitors within its reach ([`reached_page`]).

use super::body::{CheckedPage, CreateStatusPage, StatusPageList, StatusPageResponse};
use super::writes::{audited, checked_create, insert, is_as_stored, remove, rewrite};
use super::{check_reach, new_access_token, reached_page};
use crate::apply::changes::FieldChange;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::reach::Named;
use crate::resource::ref_param::PageRef;
use crate::resource::routes::kind_routes;
use crate::resource::{resource_kind, Listed, Resource};
use crate::state::AppState;
use diesel_async::AsyncPgConnection;
use uptime_db::status_pages::StatusPage;

pub struct Pages;

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

impl Resource for Pages {
    resource_kind!(StatusPage at "/api/v1/status-pages");
    type Create = CreateStatusPage;
    type Stored = StatusPage;
    /// The page, and whether it is private.
    type Checked = (CheckedPage, bool);
    type Shown = StatusPageResponse;
    /// A private page's new access token, answered once.
    type Extra = Option<String>;

    fn shown(
        state: &AppState,
        stored: &StatusPage,
        r#ref: Option<&str>,
    ) -> Result<StatusPageResponse, ApiError> {
        let base_url = &state.settings.status_pages.public_base_url;
        Ok(StatusPageResponse::of(stored.clone(), base_url, None)
            .with_ref(r#ref.map(str::to_string)))
    }

    async fn get(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        id: i64,
        lock: bool,
    ) -> Result<StatusPage, ApiError> {
        reached_page(c, user, id, lock).await
    }

    /// The groups' monitors are looked up (within the key's reach) unless
    /// `placeholders`; the slug and domain when the page is written.
    async fn check(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        _: &str,
        body: CreateStatusPage,
        _: Option<&StatusPage>,
        placeholders: bool,
    ) -> Result<(CheckedPage, bool), ApiError> {
        let (page, private, _) = checked_create(body)?;
        if !placeholders {
            check_reach(c, user, &page).await?;
        }
        Ok((page, private))
    }

    fn compare(
        _: &AppState,
        stored: &StatusPage,
        (page, private): &(CheckedPage, bool),
        r#ref: &str,
    ) -> Result<Option<Vec<FieldChange>>, ApiError> {
        if is_as_stored(stored, page, *private) {
            return Ok(None);
        }
        let after = StatusPage {
            slug: page.slug.clone(),
            title: page.title.clone(),
            description: page.description.clone(),
            logo_url: page.logo_url.clone(),
            custom_domain: page.custom_domain.clone(),
            groups: page.groups_json(),
            access_token_sha256: if *private {
                stored.access_token_sha256.clone().or(Some(String::new()))
            } else {
                None
            },
            ..stored.clone()
        };
        Ok(Some(crate::apply::changes::diff(
            &audited(stored.clone(), Some(r#ref)),
            &audited(after, Some(r#ref)),
            COMPARED,
        )))
    }

    /// A private page gets an access token; an apply's is seen by nobody
    /// (its owner issues one with `POST .../{id}/access-token`).
    async fn insert(
        c: &mut AsyncPgConnection,
        state: &AppState,
        user: &AuthUser,
        (page, private): &(CheckedPage, bool),
        r#ref: &str,
        _: bool,
    ) -> Result<(StatusPage, Option<String>), ApiError> {
        let limit = state.settings.status_pages.max_pages_per_org;
        let token = private.then(new_access_token);
        let digest = token.as_ref().map(|(_, d)| d.as_str());
        let row = insert(c, user, page, digest, Some(r#ref), limit).await?;
        Ok((row, token.map(|(raw, _)| raw)))
    }

    /// Issues or drops the access token as `private` asks (a private page
    /// keeps the token it has).
    async fn rewrite(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &StatusPage,
        (page, private): &(CheckedPage, bool),
        r#ref: &str,
        _: bool,
    ) -> Result<(StatusPage, Option<String>), ApiError> {
        rewrite(c, user, stored.clone(), r#ref, page, *private).await
    }

    async fn remove(
        c: &mut AsyncPgConnection,
        _: &AppState,
        user: &AuthUser,
        stored: &StatusPage,
        r#ref: Option<&str>,
    ) -> Result<(), ApiError> {
        remove(c, user, stored.id, r#ref).await
    }

    async fn answered(
        state: &AppState,
        row: StatusPage,
        r#ref: &str,
        token: Option<String>,
        _: bool,
    ) -> Result<StatusPageResponse, ApiError> {
        let base_url = &state.settings.status_pages.public_base_url;
        Ok(StatusPageResponse::of(row, base_url, token).with_ref(Some(r#ref.to_string())))
    }
}

impl Listed for Pages {
    type List = StatusPageList;

    fn list(status_pages: Vec<StatusPageResponse>, next_cursor: Option<String>) -> StatusPageList {
        StatusPageList {
            status_pages,
            next_cursor,
        }
    }

    async fn page(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        after_id: i64,
        limit: i64,
    ) -> Result<Vec<StatusPage>, ApiError> {
        Ok(uptime_db::status_pages::list_page(c, user.org_id, after_id, limit).await?)
    }

    async fn reached(
        c: &mut AsyncPgConnection,
        user: &AuthUser,
        rows: Vec<StatusPage>,
    ) -> Result<Vec<StatusPage>, ApiError> {
        Ok(crate::reach::covered(c, user, rows, |p| Named::page_groups(&p.groups)).await?)
    }
}

kind_routes! {
    Pages at "/api/v1/status-pages", tag "status-pages", PageRef,
    shows StatusPageResponse, creates CreateStatusPage;
    id "Status page id";
    no_ref "no page of the organisation has this ref (`ref`)";

    /// One status page of the organisation.
    get "getStatusPage" => get;

    /// Delete a status page: it stops being served at the service's next
    /// refresh.
    delete "deleteStatusPage" => delete;

    /// Read the organisation's status page with this ref: what
    /// `GET /api/v1/status-pages/{id}` answers for its id.
    get_by_ref "getStatusPageByRef" => get_status_page_by_ref;

    /// Delete the organisation's status page with this ref, as
    /// `DELETE /api/v1/status-pages/{id}` does (one audit entry).
    delete_by_ref "deleteStatusPageByRef" => delete_status_page_by_ref;

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
    put_by_ref "putStatusPageByRef" => put_status_page_by_ref,
        forbidden "`quota exceeded`: the organisation has `status_pages.max_pages_per_org` pages",
        conflict "`conflict` on `slug` or `custom_domain` (another page has it), or on `ref` (another request created a page with it meanwhile, or, for a key with a label selector, a page out of its reach has it; the message does not say which)";

    /// The organisation's status pages by id, a page at a time (never the
    /// access tokens).
    list "listStatusPages" => list, StatusPageList;
}
