//! The operations of status pages and badge tokens (merged into the
//! document by `super::document`). The pages and badges themselves are the
//! status-pages service's, outside this API.

use crate::routes;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    components(schemas(
        routes::status_pages::body::PageGroup,
        routes::status_pages::body::CreateStatusPage,
        routes::status_pages::body::UpdateStatusPage,
        routes::status_pages::body::StatusPageResponse,
        routes::status_pages::body::StatusPageList,
        routes::status_pages::IssuedAccessToken,
        routes::status_pages::badges::IssuedBadgeToken,
        routes::status_pages::notices::NoticeState,
        routes::status_pages::notices::CreateNotice,
        routes::status_pages::notices::AddNoticeUpdate,
        routes::status_pages::notices::NoticeUpdateResponse,
        routes::status_pages::notices::NoticeResponse,
        routes::status_pages::notices::NoticeList,
        routes::status_pages::subscribers::SubscriberResponse,
        routes::status_pages::subscribers::SubscriberList,
    )),
    tags(
        (name = "status-pages", description = "Public status pages of chosen monitors (names and states only), in groups, on the service's domain or a custom one, public or behind an access token; the page's email subscribers (visitors subscribe on the page, double opt-in; each notice and update mails the confirmed ones once); and badge tokens, the unguessable names of monitors in their badge URLs."),
    )
)]
pub(super) struct StatusPagesDoc;
