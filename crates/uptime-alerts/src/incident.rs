//! What an alert means to an on-call provider (PagerDuty, Opsgenie): which
//! incident it opens or closes, under which key, and how severe it is.
//!
//! Providers deduplicate on a key of ours (PagerDuty's `dedup_key`,
//! Opsgenie's `alias`), so the alert that opens an outage and the one that
//! ends it must name the same key, and a retried delivery the same key again
//! (the provider then takes it once). The key of a down period is our
//! incident's id (state-changed v4 carries it in both the event that opens
//! the incident and the one that resolves it), so the provider's incident,
//! our `/api/v1/incidents/{id}` and an acknowledgement made in our API name
//! the same thing. Periods that are not incidents (a `degraded` period) and
//! events of recorders from before incidents (v3, no `incident_id`) keep a
//! key derived from the events alone: the monitor and the instant the
//! period began (the event that starts it carries that instant as its
//! `occurred_at`; the event that ends it carries it as `previous_since`).
//! [`dedup_key_for`] is the one place that knows this.

use crate::event::{AlertEvent, EventType};
use chrono::{DateTime, Utc};
use uptime_contracts::MonitorStatus;

/// The provider-side incidents an alert touches: the one it closes (a
/// change out of `down` or `degraded`) and the one it opens (a change into
/// `down` or `degraded`, a certificate warning, a test). A change from
/// `degraded` to `down` does both.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IncidentKeys {
    pub closes: Option<String>,
    pub opens: Option<String>,
}

/// The keys of the incidents `event` closes and opens (see the module).
pub fn dedup_key_for(event: &AlertEvent) -> IncidentKeys {
    let Some(monitor) = &event.monitor else {
        // A test alert: an incident of its own, opened and closed at once.
        let key = format!("uptime-test-{}", event.event_id);
        return IncidentKeys {
            closes: Some(key.clone()),
            opens: Some(key),
        };
    };
    let period =
        |since: DateTime<Utc>| format!("uptime-{}-{}", monitor.id, since.timestamp_millis());
    match event.event {
        EventType::SslExpiring => IncidentKeys {
            closes: None,
            // One incident per certificate: the warnings of the days before
            // it expires land on it instead of opening new ones.
            opens: event.ssl_expires_at.map(|expires| {
                format!("uptime-{}-certificate-{}", monitor.id, expires.timestamp())
            }),
        },
        EventType::Test => IncidentKeys::default(),
        EventType::MonitorDown | EventType::MonitorUp | EventType::MonitorDegraded => {
            let left_outage = event.previous_status.is_some_and(is_outage)
                && event.previous_status != event.status;
            // The incident an event names is the one it opens (a change to
            // `down`) or the one it resolves (the change out of `down`).
            let incident = event.incident.as_ref().map(|i| i.id.to_string());
            let closes = if !left_outage {
                None
            } else if event.previous_status == Some(MonitorStatus::Down) && incident.is_some() {
                incident.clone()
            } else {
                event.previous_since.map(period)
            };
            let opens = match event.status {
                Some(MonitorStatus::Down) if incident.is_some() => incident,
                Some(status) if is_outage(status) => Some(period(event.occurred_at)),
                _ => None,
            };
            IncidentKeys { closes, opens }
        }
    }
}

fn is_outage(status: MonitorStatus) -> bool {
    matches!(status, MonitorStatus::Down | MonitorStatus::Degraded)
}

/// How bad an alert is, lowest first. A recovery is as severe as what it
/// ends, so it reaches whoever the outage reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Info,
    Warning,
    Critical,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Critical => "critical",
        }
    }

    /// 0, 1, 2: how `alert_contacts.min_severity` stores it.
    pub fn rank(self) -> i16 {
        self as i16
    }

    pub fn from_rank(rank: i16) -> Option<Self> {
        [Severity::Info, Severity::Warning, Severity::Critical]
            .into_iter()
            .find(|s| s.rank() == rank)
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "critical" => Some(Severity::Critical),
            _ => None,
        }
    }
}

/// Days before expiry from which a certificate warning is critical.
const CRITICAL_CERTIFICATE_DAYS: i64 = 3;

