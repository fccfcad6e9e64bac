//! The stack's own records, read from its PostgreSQL: scheduled and
//! manual results, missed heartbeats, the outbox's state changes and
//! certificate warnings, incidents, and the spans of the pause window.

use super::verdicts::alerts::{EventFact, IncidentFact};
use super::verdicts::slots::Off;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use std::collections::HashMap;
use uptime_contracts::{ssl_expiring, state_changed};
use uptime_db::schema::{check_results, incidents, maintenance_spans, outbox_events};
use uuid::Uuid;

/// How late the recorder's maintenance sweep (every 5 s) may mark a
/// window's monitors after the occurrence starts.
pub const SWEEP_LATE_MS: i64 = 7_000;

pub struct Db {
    pool: uptime_db::Pool,
}

/// One incident as stored.
#[derive(Debug, Clone)]
pub struct Incident {
    pub id: Uuid,
    pub monitor_id: i64,
    pub started_ms: i64,
    pub fact: IncidentFact,
}

/// Results of the run, by kind.
#[derive(Debug, Default)]
pub struct Results {
    /// Scheduled checks' (monitor, due ms).
    pub scheduled: Vec<(i64, i64)>,
    /// Missed heartbeats' (monitor, deadline ms).
    pub missed: Vec<(i64, i64)>,
    /// Manual results per monitor.
    pub manual: HashMap<i64, usize>,
}

/// The outbox's events, and how many are still unpublished.
#[derive(Debug, Default)]
pub struct Events {
    pub facts: Vec<EventFact>,
    pub unpublished: usize,
    /// Events the verdicts could not read.
    pub unreadable: Vec<String>,
}

/// An outbox row: subject, payload, written, published.
type OutboxRow = (
    String,
    serde_json::Value,
    DateTime<Utc>,
    Option<DateTime<Utc>>,
);

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

impl Db {
    pub fn connect(url: &str) -> anyhow::Result<Self> {
        let settings = uptime_config::DatabaseSettings {
            url: url.to_string(),
            max_connections: 4,
            ..Default::default()
        };
        Ok(Self {
            pool: uptime_db::pool::connect(&settings)?,
        })
    }

