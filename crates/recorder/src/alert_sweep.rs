//! The alert sweeper: what alerts without a check result to ride on.
//! Every few seconds, on every replica (they share the work through
//! `FOR UPDATE SKIP LOCKED`), three set-based passes, each one transaction
//! that writes its events to the outbox with the incidents it moves, so a
//! crash loses nothing and a redo names its events the same (the outbox
//! and JetStream keep one):
//!
//! 1. due reminders ([`crate::reminders`]): open incidents whose
//!    `next_reminder_at` passed, through a partial index over open
//!    incidents with a schedule;
//! 2. incidents held behind parents none of which is down or failing any
//!    more: one `released` alert each (the monitor is still down, its
//!    incident is open);
//! 3. flapping monitors without a change for their stable time: flapping
//!    ends, and an incident whose down alert it held is released.
//!
//! A deployment without reminders, dependencies or flapping finds nothing
//! in three index probes per interval: no cost per check.

use crate::flapping;
use crate::outbox;
use crate::plan::monitor_ref;
use crate::reminders::{self, DueIncident, ReminderRules, ReminderStep};
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use std::collections::HashMap;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{
    state_changed, AlertKind, CheckRef, HoldReason, MonitorStatus, StateChange, Trigger,
};
use uptime_db::alerting::{self as db, IncidentAlerted};
use uptime_db::incidents::{Incident, IncidentAlert};
use uptime_db::monitor_decisions::{self as decisions, MonitorForDecisions};
use uptime_db::recording::{self, NewOutboxEvent};
use uptime_db::{DbError, DbResult, Pool};
use uuid::Uuid;

/// The namespace of released alerts' event ids.
const RELEASE_NAMESPACE: Uuid = Uuid::from_u128(0x2e91_b4c7_6a18_4f05_9d3c_71e8_a4b2_0d69);

/// The event id of the release of `incident_id`'s down alert: an incident
/// is held at most once (at its start), so released at most once.
pub fn released_event_id(incident_id: Uuid) -> Uuid {
    Uuid::new_v5(
        &RELEASE_NAMESPACE,
        format!("{incident_id}:released").as_bytes(),
    )
}

/// What a sweep wrote: its events, to publish now.
#[derive(Debug, Default)]
pub struct Swept {
    pub reminders: usize,
    pub released: usize,
    pub events: Vec<NewOutboxEvent>,
}

/// The alert about open `incident` of `monitor` at `now` (a reminder or a
/// release): the incident's down alert said again.
pub fn incident_event(
    monitor: &MonitorForDecisions,
    incident: &Incident,
    alert: AlertKind,
    event_id: Uuid,
    now: DateTime<Utc>,
) -> StateChange {
    let down_for = (now - incident.started_at)
        .num_seconds()
        .max(0)
        .unsigned_abs();
    StateChange {
        event_id,
        monitor: monitor_ref(monitor),
        previous_status: MonitorStatus::Down,
        status: MonitorStatus::Down,
        occurred_at: now,
        previous_since: Some(incident.started_at),
        consecutive_failures: u32::try_from(monitor.consecutive_failures).unwrap_or(0),
        // No check made this event: it names the newest check and the
        // incident's cause.
        check: CheckRef {
            check_id: event_id,
            trigger: Trigger::Scheduled,
            checked_at: monitor.last_checked_at.unwrap_or(now),
            status: MonitorStatus::Down,
            latency_ms: None,
            http_status: None,
            error: incident.cause.clone(),
        },
        round: None,
        alert,
        incident_id: Some(incident.id),
        down_for_secs: Some(down_for),
        held: None,
        blocked_by: incident.blocked_by.clone(),
        held_children: u32::try_from(incident.held_children).unwrap_or(0),
        labels: serde_json::from_value(monitor.labels.clone()).unwrap_or_default(),
        in_maintenance: false,
    }
}

