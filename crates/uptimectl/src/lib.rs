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
//! - `apply`, `plan` and `export` keep the organisation's resources in
//!   files ("monitoring as code"): the file format ([`resource_file`]) and
//!   its JSON Schema ([`resource_schema`], `uptimectl schema`), the plan
//!   and its diff ([`apply`]), and files that reproduce the organisation
//!   ([`export`]).
//!
//! Exit codes: 0 done (or nothing to change), 1 an error (said on stderr,
//! the API's own words), 2 changes planned (`plan`, `apply --dry-run`).

pub mod apply;
pub mod client;
pub mod commands;
pub mod context;
pub mod export;
pub mod kinds;
pub mod output;
pub mod resource_file;
pub mod resource_schema;
pub mod schemas;
pub mod tap;
