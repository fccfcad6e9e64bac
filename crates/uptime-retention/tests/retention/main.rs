//! Retention against real PostgreSQL: one test binary, one module per part.

mod pruning;
mod runner;
