//! `/api/v1/status-pages/{id}/notices`: what a page's owner tells its
//! readers about an incident: a title, a state (investigating, identified,
//! monitoring, resolved) and timestamped updates, shown on the page, in its
//! history and in its Atom feed (served by the status-pages service).
//!
//! Posting a notice, and each update of it, mails the page's confirmed
//! subscribers once ([`super::subscribers::queue_notice_mails`], in the
//! same transaction).
//!
//! Bounded: a page keeps at most `status_pages.max_notices_per_page`
//! notices (adding one past it deletes the oldest resolved ones, in the
//! same transaction: the table's retention) and a notice takes at most
//! `status_pages.max_updates_per_notice` updates.

use super::own_page;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::{ApiError, ErrorBody};
use crate::state::AppState;
use crate::validation::{list_body, ListBody, PageQuery, Problems};
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use serde::{Deserialize, Serialize};
use uptime_db::status_notices::{Notice, NoticeUpdate};
use utoipa::ToSchema;

pub const MAX_TITLE_CHARS: usize = 200;
pub const MAX_BODY_CHARS: usize = 5000;

pub fn routes() -> Routes {
    routes![list: READ,
        create: WRITE,
        get: READ,
        delete: WRITE,
        add_update: WRITE,]
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NoticeState {
    Investigating,
    Identified,
    Monitoring,
    Resolved,
}

impl NoticeState {
    fn as_str(self) -> &'static str {
        match self {
            NoticeState::Investigating => "investigating",
            NoticeState::Identified => "identified",
            NoticeState::Monitoring => "monitoring",
            NoticeState::Resolved => "resolved",
        }
    }

    fn parse(text: &str) -> Self {
        match text {
            "identified" => NoticeState::Identified,
            "monitoring" => NoticeState::Monitoring,
            "resolved" => NoticeState::Resolved,
            _ => NoticeState::Investigating,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateNotice {
    #[schema(min_length = 1, max_length = 200)]
    pub title: String,
    /// Default `investigating`.
    pub state: Option<NoticeState>,
    /// The first update's text (plain text, shown as written).
    #[schema(min_length = 1, max_length = 5000)]
    pub body: String,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct AddNoticeUpdate {
    /// The notice's state from now on.
    pub state: NoticeState,
    #[schema(min_length = 1, max_length = 5000)]
    pub body: String,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NoticeUpdateResponse {
    pub state: NoticeState,
    pub body: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Serialize, ToSchema)]
pub struct NoticeResponse {
    pub id: i64,
    pub status_page_id: i64,
    pub title: String,
    pub state: NoticeState,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub resolved_at: Option<DateTime<Utc>>,
    /// Oldest first.
    pub updates: Vec<NoticeUpdateResponse>,
}

impl NoticeResponse {
    fn of(notice: Notice, updates: &[NoticeUpdate]) -> Self {
        Self {
            id: notice.id,
            status_page_id: notice.page_id,
            title: notice.title,
            state: NoticeState::parse(&notice.state),
            created_at: notice.created_at,
            updated_at: notice.updated_at,
            resolved_at: notice.resolved_at,
            updates: updates
                .iter()
                .filter(|u| u.notice_id == notice.id)
                .map(|u| NoticeUpdateResponse {
                    state: NoticeState::parse(&u.state),
                    body: u.body.clone(),
                    created_at: u.created_at,
                })
                .collect(),
        }
    }
}

list_body!(NoticeList, notices: NoticeResponse);

fn check_body(problems: &mut Problems, body: &str) {
    if body.trim().is_empty() {
        problems.add("body", "must not be empty");
    }
    problems.check_len("body", body, MAX_BODY_CHARS);
}

/// Post a notice on a page, with its first update.
#[utoipa::path(post, path = "/api/v1/status-pages/{id}/notices", operation_id = "createStatusPageNotice", tag = "status-pages",
    request_body = CreateNotice, params(("id" = i64, Path, description = "Status page id")),
    responses((status = 201, body = NoticeResponse)))]
pub async fn create(
    state: web::Data<AppState>,
    user: AuthUser,
    page_id: web::Path<i64>,
    body: crate::validation::Json<CreateNotice>,
) -> Result<HttpResponse, ApiError> {
    let page_id = page_id.into_inner();
    let body = body.into_inner();
    let title = body.title.trim().to_string();
    let mut problems = Problems::new();
    if title.is_empty() {
        problems.add("title", "must not be empty");
    }
    problems.check_len("title", &title, MAX_TITLE_CHARS);
    check_body(&mut problems, &body.body);
    problems.into_result()?;
    let notice_state = body.state.unwrap_or(NoticeState::Investigating);
    let keep = state.settings.status_pages.max_notices_per_page;
    let app = state.get_ref();
    let mut conn = state.conn().await?;
    let created = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                own_page(c, &user, page_id).await?;
                let (notice, update) = uptime_db::status_notices::create(
                    c,
                    user.org_id,
                    page_id,
                    &title,
                    notice_state.as_str(),
                    &body.body,
                    keep,
                )
                .await?;
                super::subscribers::queue_notice_mails(c, app, page_id, &notice, &update, true)
                    .await?;
                let shown = NoticeResponse::of(notice, std::slice::from_ref(&update));
                audit::record(
                    c,
                    &user,
                    audit::action::CREATE,
                    audit::kind::STATUS_PAGE_NOTICE,
                    Some(shown.id),
                    audit::changes(None, Some(&audit::shown(&shown))),
                )
                .await?;
                Ok(shown)
            }
            .scope_boxed()
        })
        .await?;
    Ok(crate::http::response::created(
        format!("/api/v1/status-pages/{page_id}/notices/{}", created.id),
        created,
    ))
}

