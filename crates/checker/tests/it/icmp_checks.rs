//! Issue 12: tests being written.
