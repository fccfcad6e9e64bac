//! Maintenance windows in the recorder: the sweep that opens and closes
//! their occurrences, marks the monitors they cover, and releases at a
//! window's end the one down alert it held.
//!
//! One replica sweeps at a time (a transaction advisory lock), every
//! `recorder.maintenance_sweep_interval_ms`, in one transaction per round:
//!
//! 1. expand each window that may still open (`uptime-maintenance`, bounded
//!    per window) and open a span for each occurrence open now, or close the
//!    spans whose occurrence is over (or whose window was edited or deleted);
//! 2. mark the monitors the open spans cover (`monitors.maintenance_*`, one
//!    set-based statement; label selectors are evaluated each round, so a
//!    monitor created later joins) and clear the others. The scheduler reads
//!    the mark with each check's configuration (`pause`: the slot is
//!    skipped); the recorder with the monitor rows it locks per batch
//!    (`silence` and `pause`: transition alerts held, results and events
//!    `in_maintenance`). Without windows, a check costs nothing more;
//! 3. for each monitor whose mark was cleared and that is still down with
//!    a down alert held by maintenance and never sent, write one
//!    `state-changed.v4` event with `alert: released` (its id derived from
//!    the incident, so a round retried after a crash writes it once) to the
//!    outbox in the same transaction, and note it on the incident. A
//!    monitor that went down and came back inside the window is not down
//!    any more here: nothing goes out, neither its down nor its recovery.
//!
//! The window ends for the pipeline when the round that closes it commits
//! (within one interval of its planned end): until then the mark holds
//! alerts, so a recovery just after the planned end is still held and
//! never follows a down alert nobody received.

use crate::outbox;
use chrono::{DateTime, Utc};
use diesel_async::scoped_futures::ScopedFutureExt;
use diesel_async::AsyncConnection;
use std::collections::HashSet;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use uptime_contracts::{
    state_changed, AlertKind, CheckRef, HoldReason, MonitorRef, MonitorStatus, StateChange, Trigger,
};
use uptime_db::incidents::{Incident, IncidentAlert};
use uptime_db::maintenance::sweep::{self as sql, OpenSpan, SpanRow};
use uptime_db::maintenance::MaintenanceWindow;
use uptime_db::models::CheckResult;
use uptime_db::monitor_decisions::{self as decisions, MonitorForDecisions};
use uptime_db::recording::{self, NewOutboxEvent};
use uptime_db::{DbError, DbResult, Pool};
use uptime_maintenance::Schedule;
use uuid::Uuid;

/// The namespace of released alerts' event ids.
const RELEASE_NAMESPACE: Uuid = Uuid::from_u128(0x3e8a_61f2_0b7d_4c95_a1e4_58c2_9d07_b6f3);

/// The id of the released alert of incident `incident_id`: one per incident.
pub fn released_event_id(incident_id: Uuid) -> Uuid {
    Uuid::new_v5(&RELEASE_NAMESPACE, incident_id.as_bytes())
}

/// Whether something `at` happened while `monitor` was in a maintenance
/// window (its alerts held, its results left out of the uptime).
pub fn in_maintenance(monitor: &MonitorForDecisions, at: DateTime<Utc>) -> bool {
    monitor.maintenance.covers(at)
}

/// What a window is, as `uptime-maintenance` reads it.
pub fn schedule_of(
    window: &MaintenanceWindow,
) -> Result<Schedule, uptime_maintenance::WindowError> {
    Schedule::from_parts(
        window.starts_at,
        window.ends_at,
        window.rrule.as_deref(),
        window.timezone.as_deref(),
        window.duration_secs.map(i64::from),
    )
}

/// The occurrences of `windows` open at `now`. A window that no longer
/// parses (the API validates, so a bug) is logged and treated as closed.
pub fn spans_open_at(windows: &[MaintenanceWindow], now: DateTime<Utc>) -> Vec<OpenSpan> {
    windows
        .iter()
        .filter_map(|w| {
            let schedule = schedule_of(w)
                .map_err(|error| {
                    tracing::warn!(window_id = w.id, %error, "maintenance window unusable; skipped");
                })
                .ok()?;
            let span = schedule.open_at(now)?;
            Some(OpenSpan {
                window_id: w.id,
                org_id: w.org_id,
                effect: w.effect.clone(),
                monitor_ids: w.monitor_ids.clone(),
                label_selector: w.label_selector.clone(),
                starts_at: span.start,
                ends_at: span.end,
            })
        })
        .collect()
}

