//! The contact body checks shared by create and update: provider options
//! given to the types that take them, and the event kinds a contact wants.

use super::body::{ContactType, EventKind};
use super::values::check_server;
use crate::validation::Problems;

/// Adds a problem for each provider option given to a type that does not
/// take it, and for a malformed ntfy server.
pub(super) fn check_options(
    problems: &mut Problems,
    kind: ContactType,
    region_given: bool,
    server: Option<&str>,
    allow_private: bool,
) {
    if region_given && kind != ContactType::Opsgenie {
        problems.add("region", "only opsgenie contacts take a region");
    }
    if let Some(server) = server {
        if kind == ContactType::Ntfy {
            check_server(problems, server, allow_private);
        } else {
            problems.add("server", "only ntfy contacts take a server");
        }
    }
}

/// The event types stored for `events` (`None`: every kind); an empty
/// list is a problem (a contact that wants nothing is one to delete).
pub(super) fn stored_event_kinds(
    problems: &mut Problems,
    events: Option<Vec<EventKind>>,
) -> Option<Vec<String>> {
    let mut kinds = events?;
    if kinds.is_empty() {
        problems.add(
            "events",
            "must name at least one kind; leave it out (or null) for every kind",
        );
    }
    kinds.sort();
    kinds.dedup();
    Some(kinds.iter().map(|k| k.event_type().to_string()).collect())
}
