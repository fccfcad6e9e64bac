//! The `/api/v1` scope: the routes of every resource (`routes`) and the
//! OpenAPI document describing them (`openapi`), behind the key check and
//! the refusal of unknown query parameters (which reads that document).
//! Above both, so the routes never name the document that names them.

pub mod scopes;
pub mod table;

use actix_web::web;

/// Registers `/api/v1`: its middleware, the document and every route.
pub fn configure(cfg: &mut web::ServiceConfig) {
    // The middleware's lookups read the table from now on.
    crate::authz::install();
    cfg.service(
        web::scope("/api/v1")
            // Unknown query parameters are refused once the key is
            // checked (the later `wrap` runs first).
            // Innermost: tags the handlers' answers (and refuses `If-Match`
            // where no handler honours it).
            .wrap(actix_web::middleware::from_fn(
                crate::http::etag::tag_responses,
            ))
            .wrap(actix_web::middleware::from_fn(
                crate::http::query_params::refuse_unknown,
            ))
            // A POST with an `Idempotency-Key` is claimed (or replayed)
            // once its key is known and before anything else reads it.
            .wrap(actix_web::middleware::from_fn(
                crate::http::idempotency::idempotency,
            ))
            // Keys are checked before any handler reads a body.
            .wrap(actix_web::middleware::from_fn(
                crate::http::middleware::authenticate,
            ))
            // Outermost: it reads what the key check left, after the
            // response (errors included) is made.
            .wrap(actix_web::middleware::from_fn(
                crate::http::middleware::rate_limit_headers,
            ))
            .route("/openapi.json", web::get().to(crate::openapi::serve))
            .configure(crate::routes::configure),
    );
}
