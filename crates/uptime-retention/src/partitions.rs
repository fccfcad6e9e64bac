//! (being written: see docs/architecture.md once it lands)
