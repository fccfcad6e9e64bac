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
        routes::checks::check_now,
        routes::checks::results,
        routes::checks::daily_uptime,
        routes::heartbeats::ping,
        routes::heartbeats::fail,
        routes::monitors::create,
        routes::monitors::list,
        routes::monitors::get,
        routes::monitors::update,
        routes::monitors::delete,
        routes::contacts::create,
        routes::contacts::list,
        routes::contacts::get,
        routes::contacts::update,
        routes::contacts::delete,
        routes::alerts::verify,
        routes::alerts::send_test,
        routes::alerts::deliveries,
    ),
    components(schemas(
        ErrorBody,
        FieldError,
        routes::alerts::Verified,
        routes::alerts::TestSent,
        routes::alerts::DeliveryList,
        routes::alerts::DeliveryLog,
        routes::alerts::AttemptLog,
        routes::monitors::MonitorType,
        routes::monitors::KeywordType,
        routes::monitors::MonitorStatus,
        routes::monitors::CreateMonitor,
        routes::monitors::UpdateMonitor,
        routes::monitors::MonitorResponse,
        routes::monitors::MonitorList,
        routes::contacts::ContactType,
        routes::contacts::CreateContact,
        routes::contacts::UpdateContact,
        routes::contacts::ContactResponse,
        routes::contacts::ContactList,
    )),
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
