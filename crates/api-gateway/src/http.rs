//! What every route shares as HTTP, below the routes and above the
//! database.
//!
//! - [`error`]: `ApiError`, the one place errors become responses.
//! - [`validation`]: collecting field problems, the JSON body extractor,
//!   URL and host checks, and keyset pages and their cursors.
//! - [`etag`]: entity tags and `If-Match`; [`idempotency`]: replaying a
//!   POST sent again with its `Idempotency-Key`.
//! - [`query_params`]: refusing unknown query parameters; [`body_limits`]:
//!   how large a body may be and how JSON is read.
//! - [`response`]: the `201 Created` answer and its `Location`.
//! - [`rate_limit`]: the token buckets; [`middleware`]: the request span
//!   and metrics, authentication ahead of the handlers, the `RateLimit`
//!   headers.

pub mod body_limits;
pub mod error;
pub mod etag;
pub mod idempotency;
pub mod middleware;
pub mod query_params;
pub mod rate_limit;
pub mod response;
pub mod validation;
