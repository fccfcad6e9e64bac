//! Retention against real PostgreSQL: one test binary, one module per part.

mod escalations;
mod fixtures;
mod partitions;
mod pruning;
mod runner;
mod subscriptions;
