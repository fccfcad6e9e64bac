//! The integration tests of `status-pages`: a real service on a free port
//! over its own migrated database, one module per area.

mod badges;
mod browser;
mod common;
mod methods;
mod notices;
mod pages;
mod subscriptions;
