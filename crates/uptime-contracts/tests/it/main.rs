//! The integration tests of `uptime-contracts`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod credentials;
mod presence;
mod schemas;
mod server_list;
mod stream_limits;
mod versions;
