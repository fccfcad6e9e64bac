//! Who is calling, and what their key may reach.
//!
//! - [`keys`]: the raw keys and their digests; [`principal`]: the caller a
//!   key stands for (`AuthUser`), plain data; [`reach`]: the monitors a
//!   key's label selector reaches.
//! - [`auth`]: the bearer check and its extractor; [`auth_cache`]: the
//!   short memories of known and unknown keys; [`key_use`]: a key's last
//!   use and its audit entry; [`key_revocations`]: telling every replica a
//!   key is gone.
//! - [`member_roles`]: who may change whose membership.

pub mod auth;
pub mod auth_cache;
pub mod key_revocations;
pub mod key_use;
pub mod keys;
pub mod member_roles;
pub mod principal;
pub mod reach;
