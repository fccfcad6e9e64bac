//! `uptimectl`: the project's command line.
//!
//! - `tap` shows the NATS subjects, so that watching the system at work
//!   needs nothing but what the project ships: every message pretty-printed,
//!   checked against the JSON Schema of its version (from `proto-schemas/`,
//!   built in), with the trace id its `traceparent` header carries. The
//!   reading of one message ([`tap::Tapped::read`]) is pure and tested
//!   without a server; [`tap::run`] is the thin shell that subscribes.
//! - `get`, `describe`, `check` and `usage` call the REST API ([`commands`])
//!   with the key and URL a [`context`] resolves (flags, environment, or a
//!   config file with named contexts), and print tables, JSON or YAML
//!   ([`output`]).
//!
//! Exit codes: 0 done, 1 an error (said on stderr, the API's own words).

pub mod client;
pub mod commands;
pub mod context;
pub mod output;
pub mod schemas;
pub mod tap;
