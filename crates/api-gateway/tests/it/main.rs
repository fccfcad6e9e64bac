//! The integration tests of `api-gateway`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod alerts;
mod api_keys;
mod audit_log;
mod audit_members;
mod authz;
mod bulk_monitors;
mod check_support;
mod checks;
mod common;
mod contacts;
mod conventions;
mod errors;
mod fuzz;
mod heartbeats;
mod invitation_mail;
mod key_cache;
mod key_use;
mod limits;
mod manual_checks;
mod members;
mod monitor_kinds;
mod monitor_options;
mod monitor_schedules;
mod monitors;
mod nul_bytes;
mod openapi;
mod ops;
mod organisations;
mod pagination;
mod quotas;
mod regions;
mod results_retention;
mod sealed_passwords;
mod stream_limits;
mod verification_mail;
