//! Reading the dead-letter stream back, for tests and tools (operators use
//! `uptimectl tap 'uptime.dead.>'` as they happen, `nats stream view UPTIME_DEAD` for those kept).

use async_nats::jetstream::{self, message::StreamMessage};
use uptime_contracts::streams::{dead, DEAD_STREAM};

/// One dead letter as stored.
#[derive(Debug, Clone)]
pub struct DeadLetter(pub StreamMessage);

impl DeadLetter {
    /// A header's value, if it is there.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.0.headers.get(name).map(|v| v.as_str())
    }

    /// Why it was given up on (`Uptime-Dead-Reason`).
    pub fn reason(&self) -> Option<&str> {
        self.header(dead::REASON_HEADER)
    }

    /// The subject it was first published on (`Uptime-Dead-Subject`).
    pub fn original_subject(&self) -> Option<&str> {
        self.header(dead::ORIGINAL_SUBJECT_HEADER)
    }

    pub fn payload(&self) -> &[u8] {
        &self.0.payload
    }
}

/// Every dead letter still in the stream, oldest first.
pub async fn read_all(js: &jetstream::Context) -> Result<Vec<DeadLetter>, async_nats::Error> {
    let mut stream = js.get_stream(DEAD_STREAM).await?;
    let state = stream.info().await?.state.clone();
    let mut letters = Vec::new();
    if state.messages == 0 {
        return Ok(letters);
    }
    for sequence in state.first_sequence..=state.last_sequence {
        match stream.get_raw_message(sequence).await {
            Ok(message) => letters.push(DeadLetter(message)),
            // Deleted or expired in the meantime.
            Err(e) if e.kind() == jetstream::stream::RawMessageErrorKind::NoMessageFound => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(letters)
}
