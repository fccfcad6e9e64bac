//! The integration tests of `recorder`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod alert_rules;
mod audit_relay;
mod common;
mod database_outage;
mod incidents;
mod recording;
mod recovery;
mod rounds;
mod versions;
