//! Turning a batch of results into the rows to write: pure functions over the
//! locked monitor rows, so the decisions are testable without a database.

use crate::alert_facts::{self, AlertFacts};
use crate::alerting::{self, AlertContext, IncidentChange, TransitionDecision};
use crate::flapping::{FlapRules, FlapState, Flapping};
use crate::state_machine::{self, Applied, MonitorState, Observation, Rules, Transition};
use chrono::{DateTime, NaiveDate, Utc};
use std::collections::{BTreeMap, HashMap};
use uptime_contracts::{
    ssl_expiring, state_changed, CheckOutcome, CheckRef, CheckResult, HoldReason, MonitorKind,
    MonitorRef, MonitorStatus, Round, SslWarning, StateChange, Trigger,
};
use uptime_db::alerting::FlapStateUpdate;
use uptime_db::incidents::IncidentAlert;
use uptime_db::monitor_decisions::MonitorForDecisions;
use uptime_db::recording::{DailyIncrement, MonitorStateUpdate, NewCheckResult, NewOutboxEvent};
use uptime_heartbeats::Period;
use uuid::Uuid;

/// The namespace of the recorder's deterministic event ids.
const EVENT_NAMESPACE: Uuid = Uuid::from_u128(0x5b0c_7e1a_3c55_4d7e_9a21_6f4e_2b8d_0c13);

/// The id of the state-change event caused by check `check_id`: the same on
/// every redelivery, so the outbox and JetStream deduplicate it.
pub fn state_event_id(check_id: Uuid) -> Uuid {
    Uuid::new_v5(&EVENT_NAMESPACE, format!("{check_id}:state").as_bytes())
}

/// The id of the certificate warning caused by check `check_id`.
pub fn ssl_event_id(check_id: Uuid) -> Uuid {
    Uuid::new_v5(&EVENT_NAMESPACE, format!("{check_id}:ssl").as_bytes())
}

fn latency_warn_ms(monitor: &MonitorForDecisions) -> Option<u32> {
    monitor.latency_warn_ms.and_then(|v| u32::try_from(v).ok())
}

/// Whether a result made for `definition_version` may move `monitor`'s
/// state: only one made for its current definition.
pub fn is_current(definition_version: i64, monitor: &MonitorForDecisions) -> bool {
    definition_version >= monitor.definition_version
}

/// The row a result is stored as, judged by its monitor's latency threshold.
pub fn result_row(result: &CheckResult, monitor: &MonitorForDecisions) -> NewCheckResult {
    let status =
        state_machine::result_status(result.outcome, result.latency_ms, latency_warn_ms(monitor));
    NewCheckResult {
        check_id: result.check_id,
        monitor_id: result.monitor_id,
        trigger: result.trigger.as_str().to_string(),
        status: status.as_str().to_string(),
        checked_at: result.checked_at,
        due_at: result.due_at,
        latency_ms: result
            .latency_ms
            .map(|v| i32::try_from(v).unwrap_or(i32::MAX)),
        http_status: result.http_status.map(i32::from),
        error: result.error.clone(),
        ssl_expires_at: result.ssl_expires_at,
        reporter: result.reporter.clone(),
        definition_version: Some(result.definition_version),
    }
}

/// Applies newly stored `results` (any order) to their `monitors` (the locked
/// rows). Every result must belong to one of `monitors`.
pub fn effects(
    monitors: &[MonitorForDecisions],
    results: &[&CheckResult],
    now: DateTime<Utc>,
) -> Effects {
    effects_with_rounds(monitors, results, &HashMap::new(), now)
}

/// [`effects`], where some results are the verdicts of rounds decided by
/// quorum: `rounds` maps such a verdict's `check_id` (the round's id) to
/// the round, which its state-change event carries.
pub fn effects_with_rounds(
    monitors: &[MonitorForDecisions],
    results: &[&CheckResult],
    rounds: &HashMap<Uuid, Round>,
    now: DateTime<Utc>,
) -> Effects {
    effects_with_facts(monitors, results, rounds, &AlertFacts::default(), now)
}