    pub async fn results(&self, ids: &[i64], since: DateTime<Utc>) -> anyhow::Result<Results> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let rows: Vec<(i64, String, String, Option<DateTime<Utc>>)> = check_results::table
            .filter(check_results::monitor_id.eq_any(ids))
            .filter(check_results::slot_at.ge(since))
            .select((
                check_results::monitor_id,
                check_results::trigger,
                check_results::reporter,
                check_results::due_at,
            ))
            .load(&mut *conn)
            .await?;
        let mut results = Results::default();
        for (monitor, trigger, reporter, due) in rows {
            match (trigger.as_str(), due) {
                ("scheduled", Some(due)) => results.scheduled.push((monitor, ms(due))),
                ("heartbeat", Some(due)) if reporter == "scheduler" => {
                    results.missed.push((monitor, ms(due)))
                }
                ("manual", _) => *results.manual.entry(monitor).or_default() += 1,
                _ => {}
            }
        }
        Ok(results)
    }

    pub async fn events(&self, ids: &[i64]) -> anyhow::Result<Events> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let rows: Vec<OutboxRow> = outbox_events::table
            .filter(outbox_events::monitor_id.eq_any(ids))
            .select((
                outbox_events::subject,
                outbox_events::payload,
                outbox_events::created_at,
                outbox_events::published_at,
            ))
            .load(&mut *conn)
            .await?;
        let mut events = Events::default();
        for (subject, payload, created, published) in rows {
            events.unpublished += usize::from(published.is_none());
            let bytes = serde_json::to_vec(&payload)?;
            if let Ok(w) = ssl_expiring::decode(&subject, &bytes) {
                events.facts.push(EventFact {
                    event_id: w.event_id,
                    monitor_id: w.monitor.id,
                    event_type: Some("ssl.expiring"),
                    previous_status: Some(w.check.status.as_str().to_string()),
                    held: None,
                    incident_id: None,
                    days_left: Some(w.days_left),
                    occurred_ms: ms(w.occurred_at),
                    written_ms: ms(created),
                });
                continue;
            }
            match state_changed::decode(&subject, &bytes) {
                Ok(c) => events.facts.push(EventFact {
                    event_id: c.event_id,
                    monitor_id: c.monitor.id,
                    event_type: match c.status.as_str() {
                        "down" => Some("monitor.down"),
                        "up" => Some("monitor.up"),
                        "degraded" => Some("monitor.degraded"),
                        _ => None,
                    },
                    previous_status: Some(c.previous_status.as_str().to_string()),
                    held: c.held.map(|h| h.as_str().to_string()),
                    incident_id: c.incident_id,
                    days_left: None,
                    occurred_ms: ms(c.occurred_at),
                    written_ms: ms(created),
                }),
                Err(e) => events.unreadable.push(format!("{subject}: {e}")),
            }
        }
        Ok(events)
    }

    /// Every event's alert kind and hold, for the coverage figures:
    /// (monitor, alert kind, held) of each state change.
    pub async fn alert_kinds(
        &self,
        ids: &[i64],
    ) -> anyhow::Result<Vec<(i64, String, Option<String>)>> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let rows: Vec<(String, serde_json::Value)> = outbox_events::table
            .filter(outbox_events::monitor_id.eq_any(ids))
            .select((outbox_events::subject, outbox_events::payload))
            .load(&mut *conn)
            .await?;
        Ok(rows
            .into_iter()
            .filter_map(|(subject, payload)| {
                let c =
                    state_changed::decode(&subject, &serde_json::to_vec(&payload).ok()?).ok()?;
                Some((
                    c.monitor.id,
                    c.alert.as_str().to_string(),
                    c.held.map(|h| h.as_str().to_string()),
                ))
            })
            .collect())
    }

    pub async fn incidents(&self, ids: &[i64]) -> anyhow::Result<Vec<Incident>> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        type Row = (
            Uuid,
            i64,
            DateTime<Utc>,
            Option<DateTime<Utc>>,
            Option<DateTime<Utc>>,
        );
        let rows: Vec<Row> = incidents::table
            .filter(incidents::monitor_id.eq_any(ids))
            .select((
                incidents::id,
                incidents::monitor_id,
                incidents::started_at,
                incidents::acknowledged_at,
                incidents::resolved_at,
            ))
            .load(&mut *conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(id, monitor_id, started, acked, resolved)| Incident {
                id,
                monitor_id,
                started_ms: ms(started),
                fact: IncidentFact {
                    acknowledged_ms: acked.map(ms),
                    resolved_ms: resolved.map(ms),
                },
            })
            .collect())
    }

    /// The spans of window `window_id` as the pipeline saw them: from the
    /// occurrence's start (marked up to a sweep later) to the sweep that
    /// closed it (`until` while open).
    pub async fn pause_spans(
        &self,
        window_id: i64,
        until: DateTime<Utc>,
    ) -> anyhow::Result<Vec<Off>> {
        let mut conn = uptime_db::pool::conn(&self.pool).await?;
        let rows: Vec<(DateTime<Utc>, Option<DateTime<Utc>>)> = maintenance_spans::table
            .filter(maintenance_spans::window_id.eq(window_id))
            .select((maintenance_spans::starts_at, maintenance_spans::closed_at))
            .load(&mut *conn)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(from, closed)| Off {
                from: ms(from),
                to: ms(closed.unwrap_or(until)),
                late_ms: SWEEP_LATE_MS,
            })
            .collect())
    }
}

/// Incidents grouped by monitor.
pub fn by_monitor(incidents: &[Incident]) -> HashMap<i64, Vec<&Incident>> {
    let mut map: HashMap<i64, Vec<&Incident>> = HashMap::new();
    for i in incidents {
        map.entry(i.monitor_id).or_default().push(i);
    }
    map
}
