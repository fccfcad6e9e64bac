//! `uptimectl tap`: subscribe to subjects and show each message.
//!
//! A plain (core NATS) subscription sees every message as it is published,
//! those that JetStream streams store included, and consumes nothing: it
//! never takes a due check from a checker or a result from a recorder.

use crate::schemas::{Schemas, DEAD_PREFIX};
use async_nats::HeaderMap;
use futures::StreamExt;
use std::fmt::Write as _;

/// What a tap makes of one message.
#[derive(Debug, Clone, PartialEq)]
pub struct Tapped {
    pub subject: String,
    /// From the `traceparent` header (W3C: `00-<trace id>-<span id>-<flags>`).
    pub trace_id: Option<String>,
    /// The schema the message was checked against, if its subject has one.
    pub schema: Option<String>,
    pub verdict: Verdict,
    /// `Uptime-Dead-*` and `Nats-Msg-Id` headers worth showing.
    pub headers: Vec<(String, String)>,
    /// The payload, pretty-printed when it is JSON, as text otherwise.
    pub body: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Valid against its schema.
    Valid,
    /// Not valid: one line per error.
    Invalid(Vec<String>),
    /// Not JSON at all.
    NotJson(String),
    /// No schema for this subject.
    Unchecked,
}

impl Tapped {
    /// Reads one message. Pure: no I/O, so it is tested without a server.
    pub fn read(
        schemas: &Schemas,
        subject: &str,
        headers: Option<&HeaderMap>,
        payload: &[u8],
    ) -> Self {
        let header = |name: &str| {
            headers
                .and_then(|h| h.get(name))
                .map(|v| v.as_str().to_string())
        };
        let trace_id = header("traceparent").and_then(|tp| trace_id_of(&tp));
        let mut shown = Vec::new();
        if let Some(h) = headers {
            for (name, values) in h.iter() {
                let name = name.to_string();
                if name.starts_with("Uptime-Dead-") || name == "Nats-Msg-Id" {
                    for value in values {
                        shown.push((name.clone(), value.as_str().to_string()));
                    }
                }
            }
            shown.sort();
        }
        let schema = schemas.for_subject(subject);
        let (verdict, body) = match serde_json::from_slice::<serde_json::Value>(payload) {
            Ok(json) => {
                let verdict = match schema {
                    None => Verdict::Unchecked,
                    Some(s) => match s.errors(&json) {
                        errors if errors.is_empty() => Verdict::Valid,
                        errors => Verdict::Invalid(errors),
                    },
                };
                let body = serde_json::to_string_pretty(&json).unwrap_or_default();
                (verdict, body)
            }
            Err(e) => (
                Verdict::NotJson(e.to_string()),
                String::from_utf8_lossy(payload).into_owned(),
            ),
        };
        Tapped {
            subject: subject.to_string(),
            trace_id,
            schema: schema.map(|s| s.name.clone()),
            verdict,
            headers: shown,
            body,
        }
    }

    /// The text `uptimectl tap` prints for it.
    pub fn render(&self, received_at: chrono::DateTime<chrono::Utc>) -> String {
        let mut out = String::new();
        let verdict = match (&self.schema, &self.verdict) {
            (Some(name), Verdict::Valid) => format!("valid {name}"),
            (Some(name), Verdict::Invalid(errors)) => {
                format!("INVALID {name} ({} errors)", errors.len())
            }
            (_, Verdict::NotJson(_)) => "NOT JSON".to_string(),
            _ => "no schema".to_string(),
        };
        let _ = writeln!(
            out,
            "── {} {}  [{}]  trace {}",
            received_at.format("%H:%M:%S%.3f"),
            self.subject,
            verdict,
            self.trace_id.as_deref().unwrap_or("-")
        );
        for (name, value) in &self.headers {
            let _ = writeln!(out, "   {name}: {value}");
        }
        match &self.verdict {
            Verdict::Invalid(errors) => {
                for e in errors {
                    let _ = writeln!(out, "   ! {e}");
                }
            }
            Verdict::NotJson(e) => {
                let _ = writeln!(out, "   ! {e}");
            }
            Verdict::Valid | Verdict::Unchecked => {}
        }
        out.push_str(&self.body);
        out.push('\n');
        out
    }
}

/// The trace id of a W3C `traceparent`, if it is well formed.
pub fn trace_id_of(traceparent: &str) -> Option<String> {
    let mut parts = traceparent.trim().split('-');
    let (_version, trace, _span) = (parts.next()?, parts.next()?, parts.next()?);
    (trace.len() == 32 && trace.bytes().all(|b| b.is_ascii_hexdigit()) && trace != "0".repeat(32))
        .then(|| trace.to_ascii_lowercase())
}

/// Subscribes to `subject` on `url` and prints each message until `limit`
/// messages were shown (if given) or the connection ends.
pub async fn run(url: &str, subject: &str, limit: Option<usize>) -> anyhow::Result<()> {
    let schemas = Schemas::load()?;
    let client = async_nats::ConnectOptions::new()
        .name("uptimectl tap")
        .connect(url)
        .await?;
    let mut subscription = client.subscribe(subject.to_string()).await?;
    eprintln!("tapping {subject} on {url} (dead letters: {DEAD_PREFIX}>)");
    let mut shown = 0;
    while let Some(message) = subscription.next().await {
        let tapped = Tapped::read(
            &schemas,
            &message.subject,
            message.headers.as_ref(),
            &message.payload,
        );
        print!("{}", tapped.render(chrono::Utc::now()));
        shown += 1;
        if limit.is_some_and(|l| shown >= l) {
            break;
        }
    }
    Ok(())
}
