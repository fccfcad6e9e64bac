//! `uptimectl` against a real nats-server and a real api-gateway, run as
//! the binary a user runs.

mod apply;
mod export;
mod harness;
mod plan_limits;
mod resource_schema;
mod rest;
mod tap;
