//! The commands that talk to the REST API: `get`, `describe`, `check` and
//! `usage`. Each returns what it prints, so tests read it without a
//! terminal.

use crate::client::{Client, ClientError};
use crate::output::{render_list, render_one, Column, Format};
use serde_json::Value;
use std::time::{Duration, Instant};

/// What `get` lists.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum GetWhat {
    /// The monitors (filters as the API's list takes them).
    Monitors {
        /// `key=value`; repeat for several, all must hold.
        #[arg(long = "label")]
        labels: Vec<String>,
        /// `http`, `keyword`, `tcp`, `tls`, `dns`, `icmp` or `heartbeat`.
        #[arg(long = "type")]
        monitor_type: Option<String>,
        /// `pending`, `up`, `degraded` or `down`.
        #[arg(long)]
        status: Option<String>,
        /// A part of the name (without case).
        #[arg(long)]
        search: Option<String>,
    },
    /// The alert contacts.
    Contacts,
    /// The incidents, newest first.
    Incidents {
        /// `open`, `acknowledged` or `resolved`.
        #[arg(long)]
        state: Option<String>,
        #[arg(long)]
        monitor: Option<i64>,
    },
    /// A monitor's results, newest first.
    Results { monitor: i64 },
}

/// What `describe` shows.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum DescribeWhat {
    Monitor { id: i64 },
    Contact { id: i64 },
    Incident { id: String },
}

const MONITOR_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("TYPE", "/type"),
    ("TARGET", "/target"),
    ("STATUS", "/status"),
    ("ACTIVE", "/active"),
    ("INTERVAL", "/interval_secs"),
    ("LABELS", "/labels"),
];
const CONTACT_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("NAME", "/name"),
    ("TYPE", "/type"),
    ("VERIFIED", "/verified"),
];
const INCIDENT_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("MONITOR", "/monitor_id"),
    ("STATE", "/state"),
    ("STARTED", "/started_at"),
    ("RESOLVED", "/resolved_at"),
    ("CAUSE", "/cause"),
];
const RESULT_COLUMNS: &[Column] = &[
    ("CHECKED", "/checked_at"),
    ("REGION", "/region"),
    ("STATUS", "/status"),
    ("LATENCY_MS", "/latency_ms"),
    ("ERROR", "/error"),
    ("TRIGGER", "/trigger"),
];

/// `uptimectl get ...`: at most `limit` items.
pub async fn get(
    client: &Client,
    what: &GetWhat,
    limit: usize,
    format: Format,
) -> Result<String, ClientError> {
    let (path, field, columns) = match what {
        GetWhat::Monitors {
            labels,
            monitor_type,
            status,
            search,
        } => {
            let mut query: Vec<(&str, &str)> =
                labels.iter().map(|l| ("label", l.as_str())).collect();
            for (name, value) in [
                ("type", monitor_type),
                ("status", status),
                ("search", search),
            ] {
                if let Some(value) = value {
                    query.push((name, value));
                }
            }
            (
                with_query("/api/v1/monitors", &query),
                "monitors",
                MONITOR_COLUMNS,
            )
        }
        GetWhat::Contacts => (
            "/api/v1/alert-contacts".into(),
            "alert_contacts",
            CONTACT_COLUMNS,
        ),
        GetWhat::Incidents { state, monitor } => {
            let monitor = monitor.map(|m| m.to_string());
            let mut query = Vec::new();
            if let Some(state) = state {
                query.push(("state", state.as_str()));
            }
            if let Some(monitor) = &monitor {
                query.push(("monitor_id", monitor.as_str()));
            }
            (
                with_query("/api/v1/incidents", &query),
                "incidents",
                INCIDENT_COLUMNS,
            )
        }
        GetWhat::Results { monitor } => (
            format!("/api/v1/monitors/{monitor}/results"),
            "results",
            RESULT_COLUMNS,
        ),
    };
    let items = client.list(&path, field, limit).await?;
    Ok(render_list(&items, columns, format))
}

/// `uptimectl describe ...`.
pub async fn describe(
    client: &Client,
    what: &DescribeWhat,
    format: Format,
) -> Result<String, ClientError> {
    let path = match what {
        DescribeWhat::Monitor { id } => format!("/api/v1/monitors/{id}"),
        DescribeWhat::Contact { id } => format!("/api/v1/alert-contacts/{id}"),
        DescribeWhat::Incident { id } => format!("/api/v1/incidents/{}", urlencoding(id)),
    };
    Ok(render_one(&client.get(&path).await?, format))
}

/// `uptimectl usage`.
pub async fn usage(client: &Client, format: Format) -> Result<String, ClientError> {
    Ok(render_one(&client.get("/api/v1/usage").await?, format))
}

/// Why `check` gave up.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error(transparent)]
    Api(#[from] ClientError),
    #[error("no result for check {check_id} within {waited:?}; it may still arrive (uptimectl get results {monitor})")]
    TimedOut {
        check_id: String,
        monitor: i64,
        waited: Duration,
    },
}

/// `uptimectl check MONITOR`: runs a check now and waits for its results
/// (one per region of the round), polling the results twice a second.
pub async fn check(
    client: &Client,
    monitor: i64,
    timeout: Duration,
    format: Format,
) -> Result<String, CheckError> {
    let queued = client
        .post(&format!("/api/v1/monitors/{monitor}/check"), None)
        .await?;
    let check_id = queued["check_id"].as_str().unwrap_or_default().to_string();
    let started = Instant::now();
    loop {
        let recent = client
            .list(
                &format!("/api/v1/monitors/{monitor}/results"),
                "results",
                20,
            )
            .await?;
        let ours: Vec<Value> = recent
            .into_iter()
            .filter(|r| {
                r["check_id"].as_str() == Some(check_id.as_str())
                    || r["round_id"].as_str() == Some(check_id.as_str())
            })
            .collect();
        if !ours.is_empty() {
            return Ok(render_list(&ours, RESULT_COLUMNS, format));
        }
        if started.elapsed() >= timeout {
            return Err(CheckError::TimedOut {
                check_id,
                monitor,
                waited: timeout,
            });
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

fn with_query(path: &str, pairs: &[(&str, &str)]) -> String {
    if pairs.is_empty() {
        return path.to_string();
    }
    let query: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", urlencoding(v)))
        .collect();
    format!("{path}?{}", query.join("&"))
}

/// Percent-encodes everything but unreserved characters (RFC 3986).
fn urlencoding(value: &str) -> String {
    value
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_are_encoded_and_repeatable() {
        assert_eq!(
            with_query(
                "/m",
                &[
                    ("label", "env=prod"),
                    ("label", "team=a b"),
                    ("search", "100%")
                ]
            ),
            "/m?label=env%3Dprod&label=team%3Da%20b&search=100%25"
        );
        assert_eq!(with_query("/m", &[]), "/m");
    }
}
