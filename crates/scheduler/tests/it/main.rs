//! The integration tests of `scheduler`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod catchup;
mod cluster;
mod common;
mod database_outage;
mod due_checks;
mod heartbeats;
mod leadership;
mod regions;
mod sealed_passwords;
mod service;
