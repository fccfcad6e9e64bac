//! The OpenAPI 3 document, generated from the handlers' annotations, served at
//! `/api/v1/openapi.json`.

use crate::error::{ErrorBody, FieldError};
use crate::routes;
use actix_web::HttpResponse;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(title = "Uptime API", version = "1", description = "Monitors, alert contacts, API keys, heartbeats, results and uptime. Every error is `{\"error\": ..., \"details\"?: [...]}`."),
    paths(
        routes::api_keys::create,
        routes::api_keys::list,
        routes::api_keys::revoke,
    ),
    components(schemas(ErrorBody, FieldError)),
    modifiers(&BearerAuth),
)]
pub struct ApiDoc;

struct BearerAuth;

impl Modify for BearerAuth {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("upt_...")
                    .build(),
            ),
        );
    }
}

pub async fn serve() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}
