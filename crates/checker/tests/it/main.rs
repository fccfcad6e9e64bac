//! The integration tests of `checker`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod common;
mod delivery;
mod http_checks;
