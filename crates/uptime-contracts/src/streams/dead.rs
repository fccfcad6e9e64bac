//! Dead letters: a message a consumer can never handle (it does not decode,
//! it asks for work that does not exist, the database rejects it for good,
//! or it ran out of deliveries) is republished on
//! `uptime.dead.<original subject>` into [`super::DEAD_STREAM`] before it is
//! terminated, so `uptimectl tap 'uptime.dead.>'` shows what was dropped and why.
//!
//! A dead letter is not a versioned message type: its payload is the
//! original message's, byte for byte, and the headers below say where it
//! came from. Replaying one is publishing its payload on
//! [`ORIGINAL_SUBJECT_HEADER`] again (docs/operations.md, dead letters).

/// Every dead-letter subject starts with this.
pub const SUBJECT_PREFIX: &str = "uptime.dead.";
/// What [`super::DEAD_STREAM`] captures.
pub const SUBJECTS: &str = "uptime.dead.>";

/// Why the message was given up on: one of [`Reason`]'s labels.
pub const REASON_HEADER: &str = "Uptime-Dead-Reason";
/// The error, in words (for people; not a stable format).
pub const DETAIL_HEADER: &str = "Uptime-Dead-Detail";
/// The subject the message was published on.
pub const ORIGINAL_SUBJECT_HEADER: &str = "Uptime-Dead-Subject";
/// The stream it was read from.
pub const STREAM_HEADER: &str = "Uptime-Dead-Stream";
/// Its sequence number in that stream.
pub const SEQUENCE_HEADER: &str = "Uptime-Dead-Sequence";
/// The durable consumer that gave up on it.
pub const CONSUMER_HEADER: &str = "Uptime-Dead-Consumer";
/// How many times it had been delivered.
pub const DELIVERED_HEADER: &str = "Uptime-Dead-Delivered";
/// The original `Nats-Msg-Id`, if it had one (the dead letter's own id is
/// `<stream>:<sequence>`, so a redelivered message is dead-lettered once).
pub const ORIGINAL_MSG_ID_HEADER: &str = "Uptime-Dead-Msg-Id";

/// The dead-letter subject of a message published on `original`.
pub fn subject_for(original: &str) -> String {
    format!("{SUBJECT_PREFIX}{original}")
}

/// Why a message can never succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reason {
    /// The payload does not decode as the subject's message type.
    Undecodable,
    /// It decodes, but asks for something no consumer does (a due check
    /// for a heartbeat monitor).
    Unsupported,
    /// The database refuses it, and would refuse it again.
    Rejected,
    /// It was delivered as often as its consumer allows (`max_deliver`).
    MaxDeliveries,
}

impl Reason {
    /// The header value and metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Undecodable => "undecodable",
            Reason::Unsupported => "unsupported",
            Reason::Rejected => "rejected",
            Reason::MaxDeliveries => "max_deliveries",
        }
    }
}

impl std::fmt::Display for Reason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dead_subject_keeps_the_original_and_is_captured_by_the_dead_stream() {
        let subject = subject_for("uptime.checks.result.v2");
        assert_eq!(subject, "uptime.dead.uptime.checks.result.v2");
        assert!(subject.starts_with(SUBJECTS.trim_end_matches('>')));
    }
}
