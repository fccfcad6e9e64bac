//! The whole system in one process, for end-to-end tests and `just bench`.
//!
//! Each service runs from its own library entry point with the settings its
//! binary would read, against the test's own PostgreSQL database and NATS
//! server. This crate is the only place that depends on every service; the
//! services themselves never depend on each other.
//!
//! What every test and stage stands on:
//! - [`stack`]: [`Stack`], the services in one process, and the
//!   [`StackOptions`] that choose which run and how.
//! - [`processes`]: the services as release binaries of their own, for the
//!   stages that need real process boundaries (a `SIGKILL`, CPU per process).
//! - [`due`]: due checks made exactly as the scheduler makes them, and
//!   published in bulk, to drive the pipeline without a scheduler.
//! - [`measure`]: counts from the environment, quantiles, request rates
//!   and counting queries.
//!
//! The stages of `just bench`, one module each:
//! - [`pipeline_bench`]: the pipeline's own parts (plain-request ceiling,
//!   due message to stored row, scheduler lateness).
//! - [`kinds_bench`]: checks per second and CPU per check for each kind.
//! - [`regions_bench`]: three regions beside one.
//! - [`storage_bench`]: a stored result's cost on disk and the read paths on
//!   a table of millions.
//! - [`alert_latency`]: from a failing target to its alert at a receiver.
//! - [`fairness_bench`]: one user's flood must not delay another's reads.
//! - [`status_pages_bench`]: a status page and a badge beside nginx.
//! - [`apply_bench`]: monitoring as code at scale.
//! - [`million`]: a million monitors on this one machine.
//! - [`chaos_bench`]: a three-node JetStream cluster under load, one fault at
//!   a time.
//!
//! - [`soak`]: `scripts/soak.sh`'s driver, the README's stack under a mixed
//!   workload of every feature, judged at its end.

pub mod alert_latency;
pub mod apply_bench;
pub mod chaos_bench;
pub mod due;
pub mod fairness_bench;
pub mod kinds_bench;
pub mod measure;
pub mod million;
pub mod pipeline_bench;
pub mod processes;
pub mod regions_bench;
pub mod soak;
pub mod stack;
pub mod status_pages_bench;
pub mod storage_bench;

pub use due::{publish_all, scheduled_due};
pub(crate) use measure::count;
pub use measure::{env_usize, fresh_connection_rate, percentile, request_rate};
pub use stack::{Stack, StackOptions};