/// [`effects_with_rounds`], deciding alerts with `facts` (read for the
/// monitors a first plan said needed them).
pub fn effects_with_facts(
    monitors: &[MonitorForDecisions],
    results: &[&CheckResult],
    rounds: &HashMap<Uuid, Round>,
    facts: &AlertFacts,
    now: DateTime<Utc>,
) -> Effects {
    let mut by_monitor: BTreeMap<i64, Vec<&CheckResult>> = BTreeMap::new();
    for r in results {
        by_monitor.entry(r.monitor_id).or_default().push(r);
    }
    let monitors: HashMap<i64, &MonitorForDecisions> = monitors.iter().map(|m| (m.id, m)).collect();
    let mut out = Effects::default();
    let mut rollup: BTreeMap<(i64, NaiveDate), (i32, i32)> = BTreeMap::new();

    for (monitor_id, mut results) in by_monitor {
        let Some(monitor) = monitors.get(&monitor_id) else {
            continue;
        };
        // Oldest first; ties broken by check id so the order is the same on
        // every replica and every redelivery.
        results.sort_by_key(|r| (r.checked_at, r.check_id));
        let mut tracker = MonitorTracker::new(monitor, rounds, facts);
        for result in results {
            let stored = state_machine::result_status(
                result.outcome,
                result.latency_ms,
                latency_warn_ms(monitor),
            );
            // Time inside a maintenance window is left out of the uptime.
            if tracker.counts_in_uptime(result)
                && !crate::maintenance::in_maintenance(monitor, result.checked_at)
            {
                let day = rollup
                    .entry((monitor_id, result.checked_at.date_naive()))
                    .or_default();
                day.0 += 1;
                if stored != MonitorStatus::Down {
                    day.1 += 1;
                }
            }
            tracker.apply(result, stored, now, &mut out);
        }
        tracker.finish(&mut out);
    }
    out.increments = rollup
        .into_iter()
        .map(|((monitor_id, day), (total, up))| DailyIncrement {
            monitor_id,
            day,
            total_checks: total,
            up_checks: up,
        })
        .collect();
    out
}

/// One monitor's state while its results of the batch are applied.
struct MonitorTracker<'a> {
    monitor: &'a MonitorForDecisions,
    /// The rounds behind verdicts, by round id.
    rounds: &'a HashMap<Uuid, Round>,
    state: MonitorState,
    rules: Rules,
    last_heartbeat_at: Option<DateTime<Utc>>,
    ssl_expires_at: Option<DateTime<Utc>>,
    ssl_warned_for: Option<DateTime<Utc>>,
    heartbeat_counted_until: Option<DateTime<Utc>>,
    /// The newest applied result's latency (`monitors.last_latency_ms`).
    last_latency_ms: Option<i32>,
    /// The heartbeat's period, parsed at its first counted ping.
    period: Option<Period>,
    facts: &'a AlertFacts,
    flap_rules: Option<FlapRules>,
    flap: FlapState,
    /// A transition moved the flapping state (only with a threshold).
    flap_touched: bool,
    /// The hold of the monitor's open incident's down alert, once this
    /// batch opened one (`Some(None)`: it went out).
    opened_hold: Option<Option<HoldReason>>,
}

/// A heartbeat monitor's period: its cron schedule, else its interval. A
/// schedule the API should have refused is logged and the interval used.
fn heartbeat_period(monitor: &MonitorForDecisions) -> Period {
    let schedule = monitor.heartbeat_schedule.as_deref();
    let timezone = monitor.heartbeat_timezone.as_deref();
    Period::of(monitor.interval_secs, schedule, timezone).unwrap_or_else(|error| {
        tracing::warn!(monitor_id = monitor.id, %error, "heartbeat schedule unusable; counting by its interval");
        Period::Interval {
            secs: monitor.interval_secs.max(1).unsigned_abs(),
        }
    })
}

impl<'a> MonitorTracker<'a> {
    fn new(
        monitor: &'a MonitorForDecisions,
        rounds: &'a HashMap<Uuid, Round>,
        facts: &'a AlertFacts,
    ) -> Self {
        Self {
            facts,
            flap_rules: FlapRules::of(
                monitor.rules.flap_threshold,
                monitor.rules.flap_window_secs,
                monitor.rules.flap_stable_secs,
            ),
            flap: FlapState {
                changes: monitor.flap_changes.clone().unwrap_or_default(),
                since: monitor.flapping_since,
            },
            flap_touched: false,
            opened_hold: None,
            monitor,
            rounds,
            state: MonitorState {
                status: monitor.status,
                status_since: monitor.status_since,
                consecutive_failures: u32::try_from(monitor.consecutive_failures).unwrap_or(0),
                last_checked_at: monitor.last_checked_at,
            },
            rules: Rules {
                confirmation_count: u32::try_from(monitor.confirmation_count).unwrap_or(1),
                latency_warn_ms: latency_warn_ms(monitor),
                active: monitor.active,
            },
            last_heartbeat_at: monitor.last_heartbeat_at,
            ssl_expires_at: monitor.ssl_expires_at,
            ssl_warned_for: monitor.ssl_warned_for,
            heartbeat_counted_until: monitor.heartbeat_counted_until,
            last_latency_ms: None,
            period: None,
        }
    }