/// Add an update to a notice; the notice takes its state (`resolved`
/// resolves it).
#[utoipa::path(post, path = "/api/v1/status-pages/{id}/notices/{notice_id}/updates", operation_id = "addStatusPageNoticeUpdate", tag = "status-pages",
    request_body = AddNoticeUpdate,
    params(("id" = i64, Path, description = "Status page id"), ("notice_id" = i64, Path, description = "Notice id")),
    responses((status = 200, body = NoticeResponse),
        (status = 409, body = ErrorBody, description = "`conflict` on `updates`: the notice has `status_pages.max_updates_per_notice` updates")))]
pub async fn add_update(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(i64, i64)>,
    body: crate::validation::Json<AddNoticeUpdate>,
) -> Result<HttpResponse, ApiError> {
    let (page_id, notice_id) = path.into_inner();
    let body = body.into_inner();
    let mut problems = Problems::new();
    check_body(&mut problems, &body.body);
    problems.into_result()?;
    let max_updates = state.settings.status_pages.max_updates_per_notice;
    let app = state.get_ref();
    let mut conn = state.conn().await?;
    let changed = conn
        .transaction::<_, ApiError, _>(|c| {
            async move {
                own_page(c, &user, page_id).await?;
                let before = uptime_db::status_notices::get(c, page_id, notice_id, true)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                if uptime_db::status_notices::update_count(c, notice_id).await? >= max_updates {
                    return Err(ApiError::ConflictOn {
                        field: "updates",
                        message: format!("a notice takes at most {max_updates} updates; post a new notice"),
                    });
                }
                let update = uptime_db::status_notices::add_update(c, page_id, notice_id, body.state.as_str(), &body.body)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                let after = uptime_db::status_notices::get(c, page_id, notice_id, false)
                    .await?
                    .ok_or(ApiError::NotFound)?;
                // Each update mails the subscribers too: they follow an
                // incident through to "resolved" (docs/architecture.md).
                super::subscribers::queue_notice_mails(c, app, page_id, &after, &update, false).await?;
                let updates = uptime_db::status_notices::updates_of(c, &[notice_id]).await?;
                // The notice's own fields before and after (its state, times),
                // plus the update added.
                let mut changes = audit::changes(
                    Some(&audit::shown(&NoticeResponse::of(before, &[]))),
                    Some(&audit::shown(&NoticeResponse::of(after.clone(), &[]))),
                );
                let shown = NoticeResponse::of(after, &updates);
                changes["update"] = serde_json::json!({"before": null, "after": {"state": body.state, "body": body.body}});
                audit::record(c, &user, audit::action::UPDATE, audit::kind::STATUS_PAGE_NOTICE, Some(notice_id), changes)
                    .await?;
                Ok(shown)
            }
            .scope_boxed()
        })
        .await?;
    Ok(HttpResponse::Ok().json(changed))
}

/// The page's notices by id, a page at a time, each with its updates.
#[utoipa::path(get, path = "/api/v1/status-pages/{id}/notices", operation_id = "listStatusPageNotices", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id"), PageQuery),
    responses((status = 200, body = NoticeList)))]
pub async fn list(
    state: web::Data<AppState>,
    user: AuthUser,
    page_id: web::Path<i64>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, ApiError> {
    let page_id = page_id.into_inner();
    let page = query.keyset()?;
    let mut conn = state.conn().await?;
    own_page(&mut conn, &user, page_id).await?;
    let (rows, next_cursor) = page
        .fetch(
            |after, n| uptime_db::status_notices::list(&mut conn, page_id, after.unwrap_or(0), n),
            |n| n.id,
        )
        .await?;
    let ids: Vec<i64> = rows.iter().map(|n| n.id).collect();
    let updates = uptime_db::status_notices::updates_of(&mut conn, &ids).await?;
    Ok(NoticeList::response(rows, next_cursor, |n| {
        NoticeResponse::of(n, &updates)
    }))
}

/// One notice of the page, with its updates.
#[utoipa::path(get, path = "/api/v1/status-pages/{id}/notices/{notice_id}", operation_id = "getStatusPageNotice", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id"), ("notice_id" = i64, Path, description = "Notice id")),
    responses((status = 200, body = NoticeResponse)))]
pub async fn get(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, ApiError> {
    let (page_id, notice_id) = path.into_inner();
    let mut conn = state.conn().await?;
    own_page(&mut conn, &user, page_id).await?;
    let notice = uptime_db::status_notices::get(&mut conn, page_id, notice_id, false)
        .await?
        .ok_or(ApiError::NotFound)?;
    let updates = uptime_db::status_notices::updates_of(&mut conn, &[notice_id]).await?;
    Ok(HttpResponse::Ok().json(NoticeResponse::of(notice, &updates)))
}

/// Delete a notice (it leaves the page, its history and its feed).
#[utoipa::path(delete, path = "/api/v1/status-pages/{id}/notices/{notice_id}", operation_id = "deleteStatusPageNotice", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id"), ("notice_id" = i64, Path, description = "Notice id")),
    responses((status = 204)))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, ApiError> {
    let (page_id, notice_id) = path.into_inner();
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            own_page(c, &user, page_id).await?;
            let deleted = uptime_db::status_notices::delete(c, page_id, notice_id)
                .await?
                .ok_or(ApiError::NotFound)?;
            let shown = audit::shown(&NoticeResponse::of(deleted, &[]));
            audit::record(
                c,
                &user,
                audit::action::DELETE,
                audit::kind::STATUS_PAGE_NOTICE,
                Some(notice_id),
                audit::changes(Some(&shown), None),
            )
            .await?;
            Ok(())
        }
        .scope_boxed()
    })
    .await?;
    Ok(HttpResponse::NoContent().finish())
}
