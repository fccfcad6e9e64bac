//! The integration tests of `uptime-db`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod audit_log;
mod check_loads;
mod history;
mod migrations;
mod monitor_columns;
mod monitor_counts;
mod organisations_migration;
mod partitioned_results;
mod reach;
mod sealed_contact_secrets;
mod sealed_passwords;