    /// Whether `result` is one check of the daily uptime. A heartbeat
    /// monitor's uptime counts periods, not pings: a passing ping counts only
    /// when it opens a new period (the last counted one's interval, or its
    /// scheduled run, less a tenth of slack for a job that pings a little
    /// early, is over; see `uptime_heartbeats::Period::counted_until`), so
    /// pinging a thousand times hides no missed period. Each missed
    /// period (a failed result from the scheduler) and each `/fail` report
    /// counts, as every scheduled check does.
    fn counts_in_uptime(&mut self, result: &CheckResult) -> bool {
        let is_ping = self.monitor.kind == MonitorKind::Heartbeat
            && result.trigger == Trigger::Heartbeat
            && result.outcome == CheckOutcome::Pass;
        if !is_ping {
            return true;
        }
        if self
            .heartbeat_counted_until
            .is_some_and(|until| result.checked_at < until)
        {
            return false;
        }
        let period = self
            .period
            .get_or_insert_with(|| heartbeat_period(self.monitor));
        self.heartbeat_counted_until = Some(period.counted_until(result.checked_at));
        true
    }

    fn apply(
        &mut self,
        result: &CheckResult,
        stored: MonitorStatus,
        now: DateTime<Utc>,
        out: &mut Effects,
    ) {
        // A ping is a fact whatever the monitor's state: it only moves forward.
        if result.trigger == Trigger::Heartbeat && result.outcome == CheckOutcome::Pass {
            self.last_heartbeat_at = self.last_heartbeat_at.max(Some(result.checked_at));
        }
        let applied = self.state.apply(
            self.rules,
            Observation {
                checked_at: result.checked_at,
                outcome: result.outcome,
                latency_ms: result.latency_ms,
            },
        );
        if applied == Applied::Stale {
            return;
        }
        if let Some(ms) = result.latency_ms {
            self.last_latency_ms = Some(i32::try_from(ms).unwrap_or(i32::MAX));
        }
        if let Some(expires_at) = result.ssl_expires_at {
            self.ssl_expires_at = Some(expires_at);
        }
        if applied == Applied::Paused {
            return;
        }
        if let Applied::Counted(Some(transition)) = applied {
            out.transitions.push(transition.to);
            let (mut context, blocked_by, held_children) = self.alert_context(&transition, out);
            context.silenced_by_maintenance =
                crate::maintenance::in_maintenance(self.monitor, transition.at);
            let decision = alerting::decide_transition(self.monitor.id, &transition, context);
            if let IncidentChange::Opens { id, started_at } = decision.incident {
                self.opened_hold = Some(decision.held);
                out.incidents_alerting.extend(alert_facts::opened_alerting(
                    self.monitor,
                    id,
                    started_at,
                    decision.held,
                    &blocked_by,
                    held_children,
                ));
            }
            let mut event = self.state_changed(result, stored, transition, &decision);
            event.blocked_by = blocked_by;
            event.held_children = held_children;
            let alert = IncidentAlert {
                event_id: event.event_id,
                kind: event.alert.as_str().to_string(),
                status: event.status.as_str().to_string(),
                at: event.occurred_at,
                held: event.held.map(|h| h.as_str().to_string()),
            };
            out.note_incident(self.monitor, &decision, alert, result.error.clone());
            let (subject, payload) = state_changed::encode(&event);
            out.events.push(outbox_row(
                Uuid::new_v5(&event.event_id, subject.as_bytes()),
                self.monitor.id,
                subject,
                &payload,
            ));
        }
        if let Some(expires_at) = result.ssl_expires_at {
            let warn_days = u32::try_from(self.monitor.ssl_warn_days).unwrap_or(0);
            if state_machine::ssl_warning_due(expires_at, self.ssl_warned_for, warn_days, now) {
                self.ssl_warned_for = Some(expires_at);
                out.events
                    .extend(self.ssl_expiring(result, stored, expires_at, warn_days, now));
            }
        }
    }

    /// What the alert decision knows of `transition` besides it: flapping
    /// (moved here, for monitors with a threshold), and the facts read for
    /// the batch ([`AlertFacts::context_for`]).
    fn alert_context(
        &mut self,
        transition: &Transition,
        out: &mut Effects,
    ) -> (AlertContext, Vec<i64>, u32) {
        let flapping = if self.flap_rules.is_some() || self.flap.since.is_some() {
            self.flap_touched |= self.flap_rules.is_some();
            self.flap.observe(self.flap_rules, transition.at)
        } else {
            Flapping::Stable
        };
        self.facts.context_for(
            self.monitor,
            transition,
            self.opened_hold,
            flapping,
            &mut out.facts_needed,
        )
    }

    fn monitor_ref(&self) -> MonitorRef {
        monitor_ref(self.monitor)
    }
}

