//! The operations of an organisation's membership: the organisation itself,
//! its members and invitations (merged into the document by
//! `super::document`).

use crate::routes;
use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    paths(
        routes::organisation::get,
        routes::organisation::rename,
        routes::organisation::delete,
        routes::members::list,
        routes::members::get,
        routes::members::update,
        routes::members::remove,
        routes::invitations::create,
        routes::invitations::list,
        routes::invitations::get,
        routes::invitations::revoke,
        routes::invitations::accept,
        routes::invitations::mail::resend,
    ),
    tags(
        (name = "organisation", description = "The key's organisation: what it holds, its name, and deleting it with everything of it."),
        (name = "members", description = "Who belongs to the organisation and with which role (owner, admin, editor, viewer): members, role changes, removal and leaving, and invitations by email."),
    )
)]
pub(super) struct TeamsDoc;