fn outbox_row(event: &StateChange) -> NewOutboxEvent {
    let (subject, payload) = state_changed::encode(event);
    NewOutboxEvent {
        // As the recorder's transition events: derived from the event id
        // and the subject.
        id: Uuid::new_v5(&event.event_id, subject.as_bytes()),
        monitor_id: Some(event.monitor.id),
        subject: subject.to_string(),
        // An encoded event is JSON (the column is jsonb).
        payload: serde_json::from_slice(&payload).expect("an encoded event is JSON"),
    }
}

fn incident_alert(event: &StateChange) -> IncidentAlert {
    IncidentAlert {
        event_id: event.event_id,
        kind: event.alert.as_str().to_string(),
        status: event.status.as_str().to_string(),
        at: event.occurred_at,
        held: None,
    }
}

/// Releases the held down alert of each of `incidents` at `now`.
fn releases(
    incidents: &[Incident],
    monitors: &HashMap<i64, MonitorForDecisions>,
    now: DateTime<Utc>,
    swept: &mut Swept,
    done: &mut Vec<IncidentAlerted>,
) {
    for incident in incidents {
        let Some(monitor) = monitors.get(&incident.monitor_id) else {
            continue;
        };
        let event_id = released_event_id(incident.id);
        let event = incident_event(monitor, incident, AlertKind::Released, event_id, now);
        let rules = ReminderRules::of(
            monitor.rules.reminder_interval_secs,
            monitor.rules.reminder_max,
        );
        done.push(IncidentAlerted {
            id: incident.id,
            release: true,
            reminders_sent: incident.reminders_sent,
            // Reminders repeat the alert from when it went out.
            next_reminder_at: rules.and_then(|r| r.first_due(now)),
            alert: Some(incident_alert(&event)),
        });
        swept.events.push(outbox_row(&event));
        swept.released += 1;
    }
}

async fn monitors_of(
    conn: &mut diesel_async::AsyncPgConnection,
    incidents: &[Incident],
) -> DbResult<HashMap<i64, MonitorForDecisions>> {
    let mut ids: Vec<i64> = incidents.iter().map(|i| i.monitor_id).collect();
    ids.sort_unstable();
    ids.dedup();
    Ok(decisions::read(conn, &ids)
        .await?
        .into_iter()
        .map(|m| (m.id, m))
        .collect())
}

/// Pass 1: sends the reminders due at `now` (at most `limit`).
pub async fn send_due_reminders(pool: &Pool, now: DateTime<Utc>, limit: i64) -> DbResult<Swept> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let due = db::lock_due_reminders(conn, now, limit).await?;
            let mut swept = Swept::default();
            if due.is_empty() {
                return Ok(swept);
            }
            let monitors = monitors_of(conn, &due).await?;
            let mut done = Vec::with_capacity(due.len());
            for incident in &due {
                let monitor = monitors.get(&incident.monitor_id);
                let rules = monitor.and_then(|m| {
                    ReminderRules::of(m.rules.reminder_interval_secs, m.rules.reminder_max)
                });
                let state = DueIncident {
                    sent: incident.reminders_sent.max(0).unsigned_abs(),
                    acknowledged: incident.acknowledged_at.is_some(),
                    held: incident.alert_held.is_some(),
                };
                match (reminders::step(state, rules, now), monitor) {
                    (ReminderStep::Send { number, next }, Some(monitor)) => {
                        let id = reminders::reminder_event_id(incident.id, number);
                        let event = incident_event(monitor, incident, AlertKind::Reminder, id, now);
                        done.push(IncidentAlerted {
                            id: incident.id,
                            release: false,
                            reminders_sent: i32::try_from(number).unwrap_or(i32::MAX),
                            next_reminder_at: next,
                            alert: Some(incident_alert(&event)),
                        });
                        swept.events.push(outbox_row(&event));
                        swept.reminders += 1;
                    }
                    _ => done.push(IncidentAlerted {
                        id: incident.id,
                        release: false,
                        reminders_sent: incident.reminders_sent,
                        next_reminder_at: None,
                        alert: None,
                    }),
                }
            }
            db::record_alerted(conn, &done).await?;
            recording::insert_outbox(conn, &swept.events).await?;
            Ok(swept)
        }
        .scope_boxed()
    })
    .await
}

