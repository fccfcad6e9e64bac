//! Every `/api/v1` route, one module per resource.

use actix_web::web;

pub mod alerts;
pub mod api_keys;
pub mod audit_log;
pub mod checks;
pub mod contacts;
pub mod heartbeats;
pub mod monitors;
pub mod regions;
pub mod usage;
pub mod values;

/// Registers every route. Each module registers its own resources.
pub fn configure(cfg: &mut web::ServiceConfig) {
    cfg.service(
        web::scope("/api/v1")
            // Unknown query parameters are refused once the key is
            // checked (the later `wrap` runs first).
            .wrap(actix_web::middleware::from_fn(
                crate::query_params::refuse_unknown,
            ))
            // Keys are checked before any handler reads a body.
            .wrap(actix_web::middleware::from_fn(
                crate::middleware::authenticate,
            ))
            .route("/openapi.json", web::get().to(crate::openapi::serve))
            .configure(api_keys::configure)
            .configure(audit_log::configure)
            .configure(monitors::configure)
            .configure(checks::configure)
            .configure(heartbeats::configure)
            .configure(regions::configure)
            .configure(usage::configure)
            // Before `contacts`: `/alert-contacts/verify/{token}` must not
            // be taken for `/alert-contacts/{id}`.
            .configure(alerts::configure)
            .configure(contacts::configure),
    );
}
