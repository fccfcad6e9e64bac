//! The integration tests of `system-tests`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod alert_rules;
mod architecture;
mod cluster;
mod common;
mod doc_keys;
mod doc_markdown;
mod doc_paths;
mod doc_tables;
mod doc_version_names;
mod doc_versions;
mod end_to_end;
mod escalation;
mod event_filters;
mod kinds;
mod maintenance;
mod provider_receiver;
mod providers;
mod regions;
mod status_page_subscriptions;
mod traces;
