//! `uptimectl`: the project's command line. Today it taps the NATS subjects
//! (`uptimectl tap`), so that watching the system at work needs nothing
//! but what the project ships: every message pretty-printed, checked
//! against the JSON Schema of its version (from `proto-schemas/`, built in),
//! with the trace id its `traceparent` header carries.
//!
//! The reading of one message ([`tap::Tapped::read`]) is pure and tested
//! without a server; [`tap::run`] is the thin shell that subscribes.

pub mod schemas;
pub mod tap;
