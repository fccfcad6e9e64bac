//! How large a request body may be and how JSON bodies are read: what the
//! server installs for every route (`startup`) and what routes with other
//! bodies (bulk creates, heartbeat pings) start from. Its own module so the
//! server and the routes both take it from below them.

use crate::error::extractors;
use actix_web::web;

/// Bodies above this are refused with 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The largest body any route takes (the bulk create's).
pub const LARGEST_BODY_BYTES: usize = 4 * 1024 * 1024;

/// How JSON bodies are read: up to `limit` bytes, any content type, errors
/// as the API's JSON. The application's; a route with bigger bodies (the
/// bulk create) overrides only the limit.
pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .content_type_required(false)
        .error_handler(extractors::json)
}