/// The open spans that no open occurrence stands for any more: ended,
/// their window deleted, or edited so that this occurrence is not open.
pub fn spans_to_close(open: &[SpanRow], wanted: &[OpenSpan]) -> Vec<i64> {
    let wanted: HashSet<(i64, DateTime<Utc>)> =
        wanted.iter().map(|s| (s.window_id, s.starts_at)).collect();
    open.iter()
        .filter(|row| match row.window_id {
            Some(window_id) => !wanted.contains(&(window_id, row.starts_at)),
            None => true,
        })
        .map(|row| row.id)
        .collect()
}

/// Whether `incident`'s down alert was held by maintenance and nobody has
/// been told since (no down event of it went out unheld).
pub fn release_due(incident: &Incident) -> bool {
    let alerts = incident.alert_list();
    let held = alerts.iter().any(|a| {
        a.status == MonitorStatus::Down.as_str()
            && a.held.as_deref() == Some(HoldReason::Maintenance.as_str())
    });
    let told = alerts
        .iter()
        .any(|a| a.status == MonitorStatus::Down.as_str() && a.held.is_none());
    held && !told
}

/// The released alert of `incident`: `monitor` is still down at `now`;
/// `check` is its newest result.
pub fn released_event(
    monitor: &MonitorForDecisions,
    incident: &Incident,
    check: Option<&CheckResult>,
    now: DateTime<Utc>,
) -> StateChange {
    let check = match check {
        Some(r) => CheckRef {
            check_id: r.check_id,
            trigger: serde_json::from_value(serde_json::Value::from(r.trigger.as_str()))
                .unwrap_or(Trigger::Scheduled),
            checked_at: r.checked_at,
            status: MonitorStatus::Down,
            latency_ms: r.latency_ms.and_then(|v| u32::try_from(v).ok()),
            http_status: r.http_status.and_then(|v| u16::try_from(v).ok()),
            error: r.error.clone(),
        },
        // Results outlive incidents' start by far; a monitor down without
        // one (deleted partition) still gets its alert.
        None => CheckRef {
            check_id: incident.id,
            trigger: Trigger::Scheduled,
            checked_at: incident.started_at,
            status: MonitorStatus::Down,
            latency_ms: None,
            http_status: None,
            error: incident.cause.clone(),
        },
    };
    StateChange {
        event_id: released_event_id(incident.id),
        monitor: MonitorRef {
            id: monitor.id,
            user_id: monitor.org_id,
            name: monitor.name.clone(),
            kind: monitor.kind,
            target: monitor.target.clone(),
        },
        previous_status: MonitorStatus::Down,
        status: MonitorStatus::Down,
        occurred_at: now,
        previous_since: Some(incident.started_at),
        consecutive_failures: u32::try_from(monitor.consecutive_failures).unwrap_or(0),
        check,
        round: None,
        alert: AlertKind::Released,
        incident_id: Some(incident.id),
        down_for_secs: u64::try_from((now - incident.started_at).num_seconds()).ok(),
        held: None,
        blocked_by: Vec::new(),
        held_children: 0,
        labels: serde_json::from_value(monitor.labels.clone()).unwrap_or_default(),
        in_maintenance: false,
    }
}

/// What one sweep round did.
#[derive(Debug, Default)]
pub struct SweepOutcome {
    /// `false`: another replica was sweeping; nothing was done.
    pub swept: bool,
    pub spans_open: usize,
    pub spans_closed: usize,
    pub markers_changed: usize,
    /// Released alerts committed to the outbox, to publish now.
    pub released: Vec<NewOutboxEvent>,
}

