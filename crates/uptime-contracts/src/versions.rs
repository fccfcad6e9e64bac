//! Every version of every message family that was ever on the wire, who
//! sends it, who reads it, and whether it is still alive.
//!
//! The policy (docs/operations.md, "Message versions"; proto-schemas/README.md):
//!
//! - At most two versions of a family are live: the **current** one, which
//!   publishers send, and the **previous** one, which consumers still read
//!   (and which some publishers may still send while they move on).
//! - A version is **retired** one release after the release in which no
//!   service publishes it any more, and only once its stream's max age has
//!   passed since then (so no message of it can still sit in a stream).
//!   Retiring removes its type, subject, schema, example and every reader.
//!
//! The contracts test `versions` holds the table to it: one current and at
//! most one previous version per family, a committed schema for every live
//! version and none for a retired one, and no source file naming a retired
//! version's subject, subject constant or type.

use crate::subjects;

/// Where a version stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// What publishers send.
    Current,
    /// Still read by its consumers; published by nobody or by services on
    /// their way to the current version. `retire_after` (`YYYY-MM-DD`): once
    /// nobody publishes it, the day after which it must be gone (a release
    /// on, and past its stream's max age); the contracts test fails past it,
    /// so retiring is never forgotten. `None` while a service still sends it.
    Previous { retire_after: Option<&'static str> },
    /// Gone from the wire: no type, no schema, no reader. `since`: the day
    /// (`YYYY-MM-DD`) of the release that retired it.
    Retired { since: &'static str },
}

impl Status {
    pub fn is_live(self) -> bool {
        !matches!(self, Status::Retired { .. })
    }
}

/// One version of one message family.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WireVersion {
    /// The family's schema name without the version: `check-due`.
    pub family: &'static str,
    pub version: u32,
    /// The subject (for the per-region due checks, the prefix their
    /// `.<region>` subjects share).
    pub subject: &'static str,
    pub publishers: &'static [&'static str],
    pub readers: &'static [&'static str],
    pub status: Status,
}

impl WireVersion {
    /// Its file name under `proto-schemas/`, without `.json`: `check-due.v5`.
    pub fn schema_name(&self) -> String {
        format!("{}.v{}", self.family, self.version)
    }
}

const fn v(
    family: &'static str,
    version: u32,
    subject: &'static str,
    publishers: &'static [&'static str],
    readers: &'static [&'static str],
    status: Status,
) -> WireVersion {
    WireVersion {
        family,
        version,
        subject,
        publishers,
        readers,
        status,
    }
}

use Status::{Current, Previous, Retired};

/// The release that retired the versions only older releases published.
const RETIRED_2026_11_25: Status = Retired {
    since: "2026-11-25",
};
/// Read, published by nobody since 2026-11-27 (pings and missed heartbeats
/// moved to the current version): one release on, and long past every
/// stream's max age, it goes.
const UNPUBLISHED_SINCE_2026_11_27: Status = Previous {
    retire_after: Some("2027-01-31"),
};

/// The table. Retired subjects are written out here (and only here): their
/// constants are gone with them.
pub const VERSIONS: &[WireVersion] = &[
    v(
        "check-due",
        1,
        "uptime.checks.due.v1",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    v(
        "check-due",
        2,
        "uptime.checks.due.v2",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    v(
        "check-due",
        3,
        "uptime.checks.due.v3",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    // Unpublished since 2026-11-25 (v5 replaced it), past the work queue's
    // max age (6 h): retired the release after.
    v(
        "check-due",
        4,
        "uptime.checks.due.v4",
        &[],
        &[],
        Retired {
            since: "2026-11-27",
        },
    ),
    v(
        "check-due",
        5,
        subjects::CHECK_DUE_V5_PREFIX,
        &["scheduler", "api-gateway (manual checks)"],
        &["checker (each region's consumer)"],
        Current,
    ),
    v(
        "check-result",
        1,
        "uptime.checks.result.v1",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    v(
        "check-result",
        2,
        subjects::CHECK_RESULT_V2,
        &[],
        &["recorder"],
        UNPUBLISHED_SINCE_2026_11_27,
    ),
    v(
        "check-result",
        3,
        subjects::CHECK_RESULT_V3,
        &[
            "checker",
            "api-gateway (heartbeat pings)",
            "scheduler (missed heartbeats)",
        ],
        &["recorder"],
        Current,
    ),
    v(
        "monitor-changed",
        1,
        subjects::MONITOR_CHANGED_V1,
        &["api-gateway"],
        &["scheduler"],
        Current,
    ),
    v(
        "state-changed",
        1,
        "uptime.events.state_changed.v1",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    // Published beside v3 until 2026-11-25; retired with the release that
    // made v4 current, since at most two versions live (its readers would
    // have read it until 2027-01-31).
    v(
        "state-changed",
        2,
        "uptime.events.state_changed.v2",
        &[],
        &[],
        Retired {
            since: "2026-11-27",
        },
    ),
    // Published by recorders until the release that made v4 current.
    v(
        "state-changed",
        3,
        subjects::STATE_CHANGED_V3,
        &[],
        &["notifier"],
        UNPUBLISHED_SINCE_2026_11_27,
    ),
    v(
        "state-changed",
        4,
        subjects::STATE_CHANGED_V4,
        &["recorder"],
        &["notifier"],
        Current,
    ),
    v(
        "ssl-expiring",
        1,
        "uptime.events.ssl_expiring.v1",
        &[],
        &[],
        RETIRED_2026_11_25,
    ),
    v(
        "ssl-expiring",
        2,
        subjects::SSL_EXPIRING_V2,
        &["recorder"],
        &["notifier"],
        Current,
    ),
    v(
        "api-key-revoked",
        1,
        subjects::API_KEY_REVOKED_V1,
        &["api-gateway"],
        &["api-gateway"],
        Current,
    ),
    v(
        "audit-recorded",
        1,
        subjects::AUDIT_RECORDED_V1,
        &["api-gateway (through the outbox the recorder relays)"],
        &["people (a SIEM)"],
        Current,
    ),
];

/// The live versions of `family`, oldest first.
pub fn live(family: &str) -> impl Iterator<Item = &'static WireVersion> + '_ {
    VERSIONS
        .iter()
        .filter(move |v| v.family == family && v.status.is_live())
}
