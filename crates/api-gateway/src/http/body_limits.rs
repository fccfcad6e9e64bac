//! How large a request body may be and how JSON bodies are read: what the
//! server installs for every route (`startup`) and what routes with other
//! bodies (bulk creates, heartbeat pings) start from. Its own module so the
//! server and the routes both take it from below them.

use crate::http::error::extractors;
use actix_web::web;

/// Bodies above this are refused with 413.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The largest body the bulk create takes (an apply's is its own setting,
/// [`APPLY_BODY_BYTES`] by default).
pub const LARGEST_BODY_BYTES: usize = 4 * 1024 * 1024;

/// `POST /api/v1/apply`'s default body limit (`apply.max_body_bytes`): a
/// whole desired set, 10,000 monitors of up to about 3 KB each.
pub const APPLY_BODY_BYTES: usize = 32 * 1024 * 1024;

/// How JSON bodies are read: up to `limit` bytes, any content type, errors
/// as the API's JSON. The application's; a route with bigger bodies (the
/// bulk create) overrides only the limit.
pub fn json_config(limit: usize) -> web::JsonConfig {
    web::JsonConfig::default()
        .limit(limit)
        .content_type_required(false)
        .error_handler(extractors::json)
}
