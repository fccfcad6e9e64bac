//! The integration tests of `checker`: one binary (linked once), a module
//! per area, sharing the harness modules.

mod assertions;
mod common;
mod delivery;
mod dns_checks;
mod dns_isolation;
mod http_checks;
mod http_requests;
mod icmp_checks;
mod regions;
mod sealed_passwords;
mod tcp_checks;
mod tls_checks;