pub fn severity_of(event: &AlertEvent) -> Severity {
    let of_status = |status: Option<MonitorStatus>| match status {
        Some(MonitorStatus::Down) => Severity::Critical,
        Some(MonitorStatus::Degraded) => Severity::Warning,
        _ => Severity::Info,
    };
    match event.event {
        EventType::MonitorDown | EventType::MonitorDegraded => of_status(event.status),
        EventType::MonitorUp => of_status(event.previous_status),
        EventType::SslExpiring if event.days_left.unwrap_or(0) <= CRITICAL_CERTIFICATE_DAYS => {
            Severity::Critical
        }
        EventType::SslExpiring => Severity::Warning,
        EventType::Test => Severity::Info,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::event::{CheckInfo, MonitorInfo};
    use chrono::TimeZone;
    use uptime_contracts::{MonitorKind, Trigger};
    use uuid::Uuid;

    pub(crate) fn change(
        previous: MonitorStatus,
        status: MonitorStatus,
        previous_since: DateTime<Utc>,
        at: DateTime<Utc>,
    ) -> AlertEvent {
        AlertEvent {
            event: EventType::for_status(status).unwrap(),
            event_id: Uuid::new_v4(),
            monitor: Some(MonitorInfo {
                id: 42,
                name: "Shop <main> & co".into(),
                kind: MonitorKind::Http,
                target: Some("https://shop.example.com/".into()),
                labels: Default::default(),
            }),
            incident: None,
            previous_status: Some(previous),
            status: Some(status),
            previous_since: Some(previous_since),
            occurred_at: at,
            check: Some(CheckInfo {
                check_id: Uuid::new_v4(),
                trigger: Trigger::Scheduled,
                checked_at: at,
                status,
                latency_ms: Some(120),
                http_status: Some(503),
                error: Some("HTTP 503".into()),
            }),
            ssl_expires_at: None,
            days_left: None,
            warn_days: None,
            message: None,
            round: None,
        }
    }

    pub(crate) fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_790_000_000 + secs, 0).unwrap()
    }

    #[test]
    fn the_recovery_closes_the_key_the_outage_opened() {
        use MonitorStatus::*;
        let down = change(Up, Down, t(0), t(60));
        let up = change(Down, Up, t(60), t(300));
        let opened = dedup_key_for(&down);
        assert_eq!(opened.closes, None);
        assert_eq!(opened.opens.as_deref(), Some("uptime-42-1790000060000"));
        let closed = dedup_key_for(&up);
        assert_eq!(closed.closes, opened.opens);
        assert_eq!(closed.opens, None);
        // degraded -> down: the degraded period ends, the outage begins.
        let worse = dedup_key_for(&change(Degraded, Down, t(0), t(60)));
        assert_eq!(worse.closes.as_deref(), Some("uptime-42-1790000000000"));
        assert_eq!(worse.opens.as_deref(), Some("uptime-42-1790000060000"));
        // pending -> up: nothing to open or close.
        assert_eq!(
            dedup_key_for(&change(Pending, Up, t(0), t(1))),
            IncidentKeys::default()
        );
    }

    /// `change` as state-changed v4 publishes it: naming its incident.
    pub(crate) fn with_incident(mut event: AlertEvent, id: Uuid) -> AlertEvent {
        event.incident = Some(crate::event::IncidentInfo {
            id,
            alert: uptime_contracts::AlertKind::Transition,
            down_for_secs: None,
            held_children: 0,
            blocked_by: Vec::new(),
            acknowledge_url: None,
        });
        event
    }

    #[test]
    fn an_incident_is_keyed_by_its_id() {
        use MonitorStatus::*;
        let incident = Uuid::from_u128(0x5eed);
        let key = Some(incident.to_string());
        let down = dedup_key_for(&with_incident(change(Up, Down, t(0), t(60)), incident));
        assert_eq!((down.closes, down.opens.clone()), (None, key.clone()));
        let up = dedup_key_for(&with_incident(change(Down, Up, t(60), t(300)), incident));
        assert_eq!((up.closes, up.opens), (key.clone(), None));
        // degraded -> down: the degraded period (no incident) ends under its
        // derived key, the incident opens under its id.
        let worse = dedup_key_for(&with_incident(
            change(Degraded, Down, t(0), t(60)),
            incident,
        ));
        assert_eq!(worse.closes.as_deref(), Some("uptime-42-1790000000000"));
        assert_eq!(worse.opens, key);
        // down -> degraded: the incident ends, a degraded period begins.
        let better = dedup_key_for(&with_incident(
            change(Down, Degraded, t(60), t(120)),
            incident,
        ));
        assert_eq!(better.closes, key);
        assert_eq!(better.opens.as_deref(), Some("uptime-42-1790000120000"));
    }

    #[test]
    fn a_recovery_is_as_severe_as_its_outage() {
        use MonitorStatus::*;
        assert_eq!(
            severity_of(&change(Up, Down, t(0), t(1))),
            Severity::Critical
        );
        assert_eq!(
            severity_of(&change(Down, Up, t(0), t(1))),
            Severity::Critical
        );
        assert_eq!(
            severity_of(&change(Degraded, Up, t(0), t(1))),
            Severity::Warning
        );
        assert_eq!(
            severity_of(&change(Pending, Up, t(0), t(1))),
            Severity::Info
        );
        assert!(Severity::Info < Severity::Warning && Severity::Warning < Severity::Critical);
    }
}
