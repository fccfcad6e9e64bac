//! The REST API of the uptime service. See `docs/architecture.md` for where it
//! sits; `routes/` has one module per resource.

pub mod api;
pub mod apply;
pub mod audit;
pub mod auth;
pub mod auth_cache;
pub mod authz;
pub mod body_limits;
pub mod error;
pub mod etag;
pub mod idempotency;
pub mod key_revocations;
pub mod key_use;
pub mod keys;
pub mod member_roles;
pub mod middleware;
pub mod openapi;
pub mod principal;
pub mod query_params;
pub mod quotas;
pub mod rate_limit;
pub mod reach;
pub mod refs;
pub mod resource;
pub mod routes;
pub mod sealing;
pub mod settings;
pub mod startup;
pub mod state;
pub mod validation;
pub mod verification;
