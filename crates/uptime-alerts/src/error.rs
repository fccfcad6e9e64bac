//! How a delivery attempt fails, and whether trying again may help.

use std::time::Duration;

/// Whether a failed attempt is worth repeating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Retry {
    /// The receiver refused for good (4xx other than 408/425/429, a refused
    /// address, a permanent SMTP error, a malformed contact).
    Never,
    /// A transient failure (timeout, connection error, 5xx, 429, a transient
    /// SMTP error); `after` is the receiver's `Retry-After`, if it sent one.
    Later { after: Option<Duration> },
}

/// A failed delivery attempt. `message` is what people see in the delivery
/// log and in the test endpoint's 502.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
#[error("{message}")]
pub struct SendError {
    pub message: String,
    pub retry: Retry,
    /// The receiver's HTTP status, when it answered.
    pub http_status: Option<u16>,
}

impl SendError {
    pub fn permanent(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry: Retry::Never,
            http_status: None,
        }
    }

    pub fn transient(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            retry: Retry::Later { after: None },
            http_status: None,
        }
    }

    pub fn is_retryable(&self) -> bool {
        matches!(self.retry, Retry::Later { .. })
    }
}

/// The sender cannot be built from its settings.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    #[error("smtp.from {0:?} is not an email address")]
    From(String),
    #[error("SMTP TLS setup for {host}: {source}")]
    SmtpTls {
        host: String,
        source: lettre::transport::smtp::Error,
    },
    #[error("HTTP client: {0}")]
    Http(#[from] reqwest::Error),
}

/// `err` and its sources as one line: `a: b: c` (repeats dropped).
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(err);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}
