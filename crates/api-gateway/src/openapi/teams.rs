//! The operations of an organisation's membership: the organisation itself,
//! its members and invitations (merged into the document by
//! `super::document`).

use utoipa::OpenApi;

#[derive(OpenApi)]
#[openapi(
    tags(
        (name = "organisation", description = "The key's organisation: what it holds, its name, and deleting it with everything of it."),
        (name = "members", description = "Who belongs to the organisation and with which role (owner, admin, editor, viewer): members, role changes, removal and leaving, and invitations by email."),
    )
)]
pub(super) struct TeamsDoc;
