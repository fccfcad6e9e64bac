//! Declarative apply (`POST /api/v1/apply`, docs/api.md "Monitoring as
//! code"): a whole desired set of resources, named by their refs, answered
//! with a plan (create / update with the changed fields / unchanged /
//! delete) and, unless a dry run, carried out in one transaction.
//!
//! The parts: [`request`] the wire bodies; [`plan`] the pure core (which
//! desired resource matches which stored one, what is deleted, how refs
//! between resources resolve, in which order monitors are created), unit
//! tested without a database; [`changes`] the field-by-field comparison of
//! an update. The route ([`route`]) reads the body; [`run`] is its
//! transaction: [`managed`] loads the tenant's managed resources of every
//! kind and plans each desired one through its kind's
//! `crate::resource::Resource` (the same validation and writes as its
//! `PUT .../by-ref/{ref}`), and [`walk`] writes them kind after kind
//! (monitors in dependency order, the plain creates in bulk).

pub mod changes;
mod end_state;
mod managed;
mod monitor_policy;
pub mod plan;
mod refusals;
pub mod request;
mod route;
mod run;
mod walk;

pub use route::*;
