//! Every `/api/v1` route, one module per resource (the scope, its
//! middleware and the OpenAPI document are `crate::api`'s).

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

/// Registers every route, relative to `/api/v1`. Each module registers its
/// own resources.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.configure(api_keys::configure)
        .configure(crate::apply::configure)
        .configure(audit_log::configure)
        .configure(members::configure)
        .configure(invitations::configure)
        .configure(organisation::configure)
        .configure(monitors::configure)
        .configure(escalation_policies::configure)
        .configure(checks::configure)
        .configure(heartbeats::configure)
        // Before `incidents`: `/incidents/ack/{token}` is the link's.
        .configure(incident_links::configure)
        .configure(incidents::configure)
        .configure(maintenance_windows::configure)
        .configure(regions::configure)
        .configure(status_pages::configure)
        .configure(usage::configure)
        .configure(metrics::configure)
        .configure(contacts::configure_by_ref)
        // Before `contacts`: `/alert-contacts/verify/{token}` must not be
        // taken for `/alert-contacts/{id}`.
        .configure(alerts::configure)
        .configure(contacts::configure);
}
