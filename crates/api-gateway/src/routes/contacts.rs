//! (being written)

pub fn configure(_cfg: &mut actix_web::web::ServiceConfig) {}
