//! Declarative apply (`POST /api/v1/apply`, docs/api.md "Monitoring as
//! code"): a whole desired set of resources, named by their refs, answered
//! with a plan (create / update with the changed fields / unchanged /
//! delete) and, unless a dry run, carried out in one transaction.
//!
//! The parts: [`request`] the wire bodies; [`plan`] the pure core (which
//! desired resource matches which stored one, what is deleted, how refs
//! between resources resolve, in which order monitors are created), unit
//! tested without a database; [`changes`] the field-by-field comparison of
//! an update. The route (`routes::apply`) loads the tenant's managed
//! resources with one query per kind, plans every resource through the
//! same validation as its create body (`routes::monitors::plan_one`,
//! `routes::contacts::plan_contact`), and writes through the same paths as
//! the single-resource routes.

pub mod changes;
pub mod plan;
pub mod request;