/// The monitor as events name it.
pub fn monitor_ref(m: &MonitorForDecisions) -> MonitorRef {
    MonitorRef {
        id: m.id,
        // The published field predates organisations (migration 000017):
        // it carries the owning organisation, which is its first owner's
        // user id for accounts from before them.
        user_id: m.org_id,
        name: m.name.clone(),
        kind: m.kind,
        target: m.target.clone(),
    }
}

impl MonitorTracker<'_> {
    fn check_ref(result: &CheckResult, stored: MonitorStatus) -> CheckRef {
        CheckRef {
            check_id: result.check_id,
            trigger: result.trigger,
            checked_at: result.checked_at,
            status: stored,
            latency_ms: result.latency_ms,
            http_status: result.http_status,
            error: result.error.clone(),
        }
    }

    /// The event of a change (`state-changed.v4`, one outbox row). Its row
    /// id and `Nats-Msg-Id` are derived from the event id and the subject,
    /// so a recorder of the release before, recording the same batch again
    /// during an upgrade, writes its v3 under another id: the notifier
    /// reads both and makes one delivery per contact (unique per event).
    fn state_changed(
        &self,
        result: &CheckResult,
        stored: MonitorStatus,
        transition: Transition,
        decision: &TransitionDecision,
    ) -> StateChange {
        StateChange {
            event_id: state_event_id(result.check_id),
            monitor: self.monitor_ref(),
            previous_status: transition.from,
            status: transition.to,
            occurred_at: transition.at,
            previous_since: transition.previous_since,
            consecutive_failures: self.state.consecutive_failures,
            check: Self::check_ref(result, stored),
            round: self.rounds.get(&result.check_id).cloned(),
            alert: decision.alert,
            incident_id: decision.incident.incident_id(),
            down_for_secs: None,
            held: decision.held,
            blocked_by: Vec::new(),
            held_children: 0,
            // The monitor row's labels (validated on write: a map of strings).
            labels: serde_json::from_value(self.monitor.labels.clone()).unwrap_or_default(),
            in_maintenance: crate::maintenance::in_maintenance(self.monitor, transition.at),
        }
    }

    /// One outbox row per warning: `ssl-expiring.v2`, whose row id and
    /// `Nats-Msg-Id` are the event id.
    fn ssl_expiring(
        &self,
        result: &CheckResult,
        stored: MonitorStatus,
        expires_at: DateTime<Utc>,
        warn_days: u32,
        now: DateTime<Utc>,
    ) -> Vec<NewOutboxEvent> {
        let event = SslWarning {
            event_id: ssl_event_id(result.check_id),
            monitor: self.monitor_ref(),
            ssl_expires_at: expires_at,
            days_left: (expires_at - now).num_days(),
            warn_days,
            occurred_at: result.checked_at,
            check: Self::check_ref(result, stored),
        };
        let (subject, payload) = ssl_expiring::encode(&event);
        vec![outbox_row(
            event.event_id,
            self.monitor.id,
            subject,
            &payload,
        )]
    }

    /// Adds the monitor's state after the batch to `out`.
    fn finish(self, out: &mut Effects) {
        if self.flap_touched {
            out.flap_updates.push(FlapStateUpdate {
                id: self.monitor.id,
                changes: (!self.flap.changes.is_empty()).then(|| self.flap.changes.clone()),
                since: self.flap.since,
            });
        }
        out.updates.push(self.into_update());
    }

    fn into_update(self) -> MonitorStateUpdate {
        MonitorStateUpdate {
            id: self.monitor.id,
            status: self.state.status.as_str().to_string(),
            status_since: self.state.status_since,
            consecutive_failures: i32::try_from(self.state.consecutive_failures)
                .unwrap_or(i32::MAX),
            last_checked_at: self.state.last_checked_at,
            last_heartbeat_at: self.last_heartbeat_at,
            ssl_expires_at: self.ssl_expires_at,
            ssl_warned_for: self.ssl_warned_for,
            heartbeat_counted_until: self.heartbeat_counted_until,
            last_latency_ms: self.last_latency_ms,
        }
    }
}

/// The outbox row of an encoded event (`subject`, `payload`).
fn outbox_row(id: Uuid, monitor_id: i64, subject: &str, payload: &[u8]) -> NewOutboxEvent {
    NewOutboxEvent {
        id,
        monitor_id: Some(monitor_id),
        subject: subject.to_string(),
        // An encoded event is JSON (the column is jsonb).
        payload: serde_json::from_slice(payload).expect("an encoded event is JSON"),
    }
}

mod effects;
pub use effects::Effects;

#[cfg(test)]
mod alert_tests;
#[cfg(test)]
mod tests;