/// One sweep round at `now` (the clock is a parameter: tests move it).
pub async fn sweep_once(pool: &Pool, now: DateTime<Utc>) -> DbResult<SweepOutcome> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    conn.transaction::<_, DbError, _>(|c| {
        async move {
            let mut out = SweepOutcome::default();
            if !sql::try_lock(c).await? {
                return Ok(out);
            }
            out.swept = true;
            let windows = sql::windows_to_expand(c, now).await?;
            let open = sql::open_spans(c).await?;
            if windows.is_empty() && open.is_empty() {
                // Nothing open and nothing to open; markers can only be
                // left over from a round that closed the last span.
                out.markers_changed = release_cleared(c, now, &mut out.released).await?;
                return Ok(out);
            }
            let wanted = spans_open_at(&windows, now);
            let closing = spans_to_close(&open, &wanted);
            sql::upsert_spans(c, &wanted).await?;
            sql::close_spans(c, &closing, now).await?;
            out.spans_open = wanted.len();
            out.spans_closed = closing.len();
            out.markers_changed = release_cleared(c, now, &mut out.released).await?;
            Ok(out)
        }
        .scope_boxed()
    })
    .await
}

/// Refreshes the markers and writes the released alerts of the monitors
/// whose marker went; how many markers changed.
async fn release_cleared(
    c: &mut diesel_async::AsyncPgConnection,
    now: DateTime<Utc>,
    released: &mut Vec<NewOutboxEvent>,
) -> DbResult<usize> {
    let changes = sql::refresh_markers(c).await?;
    let down: Vec<i64> = changes
        .iter()
        .filter(|m| m.cleared && m.status == MonitorStatus::Down.as_str())
        .map(|m| m.monitor_id)
        .collect();
    let incidents: Vec<Incident> = sql::open_incidents_of(c, &down)
        .await?
        .into_iter()
        .filter(release_due)
        .collect();
    if incidents.is_empty() {
        return Ok(changes.len());
    }
    let ids: Vec<i64> = incidents.iter().map(|i| i.monitor_id).collect();
    let monitors = decisions::read(c, &ids).await?;
    for incident in &incidents {
        let Some(monitor) = monitors.iter().find(|m| m.id == incident.monitor_id) else {
            continue;
        };
        let check = sql::latest_result(c, monitor.id).await?;
        let event = released_event(monitor, incident, check.as_ref(), now);
        let (subject, payload) = state_changed::encode(&event);
        // The released alert is the incident's down alert from now on: its
        // hold is cleared (so the recovery alerts, and the alert sweeper
        // leaves it alone) and its reminders start from it.
        let reminders = crate::reminders::ReminderRules::of(
            monitor.rules.reminder_interval_secs,
            monitor.rules.reminder_max,
        );
        uptime_db::alerting::record_alerted(
            c,
            &[uptime_db::alerting::IncidentAlerted {
                id: incident.id,
                release: true,
                reminders_sent: incident.reminders_sent,
                next_reminder_at: reminders.and_then(|r| r.first_due(now)),
                alert: Some(IncidentAlert {
                    event_id: event.event_id,
                    kind: AlertKind::Released.as_str().to_string(),
                    status: MonitorStatus::Down.as_str().to_string(),
                    at: now,
                    held: None,
                }),
            }],
        )
        .await?;
        released.push(NewOutboxEvent {
            id: Uuid::new_v5(&event.event_id, subject.as_bytes()),
            monitor_id: Some(monitor.id),
            subject: subject.to_string(),
            // An encoded event is JSON (the column is jsonb).
            payload: serde_json::from_slice(&payload).expect("an encoded event is JSON"),
        });
    }
    recording::insert_outbox(c, released).await?;
    Ok(changes.len())
}

/// Sweeps every `every` until `shutdown`, publishing what a round released
/// right after it commits (the relay publishes it otherwise).
pub async fn run_sweeper(
    pool: Pool,
    js: async_nats::jetstream::Context,
    every: Duration,
    shutdown: CancellationToken,
    progress: uptime_ops::Progress,
) {
    uptime_ops::shell::every(every, &shutdown, &progress, || async {
        match sweep_once(&pool, Utc::now()).await {
            Ok(out) => {
                metrics::counter!("maintenance_alerts_released_total")
                    .increment(out.released.len() as u64);
                outbox::publish_and_mark(&pool, &js, &out.released).await;
            }
            Err(e) => tracing::warn!(error = %e, "maintenance sweep failed; retried next round"),
        }
    })
    .await
}

#[cfg(test)]
mod tests;
