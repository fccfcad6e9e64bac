//! The notifier's integration tests: one binary, a real notifier in-process
//! against its own PostgreSQL database and NATS server, real loopback
//! receivers and a real SMTP listener.

mod batches;
mod channels;
mod common;
mod escalation;
mod leases;
mod ordering;
mod page_mails;
mod regions;
mod reliability;
mod versions;
