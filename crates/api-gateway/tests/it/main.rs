//! The integration tests of `api-gateway`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod alerts;
mod api_keys;
mod audit_log;
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
mod key_cache;
mod limits;
mod manual_checks;
mod monitor_kinds;
mod monitor_options;
mod monitor_schedules;
mod monitors;
mod nul_bytes;
mod openapi;
mod ops;
mod organisations;
mod pagination;
mod provider_contacts;
mod quotas;
mod regions;
mod results_retention;
mod sealed_passwords;
mod stream_limits;
mod verification_mail;
