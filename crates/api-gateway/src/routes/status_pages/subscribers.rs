//! `/api/v1/status-pages/{id}/subscribers`: the page's email subscribers,
//! for its owner to read and remove. Visitors subscribe on the page itself
//! (the status-pages service, double opt-in); nothing here adds one.
//!
//! Also [`queue_notice_mails`]: the mails a notice (or an update of one)
//! sends to the page's confirmed subscribers, written in the transaction
//! that writes the update, so that the update and its mails exist together
//! or not at all. One mail per (update, subscriber), unique in the table:
//! the notifier sends each once (see docs/architecture.md).
//!
//! Addresses are personal data: they are shown to the owner here and
//! nowhere else, and the audit entry of a removal names the subscriber's id,
//! not its address.

use super::own_page;
use crate::api::table::{routes, Routes};
use crate::audit;
use crate::auth::AuthUser;
use crate::error::ApiError;
use crate::state::AppState;
use crate::validation::{list_body, ListBody, PageQuery};
use actix_web::{web, HttpResponse};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::{AsyncConnection, AsyncPgConnection};
use serde::Serialize;
use serde_json::json;
use uptime_db::status_notices::{Notice, NoticeUpdate};
use uptime_db::status_subscriptions::Subscriber;
use utoipa::ToSchema;

pub fn routes() -> Routes {
    routes![list: READ, delete: WRITE]
}

#[derive(Debug, Serialize, ToSchema)]
pub struct SubscriberResponse {
    pub id: i64,
    pub status_page_id: i64,
    pub email: String,
    /// `pending` until the address confirms (pending ones expire after
    /// the retention's `pending_subscription_hours`), then `confirmed`.
    #[schema(example = "confirmed")]
    pub state: String,
    pub created_at: DateTime<Utc>,
    pub confirmed_at: Option<DateTime<Utc>>,
}

impl SubscriberResponse {
    fn of(s: Subscriber) -> Self {
        Self {
            id: s.id,
            status_page_id: s.page_id,
            state: if s.confirmed_at.is_some() {
                "confirmed"
            } else {
                "pending"
            }
            .into(),
            email: s.email,
            created_at: s.created_at,
            confirmed_at: s.confirmed_at,
        }
    }
}

list_body!(SubscriberList, subscribers: SubscriberResponse);

/// The page's subscribers by id, a page at a time.
#[utoipa::path(get, path = "/api/v1/status-pages/{id}/subscribers", operation_id = "listStatusPageSubscribers", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id"), PageQuery),
    responses((status = 200, body = SubscriberList)))]
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
    SubscriberList::respond(
        page,
        |after, n| uptime_db::status_subscriptions::list(&mut conn, page_id, after.unwrap_or(0), n),
        |s| s.id,
        SubscriberResponse::of,
    )
    .await
}

/// Remove a subscriber (it gets no more mail; its queued ones are dropped).
#[utoipa::path(delete, path = "/api/v1/status-pages/{id}/subscribers/{subscriber_id}", operation_id = "deleteStatusPageSubscriber", tag = "status-pages",
    params(("id" = i64, Path, description = "Status page id"), ("subscriber_id" = i64, Path, description = "Subscriber id")),
    responses((status = 204)))]
pub async fn delete(
    state: web::Data<AppState>,
    user: AuthUser,
    path: web::Path<(i64, i64)>,
) -> Result<HttpResponse, ApiError> {
    let (page_id, subscriber_id) = path.into_inner();
    let mut conn = state.conn().await?;
    conn.transaction::<_, ApiError, _>(|c| {
        async move {
            own_page(c, &user, page_id).await?;
            let removed = uptime_db::status_subscriptions::delete(c, page_id, subscriber_id)
                .await?
                .ok_or(ApiError::NotFound)?;
            // The address stays out of the audit log (kept a year).
            let shown = json!({
                "status_page_id": page_id,
                "state": if removed.confirmed_at.is_some() { "confirmed" } else { "pending" },
            });
            audit::record(
                c,
                &user,
                audit::action::DELETE,
                audit::kind::STATUS_PAGE_SUBSCRIBER,
                Some(subscriber_id),
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

/// Queues the mail of `update` (of `notice`, on the page `page_id`) to each
/// confirmed subscriber of the page; call it in the transaction that wrote
/// the update. A private page mails nobody: its notices are for holders of
/// its token, and it takes no subscriptions.
pub async fn queue_notice_mails(
    conn: &mut AsyncPgConnection,
    state: &AppState,
    page_id: i64,
    notice: &Notice,
    update: &NoticeUpdate,
    first: bool,
) -> Result<u64, ApiError> {
    let Some(page) = uptime_db::status_pages::get(conn, notice.org_id, page_id, false).await?
    else {
        return Ok(0);
    };
    if page.access_token_sha256.is_some() {
        return Ok(0);
    }
    let base = state
        .settings
        .status_pages
        .public_base_url
        .trim_end_matches('/');
    let payload = json!({
        "page_title": page.title,
        "page_url": format!("{base}/status/{}", page.slug),
        "links_base": base,
        "notice_title": notice.title,
        "state": update.state,
        "body": update.body,
        "first": first,
    });
    let queued =
        uptime_db::status_subscriptions::queue_notice_mails(conn, page_id, update.id, &payload)
            .await?;
    metrics::counter!("status_page_notice_mails_queued_total").increment(queued);
    Ok(queued)
}
