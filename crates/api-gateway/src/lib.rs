//! The REST API of the uptime service: `/api/v1` over PostgreSQL (through
//! `uptime-db`) and NATS. See `docs/architecture.md` for where it sits.
//!
//! - [`startup`] builds the server from [`settings`]; [`state`] is what
//!   every handler reaches (the pool, NATS, the limiters and caches).
//! - [`api`] mounts `/api/v1`: the middleware, [`openapi`] (the document,
//!   generated from the handlers) and [`routes`] (one module per resource).
//! - [`http`]: what every route shares as HTTP — errors, JSON bodies and
//!   their validation, cursors, ETags, idempotency keys, query parameters,
//!   body limits, rate limits, the `201 Created` answer and the request
//!   middleware.
//! - [`access`]: who is calling — API keys, the principal they carry, their
//!   authentication (and its caches), their use, their revocation on every
//!   replica, the roles of members and the monitors a key reaches;
//!   [`authz`] is the table of which scope each route needs.
//! - [`audit`]: the audit log's entries and the one rule of an update;
//!   [`quotas`]: per-organisation limits; [`refs`]: the caller-chosen name
//!   of a resource; [`apply`]: planning a declarative apply.
//! - [`sealing`]: stored secrets sealed with the current key;
//!   [`verification`]: the tokens of verification and invitation links;
//!   [`metrics_pages`]: the cache of built `/metrics` pages.

pub mod access;
pub mod api;
pub mod apply;
pub mod audit;
pub mod authz;
pub mod http;
pub mod metrics_pages;
pub mod openapi;
pub mod quotas;
pub mod refs;
pub mod resource;
pub mod routes;
pub mod sealing;
pub mod settings;
pub mod startup;
pub mod state;
pub mod verification;

// The modules' paths before they were grouped, which the routes use.
pub use access::{
    auth, auth_cache, key_revocations, key_use, keys, member_roles, principal, reach,
};
pub use http::{
    body_limits, error, etag, idempotency, middleware, query_params, rate_limit, validation,
};
