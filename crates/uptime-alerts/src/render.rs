//! How an alert reads to people: an email subject and plain-text body, and a
//! Slack message. Both carry the same facts: what changed, since when, and
//! the check that caused it, and, for monitors checked from several regions,
//! what each region saw.
//!
//! Text from users and targets (monitor names, targets, errors) is inert:
//! plain text in email, and in Slack escaped (`&`, `<`) so it can neither
//! mention (`<!channel>`) nor link.

mod invitation;
pub use invitation::{inert_line, invitation_email};

use crate::event::{
    AcknowledgeRequest, AlertEvent, CheckInfo, EventType, RoundInfo, VerificationRequest,
};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use uptime_contracts::{AlertKind, MonitorStatus, RegionSeen};

/// An email's subject and plain-text body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmailContent {
    pub subject: String,
    pub body: String,
}

fn monitor_name(event: &AlertEvent) -> &str {
    event
        .monitor
        .as_ref()
        .map(|m| m.name.as_str())
        .unwrap_or("(no monitor)")
}

/// What kind of incident alert `event` is (`Transition` when it is none).
fn alert_kind(event: &AlertEvent) -> AlertKind {
    event
        .incident
        .as_ref()
        .map_or(AlertKind::Transition, |i| i.alert)
}

/// How long the monitor has been down, for reminders and released alerts.
fn down_for(event: &AlertEvent) -> String {
    let secs = event
        .incident
        .as_ref()
        .and_then(|i| i.down_for_secs)
        .unwrap_or_default();
    let secs = i64::try_from(secs).unwrap_or(i64::MAX);
    human_duration(
        event.occurred_at - chrono::Duration::seconds(secs),
        event.occurred_at,
    )
}

/// One line saying what happened, e.g. `[DOWN] Shop is down`.
pub fn headline(event: &AlertEvent) -> String {
    let name = monitor_name(event);
    match (alert_kind(event), event.status) {
        (AlertKind::Reminder, _) => {
            return format!("[STILL DOWN] {name} has been down for {}", down_for(event))
        }
        (AlertKind::Flapping, _) => return format!("[FLAPPING] {name} keeps changing state"),
        (AlertKind::Released, Some(MonitorStatus::Down)) => {
            return format!("[DOWN] {name} is still down (alert held until now)")
        }
        _ => {}
    }
    match event.event {
        EventType::MonitorDown => format!("[DOWN] {name} is down"),
        EventType::MonitorUp => format!("[UP] {name} is up"),
        EventType::MonitorDegraded => format!("[DEGRADED] {name} is degraded (slow responses)"),
        EventType::SslExpiring => format!(
            "[SSL] {name}: certificate expires in {} day(s)",
            event.days_left.unwrap_or_default()
        ),
        EventType::Test => "[TEST] Test alert from Uptime".to_string(),
    }
}

/// `2h 5m`, `3d 4h`, `42s`: a short human duration.
pub fn human_duration(from: DateTime<Utc>, to: DateTime<Utc>) -> String {
    let secs = (to - from).num_seconds().max(0);
    let (d, h, m, s) = (
        secs / 86_400,
        secs % 86_400 / 3600,
        secs % 3600 / 60,
        secs % 60,
    );
    match (d, h, m) {
        (0, 0, 0) => format!("{s}s"),
        (0, 0, _) => format!("{m}m {s}s"),
        (0, _, _) => format!("{h}h {m}m"),
        _ => format!("{d}d {h}h"),
    }
}

pub(crate) fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The note a provider shows with an acknowledgement: when, and through
/// what (an API key, or the signed link in an alert).
pub fn acknowledge_note(request: &AcknowledgeRequest) -> String {
    let via = match request.acknowledged_via.as_str() {
        "link" => "the link in an alert",
        _ => "the API",
    };
    format!(
        "Acknowledged in Uptime through {via} at {}",
        rfc3339(request.acknowledged_at)
    )
}

