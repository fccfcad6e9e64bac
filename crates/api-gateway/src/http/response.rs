//! The answers every route gives the same way.

use actix_web::HttpResponse;
use serde::Serialize;

/// `201 Created` with `body`, its `Location` the new resource's path.
pub fn created(location: String, body: impl Serialize) -> HttpResponse {
    HttpResponse::Created()
        .insert_header((actix_web::http::header::LOCATION, location))
        .json(body)
}
