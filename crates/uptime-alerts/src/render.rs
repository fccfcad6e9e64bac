//! How an alert reads to people: an email subject and plain-text body, and a
//! Slack message. Both carry the same facts: what changed, since when, and
//! the check that caused it.

use crate::event::{AlertEvent, CheckInfo, EventType, VerificationRequest};
use chrono::{DateTime, Utc};
use serde_json::{json, Value};

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

/// One line saying what happened, e.g. `[DOWN] Shop is down`.
pub fn headline(event: &AlertEvent) -> String {
    let name = monitor_name(event);
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

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The facts of an alert as `label: value` lines, shared by email and Slack.
fn facts(event: &AlertEvent) -> Vec<(&'static str, String)> {
    let mut lines = Vec::new();
    if let Some(m) = &event.monitor {
        lines.push((
            "Monitor",
            format!("{} (#{}, {})", m.name, m.id, m.kind.as_str()),
        ));
        if let Some(target) = &m.target {
            lines.push(("Target", target.clone()));
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
    lines
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

fn summary(event: &AlertEvent) -> String {
    let name = monitor_name(event);
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
    let text = format!("{} {}", headline(event), summary(event));
    let fields: Vec<Value> = facts(event)
        .into_iter()
        .map(|(label, value)| json!({"type": "mrkdwn", "text": format!("*{label}*\n{value}")}))
        .collect();
    let mut blocks = vec![
        json!({"type": "header", "text": {"type": "plain_text", "text": headline(event)}}),
        json!({"type": "section", "text": {"type": "mrkdwn", "text": summary(event)}}),
    ];
    // Slack allows at most 10 fields per section.
    for chunk in fields.chunks(10) {
        blocks.push(json!({"type": "section", "fields": chunk}));
    }
    json!({"text": text, "blocks": blocks})
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn durations_read_naturally() {
        let t0 = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let at = |s: i64| t0 + chrono::Duration::seconds(s);
        assert_eq!(human_duration(t0, at(42)), "42s");
        assert_eq!(human_duration(t0, at(125)), "2m 5s");
        assert_eq!(human_duration(t0, at(2 * 3600 + 5 * 60)), "2h 5m");
        assert_eq!(human_duration(t0, at(3 * 86_400 + 4 * 3600)), "3d 4h");
        assert_eq!(human_duration(at(10), t0), "0s", "never negative");
    }
}