/// The facts of an alert as `label: value` lines, shared by email and Slack.
pub(crate) fn facts(event: &AlertEvent) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(m) = &event.monitor {
        lines.push((
            "Monitor",
            format!("{} (#{}, {})", m.name, m.id, m.kind.as_str()),
        ));
        if let Some(target) = &m.target {
            lines.push(("Target", target.clone()));
        }
        if !m.labels.is_empty() {
            lines.push(("Labels", m.labels.to_string()));
        }
    }
    if let (Some(prev), Some(now)) = (event.previous_status, event.status) {
        if event.event != EventType::SslExpiring {
            lines.push(("Change", format!("{} -> {}", prev.as_str(), now.as_str())));
        }
    }
    lines.push(("At", rfc3339(event.occurred_at)));
    if let (Some(since), Some(prev)) = (event.previous_since, event.previous_status) {
        lines.push((
            "Previously",
            format!(
                "{} for {} (since {})",
                prev.as_str(),
                human_duration(since, event.occurred_at),
                rfc3339(since)
            ),
        ));
    }
    if let Some(expires) = event.ssl_expires_at {
        lines.push(("Certificate expires", rfc3339(expires)));
    }
    if let Some(days) = event.days_left {
        lines.push(("Days left", days.to_string()));
    }
    if let Some(check) = &event.check {
        lines.extend(check_facts(check));
    }
    if let Some(round) = &event.round {
        lines.push(("Regions", bounded(&regions_line(round), MAX_FACT_CHARS)));
        if let Some(note) = &round.note {
            lines.push(("Round", bounded(note, MAX_FACT_CHARS)));
        }
    }
    if let Some(incident) = &event.incident {
        lines.push(("Incident", incident.id.to_string()));
        if incident.down_for_secs.is_some() {
            lines.push(("Down for", down_for(event)));
        }
        if incident.held_children > 0 {
            lines.push((
                "Dependent monitors held",
                format!(
                    "{} (their alerts wait while this one is down)",
                    incident.held_children
                ),
            ));
        }
        if !incident.blocked_by.is_empty() {
            let ids: Vec<String> = incident
                .blocked_by
                .iter()
                .map(|id| format!("#{id}"))
                .collect();
            lines.push(("Blocked by", ids.join(", ")));
        }
        if let Some(url) = &incident.acknowledge_url {
            lines.push(("Acknowledge", url.clone()));
        }
    }
    lines
}

/// The longest a fact's value gets (a Slack field holds 2000 characters).
const MAX_FACT_CHARS: usize = 1900;
/// The longest error of one region an alert repeats.
const MAX_REGION_ERROR_CHARS: usize = 200;

/// `text` cut to `max` characters (`…` marking the cut), on one line.
pub(crate) fn bounded(text: &str, max: usize) -> String {
    let one_line: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if one_line.chars().count() <= max {
        return one_line;
    }
    let mut cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// What each region saw, failures first, e.g. `Failed in eu (connection
/// refused), us (timed out after 5 s); passed in ap (80 ms); quorum 2 of 3`.
pub fn regions_line(round: &RoundInfo) -> String {
    let named = |seen: RegionSeen, detail: &dyn Fn(&crate::event::RegionInfo) -> Option<String>| {
        round
            .regions
            .iter()
            .filter(|r| r.seen == seen)
            .map(|r| match detail(r) {
                Some(d) => format!("{} ({d})", r.region),
                None => r.region.clone(),
            })
            .collect::<Vec<_>>()
            .join(", ")
    };
    let failed = named(RegionSeen::Failed, &|r| {
        r.error
            .as_deref()
            .map(|e| bounded(e, MAX_REGION_ERROR_CHARS))
            .or_else(|| r.http_status.map(|s| format!("HTTP {s}")))
    });
    let passed = named(RegionSeen::Passed, &|r| {
        r.latency_ms.map(|ms| format!("{ms} ms"))
    });
    let silent = named(RegionSeen::NoAnswer, &|_| None);
    let offline = named(RegionSeen::Offline, &|_| None);
    let mut parts = Vec::new();
    for (label, regions) in [
        ("failed in", failed),
        ("passed in", passed),
        ("no answer from", silent),
        ("offline:", offline),
    ] {
        if !regions.is_empty() {
            parts.push(format!("{label} {regions}"));
        }
    }
    parts.push(format!(
        "quorum {} of {}",
        round.quorum,
        round.regions.len()
    ));
    let line = parts.join("; ");
    let mut chars = line.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => line,
    }
}

