//! Which addresses the service may connect to on a user's behalf.
//!
//! Monitoring is a request-forgery machine by design (users name URLs, we
//! fetch them; users name webhooks, we post to them), so unless the
//! deployment allows private targets, nothing connects to loopback, private,
//! link-local, shared (CGNAT), metadata or otherwise non-public addresses.
//! This crate is the one place that decides it, for every caller:
//!
//! - `class`: [`classify`], the class of a non-public address (pure, no I/O);
//!   [`classify_host`] for a URL's host as written (literal addresses and
//!   names that are internal by definition), for validation that cannot
//!   resolve names;
//! - `policy`: [`AddressPolicy`], the deployment's rule (allow private targets, an
//!   allowlist) and the [`Refused`] errors, whose messages never reveal an
//!   address a name resolved to ([`find_refusal`] in an error's [`causes`]);
//! - `resolver`: [`ScreeningResolver`] and [`client_builder`], a reqwest client whose
//!   every connection to a name is judged on the addresses actually
//!   connected to, and which never goes through an environment proxy (a proxy
//!   resolves names itself, out of reach of the resolver).

mod class;
mod policy;
mod resolver;

pub use class::{classify, classify_host, classify_name, AddressClass};
pub use policy::{causes, find_refusal, AddressPolicy, Refused};
pub use resolver::{client_builder, ResolveError, ScreeningResolver};
