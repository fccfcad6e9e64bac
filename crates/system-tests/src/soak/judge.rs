//! From the ledger, the stack's records and the receivers to the verdicts:
//! the inputs each pure verdict takes, gathered once per look, and the
//! drain (looking again until nothing is missing, bounded) before the
//! final look.

use super::collect::{self, Db};
use super::ledger::Ledger;
use super::plan::{Phases, Ping, Plan};
use super::receivers::{Receivers, REFUSED_FIRST};
use super::verdicts::alerts::{self, AlertInputs, AlertVerdict};
use super::verdicts::heartbeats::{self, expected_misses, HeartbeatLife, HeartbeatVerdict};
use super::verdicts::phases::{self, Outages, PhaseVerdict};
use super::verdicts::slots::{self, SlotVerdict};
use chrono::{DateTime, Utc};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long after an outage ends its monitor may still open its incident
/// (two confirmations 10 s apart, a check's time, the recorder's batch).
const NOTICE_MS: i64 = 40_000;

/// Everything one look found.
#[derive(Debug, Default)]
pub struct Judgement {
    pub slots: SlotVerdict,
    pub heartbeats: HeartbeatVerdict,
    pub alerts: AlertVerdict,
    pub phases: PhaseVerdict,
    /// Each feature the run must have exercised, and whether it did.
    pub coverage: Vec<(String, bool)>,
    pub problems: Vec<String>,
    pub monitors: usize,
    pub events: usize,
    pub other_mail: usize,
}

impl Judgement {
    /// Whether anything is still missing (the pipeline may yet deliver it).
    fn missing(&self) -> bool {
        self.slots.missed > 0 || self.heartbeats.missed > 0 || self.alerts.missing > 0
    }
}

pub struct Sources<'a> {
    pub db: &'a Db,
    pub plan: &'a Plan,
    pub ledger: &'a Arc<Mutex<Ledger>>,
    pub receivers: &'a Receivers,
    pub start_wall: DateTime<Utc>,
    pub until: DateTime<Utc>,
}

impl Sources<'_> {
    fn wall_ms(&self, secs: f64) -> i64 {
        self.start_wall.timestamp_millis() + (secs * 1000.0) as i64
    }

    /// Each failing window of `phases` as an outage, each ending when the
    /// next begins at the latest.
    fn outage_windows(&self, phases: &Phases) -> Vec<(i64, i64)> {
        let mut windows: Vec<(i64, i64)> = phases
            .0
            .iter()
            .map(|(f, t)| (self.wall_ms(*f), self.wall_ms(*t) + NOTICE_MS))
            .collect();
        for i in 1..windows.len() {
            windows[i - 1].1 = windows[i - 1].1.min(windows[i].0);
        }
        windows
    }
}

/// A heartbeat's outages: each run of missed deadlines with no success
/// between them, and each failure ping.
fn heartbeat_outages(life: &HeartbeatLife, until_ms: i64) -> Vec<(i64, i64)> {
    let misses = expected_misses(life, until_ms);
    let mut windows = Vec::new();
    let mut last_miss: Option<i64> = None;
    for m in misses {
        let success_between = last_miss.is_some_and(|l| {
            life.pings
                .iter()
                .any(|(t, p)| *p == Ping::Success && *t > l && *t < m)
        });
        if last_miss.is_none() || success_between {
            windows.push((m - heartbeats::TOLERANCE_MS, m + 10_000));
        }
        last_miss = Some(m);
    }
    for (t, p) in &life.pings {
        if *p == Ping::Fail {
            windows.push((t - 1_000, t + 10_000));
        }
    }
    windows.sort_unstable();
    windows
}

