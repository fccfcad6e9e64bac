//! The commands that talk to the REST API: `get`, `describe`, `check` and
//! `usage`. Each returns what it prints, so tests read it without a
//! terminal.

use crate::client::{Client, ClientError};
use crate::kinds::Kind;
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
    Results {
        /// The monitor's id or ref.
        monitor: String,
    },
    /// The maintenance windows.
    #[command(visible_alias = "windows")]
    MaintenanceWindows,
    /// The status pages.
    #[command(visible_alias = "pages")]
    StatusPages,
    /// The escalation policies.
    #[command(visible_alias = "policies")]
    EscalationPolicies,
}

/// What `describe` shows. A resource is named by its id or by its ref (an
/// argument of digits only is an id).
#[derive(Debug, Clone, clap::Subcommand)]
pub enum DescribeWhat {
    /// A monitor, by id or ref.
    Monitor { id_or_ref: String },
    /// An alert contact, by id or ref.
    Contact { id_or_ref: String },
    /// An incident, by id.
    Incident { id: String },
    /// A maintenance window, by id or ref.
    #[command(visible_alias = "window")]
    MaintenanceWindow { id_or_ref: String },
    /// A status page, by id or ref.
    #[command(visible_alias = "page")]
    StatusPage { id_or_ref: String },
    /// An escalation policy, by id or ref.
    #[command(visible_alias = "policy")]
    EscalationPolicy { id_or_ref: String },
}

const MONITOR_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("REF", "/ref"),
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
    ("REF", "/ref"),
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
const WINDOW_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("REF", "/ref"),
    ("NAME", "/name"),
    ("EFFECT", "/effect"),
    ("OPEN", "/open_now"),
    ("STARTS", "/starts_at"),
    ("RRULE", "/rrule"),
    ("MONITORS", "/monitor_ids"),
    ("SELECTOR", "/label_selector"),
];
const PAGE_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("REF", "/ref"),
    ("SLUG", "/slug"),
    ("TITLE", "/title"),
    ("PRIVATE", "/private"),
    ("URL", "/url"),
];
const POLICY_COLUMNS: &[Column] = &[
    ("ID", "/id"),
    ("REF", "/ref"),
    ("NAME", "/name"),
    ("REPEAT", "/repeat_count"),
    ("STEPS", "/steps"),
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
        GetWhat::Results { monitor } => {
            let monitor = monitor_id(client, monitor).await?;
            (
                format!("/api/v1/monitors/{monitor}/results"),
                "results",
                RESULT_COLUMNS,
            )
        }
        GetWhat::MaintenanceWindows => collection(Kind::MaintenanceWindow, WINDOW_COLUMNS),
        GetWhat::StatusPages => collection(Kind::StatusPage, PAGE_COLUMNS),
        GetWhat::EscalationPolicies => collection(Kind::EscalationPolicy, POLICY_COLUMNS),
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
        DescribeWhat::Monitor { id_or_ref } => resource_path(Kind::Monitor, id_or_ref),
        DescribeWhat::Contact { id_or_ref } => resource_path(Kind::AlertContact, id_or_ref),
        DescribeWhat::Incident { id } => format!("/api/v1/incidents/{}", urlencoding(id)),
        DescribeWhat::MaintenanceWindow { id_or_ref } => {
            resource_path(Kind::MaintenanceWindow, id_or_ref)
        }
        DescribeWhat::StatusPage { id_or_ref } => resource_path(Kind::StatusPage, id_or_ref),
        DescribeWhat::EscalationPolicy { id_or_ref } => {
            resource_path(Kind::EscalationPolicy, id_or_ref)
        }
    };
    Ok(render_one(&client.get(&path).await?, format))
}

/// A kind's whole list: its path, the page's field and the table's columns.
fn collection(kind: Kind, columns: &'static [Column]) -> (String, &'static str, &'static [Column]) {
    (
        format!("/api/v1/{}", kind.collection()),
        kind.list_field(),
        columns,
    )
}

/// Where one resource named on the command line is: `/api/v1/{kind}/{id}`
/// for digits, else `/api/v1/{kind}/by-ref/{ref}`.
pub fn resource_path(kind: Kind, id_or_ref: &str) -> String {
    match as_id(id_or_ref) {
        Some(id) => format!("/api/v1/{}/{id}", kind.collection()),
        None => format!(
            "/api/v1/{}/by-ref/{}",
            kind.collection(),
            urlencoding(id_or_ref)
        ),
    }
}

fn as_id(id_or_ref: &str) -> Option<i64> {
    if id_or_ref.is_empty() || !id_or_ref.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    id_or_ref.parse().ok()
}

/// The id of the monitor named by id or ref (a ref is looked up: one
/// `GET .../by-ref/{ref}`).
pub async fn monitor_id(client: &Client, id_or_ref: &str) -> Result<i64, ClientError> {
    if let Some(id) = as_id(id_or_ref) {
        return Ok(id);
    }
    let monitor = client.get(&resource_path(Kind::Monitor, id_or_ref)).await?;
    monitor["id"]
        .as_i64()
        .ok_or_else(|| ClientError::NotJson(format!("a monitor without an id: {monitor}")))
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

/// `uptimectl check MONITOR` (its id or ref): runs a check now and waits
/// for its results (one per region of the round), polling the results
/// twice a second.
pub async fn check(
    client: &Client,
    monitor: &str,
    timeout: Duration,
    format: Format,
) -> Result<String, CheckError> {
    let monitor = monitor_id(client, monitor).await?;
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

    #[test]
    fn a_resource_is_named_by_id_when_all_digits_else_by_ref() {
        assert_eq!(resource_path(Kind::Monitor, "42"), "/api/v1/monitors/42");
        assert_eq!(
            resource_path(Kind::StatusPage, "public.site"),
            "/api/v1/status-pages/by-ref/public.site"
        );
        assert_eq!(
            resource_path(Kind::EscalationPolicy, "night-1"),
            "/api/v1/escalation-policies/by-ref/night-1"
        );
        // Too long for an id: a ref (the API then says it is not one).
        assert_eq!(as_id("99999999999999999999"), None);
        assert_eq!(as_id(""), None);
    }
}