/// Pass 2: releases incidents no parent holds any more (at most `limit`).
pub async fn release_unblocked(pool: &Pool, now: DateTime<Utc>, limit: i64) -> DbResult<Swept> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let unblocked = db::lock_unblocked(conn, limit).await?;
            let mut swept = Swept::default();
            if unblocked.is_empty() {
                return Ok(swept);
            }
            let monitors = monitors_of(conn, &unblocked).await?;
            let mut done = Vec::with_capacity(unblocked.len());
            releases(&unblocked, &monitors, now, &mut swept, &mut done);
            db::record_alerted(conn, &done).await?;
            recording::insert_outbox(conn, &swept.events).await?;
            Ok(swept)
        }
        .scope_boxed()
    })
    .await
}

/// Pass 3: ends the flapping of monitors stable at `now` and releases the
/// down alerts it held (at most `limit` monitors).
pub async fn end_stable_flapping(pool: &Pool, now: DateTime<Utc>, limit: i64) -> DbResult<Swept> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|conn| {
        async move {
            let default_stable = i32::try_from(flapping::DEFAULT_STABLE_SECS).unwrap_or(i32::MAX);
            let stable = db::end_stable_flapping(conn, now, default_stable, limit).await?;
            let mut swept = Swept::default();
            if stable.is_empty() {
                return Ok(swept);
            }
            let held = db::lock_held_of(conn, &stable, HoldReason::Flapping.as_str()).await?;
            let monitors = monitors_of(conn, &held).await?;
            let mut done = Vec::with_capacity(held.len());
            releases(&held, &monitors, now, &mut swept, &mut done);
            db::record_alerted(conn, &done).await?;
            recording::insert_outbox(conn, &swept.events).await?;
            Ok(swept)
        }
        .scope_boxed()
    })
    .await
}

/// One round of the three passes at `now`.
pub async fn sweep(pool: &Pool, now: DateTime<Utc>, limit: i64) -> DbResult<Swept> {
    let mut all = Swept::default();
    for pass in [
        send_due_reminders(pool, now, limit).await?,
        release_unblocked(pool, now, limit).await?,
        end_stable_flapping(pool, now, limit).await?,
    ] {
        all.reminders += pass.reminders;
        all.released += pass.released;
        all.events.extend(pass.events);
    }
    Ok(all)
}

/// The sweeper: every `every`, [`sweep`] and publish, until `shutdown`.
pub async fn run(
    pool: Pool,
    js: async_nats::jetstream::Context,
    every: Duration,
    limit: i64,
    shutdown: CancellationToken,
    progress: uptime_ops::Progress,
) {
    uptime_ops::shell::every(every, &shutdown, &progress, || async {
        match sweep(&pool, Utc::now(), limit).await {
            Ok(swept) => {
                metrics::counter!("alerts_swept_total", "kind" => "reminder")
                    .increment(swept.reminders as u64);
                metrics::counter!("alerts_swept_total", "kind" => "released")
                    .increment(swept.released as u64);
                // Committed: the relay publishes them if this does not.
                outbox::publish_and_mark(&pool, &js, &swept.events).await;
            }
            Err(e) => tracing::warn!(error = %e, "sweeping reminders and held alerts"),
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_named_once_per_incident() {
        let a = Uuid::from_u128(7);
        assert_eq!(released_event_id(a), released_event_id(a));
        assert_ne!(released_event_id(a), released_event_id(Uuid::from_u128(8)));
        assert_ne!(released_event_id(a), reminders::reminder_event_id(a, 1));
    }
}