/// One look at everything.
pub async fn look(s: &Sources<'_>) -> anyhow::Result<Judgement> {
    let until_ms = s.until.timestamp_millis();
    let since = s.start_wall - chrono::Duration::minutes(30);
    let ledger = s.ledger.lock().expect("ledger").clone();
    let ids = ledger.monitor_ids();
    let mut j = Judgement {
        monitors: ids.len(),
        ..Judgement::default()
    };

    // Slots, with the pause window as the pipeline saw it.
    let mut lives: Vec<slots::MonitorLife> = ledger.lives.values().cloned().collect();
    if let Some((window, covered)) = &ledger.pause_window {
        let spans = s.db.pause_spans(*window, s.until).await?;
        if spans.is_empty() {
            j.problems.push("the pause window never opened".into());
        }
        for life in lives.iter_mut().filter(|l| covered.contains(&l.monitor_id)) {
            life.off.extend(spans.iter().copied());
        }
    }
    let results = s.db.results(&ids, since).await?;
    j.slots = slots::judge(&lives, &results.scheduled, until_ms);
    let hb_lives: Vec<HeartbeatLife> = ledger.heartbeats.values().cloned().collect();
    j.heartbeats = heartbeats::judge(&hb_lives, &results.missed, until_ms);
    for (monitor, queued) in &ledger.manual_checks {
        let stored = results.manual.get(monitor).copied().unwrap_or(0);
        if stored != *queued {
            j.problems.push(format!(
                "monitor {monitor}: {queued} manual checks queued, {stored} recorded"
            ));
        }
    }

    // Alerts.
    let name_of = |id: i64| {
        ledger
            .monitors
            .iter()
            .find(|(_, v)| **v == id)
            .map(|(n, _)| n.to_string())
            .unwrap_or(format!("monitor {id}"))
    };
    let events = s.db.events(&ids).await?;
    j.events = events.facts.len();
    j.problems.extend(
        events
            .unreadable
            .iter()
            .map(|e| format!("unreadable event {e}")),
    );
    let incidents = s.db.incidents(&ids).await?;
    let inputs = AlertInputs {
        events: events.facts.clone(),
        contacts: ledger.contact_facts.clone(),
        monitor_contacts: ledger.monitor_contacts.clone(),
        policies: ledger.policies.clone(),
        incidents: incidents.iter().map(|i| (i.id, i.fact.clone())).collect(),
        test_alerts: ledger.test_alerts.clone(),
        until_ms,
    };
    let owed = alerts::owed(&inputs);
    let (receipts, other_mail) = s.receivers.receipts();
    j.other_mail = other_mail;
    j.alerts = alerts::judge(&owed, &receipts);
    // Each problem with the event it is about, for whoever reads the report.
    for p in &j.alerts.problems {
        let fact = events.facts.iter().find(|f| Some(f.event_id) == p.event_id);
        let about = fact.map_or("no such event".to_string(), |f| {
            format!(
                "{} {} (from {}) at {:.1} s, held {:?}, incident {:?}",
                name_of(f.monitor_id),
                f.event_type.unwrap_or("pending"),
                f.previous_status.as_deref().unwrap_or("?"),
                (f.occurred_ms - s.start_wall.timestamp_millis()) as f64 / 1000.0,
                f.held,
                f.incident_id
            )
        });
        j.problems.push(format!(
            "alert to {} owed {:?}, got {}: {about}",
            p.receiver, p.owed, p.got
        ));
    }
    if events.unpublished > 0 {
        j.problems.push(format!(
            "{} events still unpublished in the outbox",
            events.unpublished
        ));
    }

    // Outages: every phase one incident, nothing else.
    let plan = s.plan;
    let no_phases = Phases(Vec::new());
    let switched: [(&str, &Phases); 10] = [
        ("http-flip", &plan.http_flip),
        ("keyword", &plan.keyword),
        ("tcp", &plan.tcp),
        ("dns", &plan.dns),
        ("silenced", &plan.silenced),
        ("parent", &plan.parent),
        ("child", &plan.child),
        ("escalated", &plan.escalated),
        ("flapping", &plan.flapping),
        ("reminded", plan.reminder.as_ref().unwrap_or(&no_phases)),
    ];
    let mut outages: Vec<Outages> = Vec::new();
    for id in ledger.lives.keys() {
        let name = name_of(*id);
        let phases = switched.iter().find(|(n, _)| *n == name).map(|(_, p)| *p);
        let windows = phases.map(|p| s.outage_windows(p)).unwrap_or_default();
        outages.push(Outages {
            monitor_id: *id,
            name,
            windows,
        });
    }
    for life in &hb_lives {
        outages.push(Outages {
            monitor_id: life.monitor_id,
            name: name_of(life.monitor_id),
            windows: heartbeat_outages(life, until_ms),
        });
    }
    let started = collect::by_monitor(&incidents)
        .into_iter()
        .map(|(m, list)| (m, list.iter().map(|i| i.started_ms).collect()))
        .collect();
    j.phases = phases::judge(&outages, &started, until_ms);

    j.coverage = coverage(s, &ledger, &events.facts, &receipts).await?;
    Ok(j)
}

