//! Bounded storage. Everything that grows has a retention rule here:
//!
//! - [`partitions`]: `check_results` is partitioned by time; partitions are
//!   created ahead and dropped once they fall behind `results_days`.
//! - [`pruning`]: alert deliveries and their attempts, published outbox
//!   rows, expired verification tokens and old rollups go in small batches.
//! - [`runner`]: runs both periodically on one replica at a time (a lease),
//!   and reports what it removed in metrics.
//! - [`settings`]: the `retention` section of a service's configuration
//!   (how long each thing is kept, how often a round runs).

pub mod partitions;
pub mod pruning;
pub mod runner;
pub mod settings;

pub use settings::RetentionSettings;

/// Why a maintenance step failed.
#[derive(Debug, thiserror::Error)]
pub enum RetentionError {
    #[error(transparent)]
    Db(#[from] uptime_db::DbError),
}

impl From<diesel::result::Error> for RetentionError {
    fn from(e: diesel::result::Error) -> Self {
        RetentionError::Db(e.into())
    }
}
