//! `uptimectl tap` against a real nats-server and the contracts' own
//! messages, and the reading of messages it makes.

mod rest;
mod tap;