/// Each feature the run must have exercised.
async fn coverage(
    s: &Sources<'_>,
    ledger: &Ledger,
    facts: &[alerts::EventFact],
    receipts: &[alerts::Receipt],
) -> anyhow::Result<Vec<(String, bool)>> {
    let ids = ledger.monitor_ids();
    let kinds = s.db.alert_kinds(&ids).await?;
    let count = |alert: &str, held: Option<&str>| {
        kinds
            .iter()
            .filter(|(_, a, h)| a == alert && h.as_deref() == held)
            .count()
    };
    let held = |reason: &str| {
        kinds
            .iter()
            .filter(|(_, _, h)| h.as_deref() == Some(reason))
            .count()
    };
    let of = |name: &str| ledger.monitors.get(name).copied().unwrap_or(-1);
    let event_of = |name: &str, event_type: &str| {
        facts
            .iter()
            .filter(|f| f.monitor_id == of(name) && f.event_type == Some(event_type))
            .count()
    };
    let counted = |what: &str| ledger.counts.get(what).copied().unwrap_or(0);
    let escalated_downs: Vec<uuid::Uuid> = facts
        .iter()
        .filter(|f| {
            f.monitor_id == of("escalated")
                && f.event_type == Some("monitor.down")
                && f.held.is_none()
        })
        .map(|f| f.event_id)
        .collect();
    let second_told = receipts.iter().any(|r| {
        r.receiver.contains("oncall@") && r.event_id.is_some_and(|e| escalated_downs.contains(&e))
    });
    let refused_then_received = s.receivers.refusing.received().len() > REFUSED_FIRST;
    let plan = s.plan;
    let mut c: Vec<(String, bool)> = vec![
        (
            "a certificate warning, once (tls)".into(),
            event_of("tls-expiring", "ssl.expiring") == 1,
        ),
        (
            "a webhook refused, retried and delivered".into(),
            refused_then_received,
        ),
        (
            "a test alert".into(),
            ledger.test_alerts.values().sum::<usize>() == 1,
        ),
        (
            "status pages and badges viewed".into(),
            counted("views") > 0,
        ),
        (
            "API keys issued, used and revoked".into(),
            counted("keys revoked") > 0,
        ),
        ("manual checks".into(), !ledger.manual_checks.is_empty()),
        (
            "heartbeat deadlines missed".into(),
            ledger
                .heartbeats
                .values()
                .all(|h| !expected_misses(h, s.until.timestamp_millis()).is_empty()),
        ),
        ("bulk-created monitors".into(), !ledger.bulk.is_empty()),
        (
            "applied monitors".into(),
            ledger.contacts.contains_key("applied"),
        ),
    ];
    // What the plan ran (a short run leaves some out).
    let ran = |phases: &Phases| !phases.0.is_empty();
    if ran(&plan.slow) {
        c.push((
            "a degraded response (latency_warn_ms)".into(),
            event_of("slow", "monitor.degraded") >= 1,
        ));
    }
    if ran(&plan.silenced) {
        c.push((
            "alerts held by maintenance".into(),
            held("maintenance") >= 1,
        ));
    }
    if ran(&plan.child) {
        c.push((
            "alerts held behind a parent".into(),
            held("blocked_by_parent") >= 1,
        ));
    }
    if ran(&plan.silenced) || ran(&plan.child) || plan.flaps() {
        c.push(("a released alert".into(), count("released", None) >= 1));
    }
    if ran(&plan.escalated) {
        c.push(("escalation: the second step told".into(), second_told));
        c.push((
            "an incident acknowledged".into(),
            counted("acknowledged") > 0,
        ));
    }
    if plan.flaps() {
        c.push(("a flapping alert".into(), count("flapping", None) >= 1));
        c.push(("alerts held while flapping".into(), held("flapping") >= 1));
    }
    if plan.reminder.is_some() {
        c.push(("a reminder".into(), count("reminder", None) >= 1));
    }
    Ok(c)
}

/// Looks until nothing is missing any more or `timeout` passed, then once
/// more after `settle` (a late second copy shows then).
pub async fn drain(
    s: &Sources<'_>,
    timeout: Duration,
    settle: Duration,
) -> anyhow::Result<(Judgement, Duration)> {
    let started = tokio::time::Instant::now();
    loop {
        let j = look(s).await?;
        if !j.missing() || started.elapsed() >= timeout {
            break;
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
    }
    let waited = started.elapsed();
    tokio::time::sleep(settle).await;
    Ok((look(s).await?, waited))
}
