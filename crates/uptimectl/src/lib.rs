//! `uptimectl`: the project's command line.
//!
//! - [`tap`]: `uptimectl tap` shows the NATS subjects, every message
//!   pretty-printed and checked against the JSON Schema of its version, with
//!   the trace id of its `traceparent`, so watching the system at work needs
//!   nothing but what the project ships. Reading one message
//!   ([`tap::Tapped::read`]) is pure and tested without a server;
//!   [`tap::run`] is the thin shell that subscribes.
//! - [`schemas`]: the JSON Schemas of every live message version, built in
//!   from `proto-schemas/`, so a tap validates what this release publishes.
//! - [`commands`]: `get`, `describe`, `check` and `usage`, which call the REST
//!   API and return what they print.
//! - [`client`]: the REST API as the commands use it (JSON in and out, the
//!   API's own errors, lists followed to their end).
//! - [`context`]: where the API is and which key to use (flags, environment,
//!   or a config file with named contexts).
//! - [`output`]: tables for people, JSON or YAML for scripts.
//! - [`resource_file`]: the file format of `apply`, `plan` and `export`
//!   ("monitoring as code"), and [`resource_schema`], its JSON Schema
//!   (`uptimectl schema`), so editors check files as they are written.
//! - [`kinds`]: the resource kinds the files hold, and what the format needs
//!   to know of each (where the API keeps them, which fields refer to other
//!   resources).
//! - [`apply`]: `apply` and `plan`, the plan and its diff.
//! - [`export`]: files that reproduce the organisation.
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