/// Slack's escaping of `&` and `<`: user text shows as written and cannot
/// mention (`<!channel>`), link or name anyone, since every such sequence
/// begins with `<`. A lone `>` is left as it is (our `up -> down` reads the
/// same either way, and it starts nothing).
fn slack_escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;")
}

fn check_facts(check: &CheckInfo) -> Vec<(&'static str, String)> {
    let mut lines = vec![
        (
            "Check",
            format!(
                "{} ({}) at {}",
                check.status.as_str(),
                check.trigger.as_str(),
                rfc3339(check.checked_at)
            ),
        ),
        (
            "HTTP status",
            check
                .http_status
                .map_or_else(|| "none".to_string(), |s| s.to_string()),
        ),
        (
            "Latency",
            check
                .latency_ms
                .map_or_else(|| "none".to_string(), |ms| format!("{ms} ms")),
        ),
    ];
    if let Some(error) = &check.error {
        lines.push(("Error", error.clone()));
    }
    lines
}

pub(crate) fn summary(event: &AlertEvent) -> String {
    let name = monitor_name(event);
    match alert_kind(event) {
        AlertKind::Reminder => {
            return format!(
                "Monitor \"{name}\" is STILL DOWN, for {} now. Acknowledge the incident to stop these reminders.",
                down_for(event)
            )
        }
        AlertKind::Flapping => {
            return format!(
                "Monitor \"{name}\" is FLAPPING: its state changed too often. Further changes are not alerted until it is stable."
            )
        }
        AlertKind::Released if event.status == Some(MonitorStatus::Down) => {
            return format!(
                "Monitor \"{name}\" is DOWN, for {} now: its alert was held (a monitor it depends on was down, it was flapping or in maintenance) and the reason has ended.",
                down_for(event)
            )
        }
        _ => {}
    }
    match event.event {
        EventType::MonitorDown => format!("Monitor \"{name}\" is DOWN."),
        EventType::MonitorUp => format!("Monitor \"{name}\" is UP again."),
        EventType::MonitorDegraded => {
            format!("Monitor \"{name}\" is DEGRADED: it passes, but responds slowly.")
        }
        EventType::SslExpiring => format!(
            "The TLS certificate of \"{name}\" expires in {} day(s).",
            event.days_left.unwrap_or_default()
        ),
        EventType::Test => event
            .message
            .clone()
            .unwrap_or_else(|| "This is a test alert.".into()),
    }
}

/// The alert as an email.
pub fn email(event: &AlertEvent) -> EmailContent {
    let mut body = summary(event);
    body.push_str("\n\n");
    for (label, value) in facts(event) {
        body.push_str(&format!("{label}: {value}\n"));
    }
    body.push_str(&format!("\nEvent id: {}\n", event.event_id));
    EmailContent {
        subject: headline(event),
        body,
    }
}

/// The verification email of an email contact.
pub fn verification_email(request: &VerificationRequest) -> EmailContent {
    EmailContent {
        subject: "Verify your email address for Uptime alerts".into(),
        body: format!(
            "Alert contact \"{}\" was added with this address.\n\n\
             To receive alerts here, open this link:\n\n{}\n\n\
             If you did not expect this email, ignore it: nothing will be sent \
             to this address until it is verified.\n",
            request.contact_name, request.verify_url
        ),
    }
}

/// The alert as a Slack incoming-webhook message: `text` (the notification
/// and fallback) plus blocks with the facts.
pub fn slack(event: &AlertEvent) -> Value {
    let text = slack_escape(&format!("{} {}", headline(event), summary(event)));
    let fields: Vec<Value> = facts(event)
        .into_iter()
        .map(|(label, value)| {
            json!({"type": "mrkdwn", "text": format!("*{label}*\n{}", slack_escape(&value))})
        })
        .collect();
    let mut blocks = vec![
        // Plain text: shown as it is, nothing to escape.
        json!({"type": "header", "text": {"type": "plain_text", "text": headline(event)}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": slack_escape(&summary(event))}}),
    ];
    // Slack allows at most 10 fields per section.
    for chunk in fields.chunks(10) {
        blocks.push(json!({"type": "section", "fields": chunk}));
    }
    json!({"text": text, "blocks": blocks})
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod incident_tests;
