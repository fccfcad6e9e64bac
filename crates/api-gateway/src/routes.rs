//! Every `/api/v1` route, one module per resource (the scope, its
//! middleware and the OpenAPI document are `crate::api`'s). Each module
//! declares its routes once (`crate::api::table::routes!`); [`all`] walks
//! them, and the actix resources, the scope table (`crate::authz::ROUTES`)
//! and the document's operations all come from that walk.

use crate::api::table::Routes;
use actix_web::web;

pub mod alerts;
pub mod api_keys;
pub mod audit_log;
pub mod checks;
pub mod contacts;
pub mod escalation_policies;
pub mod heartbeats;
pub mod incident_links;
pub mod incidents;
pub mod invitations;
pub mod maintenance_windows;
pub mod members;
pub mod metrics;
pub mod monitors;
pub mod organisation;
pub mod regions;
pub mod status_pages;
pub mod usage;
pub mod values;

/// Every route, in the order actix tries them (relative to `/api/v1`).
pub fn all() -> Routes {
    Routes::default()
        .then(api_keys::routes())
        .then(crate::apply::routes())
        .then(audit_log::routes())
        .then(members::routes())
        .then(invitations::routes())
        .then(organisation::routes())
        .then(monitors::routes())
        .then(escalation_policies::routes())
        .then(checks::routes())
        .then(heartbeats::routes())
        // Before `incidents`: `/incidents/ack/{token}` is the link's.
        .then(incident_links::routes())
        .then(incidents::routes())
        .then(maintenance_windows::routes())
        .then(regions::routes())
        .then(status_pages::routes())
        .then(usage::routes())
        .then(metrics::routes())
        // Before `alerts` and `contacts`: `/alert-contacts/by-ref/{ref}`
        // must not be taken for `/alert-contacts/{id}/...`, nor
        // `/alert-contacts/verify/{token}` for `/alert-contacts/{id}`.
        .then(contacts::by_ref_routes())
        .then(alerts::routes())
        .then(contacts::routes())
}

/// Registers every route, relative to `/api/v1`.
pub fn configure(cfg: &mut web::ServiceConfig) {
    all().configure(cfg);
}
