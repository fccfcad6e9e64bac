//! What a batch writes besides its results, gathered while it is planned.

use crate::alert_facts::FactsNeeded;
use crate::alerting::{IncidentChange, TransitionDecision};
use uptime_contracts::MonitorStatus;
use uptime_db::alerting::{FlapStateUpdate, OpenAlerting};
use uptime_db::incidents::{IncidentAlert, IncidentEnd, NewIncident};
use uptime_db::monitor_decisions::MonitorForDecisions;
use uptime_db::recording::{DailyIncrement, MonitorStateUpdate, NewOutboxEvent};

/// Everything a batch writes besides the results themselves.
#[derive(Debug, Default)]
pub struct Effects {
    pub updates: Vec<MonitorStateUpdate>,
    pub increments: Vec<DailyIncrement>,
    pub events: Vec<NewOutboxEvent>,
    /// The status each transition went to, for metrics.
    pub transitions: Vec<MonitorStatus>,
    /// Incidents the batch opens (those it also ends carry `resolved_at`).
    pub incidents_opened: Vec<NewIncident>,
    /// Incidents opened by an earlier batch that this one ends.
    pub incidents_resolved: Vec<IncidentEnd>,
    /// The alerting columns of opened incidents that use any (held,
    /// blocked, holding children, reminded).
    pub incidents_alerting: Vec<OpenAlerting>,
    /// Flapping state of monitors with a threshold that changed status.
    pub flap_updates: Vec<FlapStateUpdate>,
    /// What the alert decision would need to know that the locked rows do
    /// not say ([`crate::alert_facts::AlertFacts`]): empty for a batch without transitions of
    /// such monitors, which then reads nothing more.
    pub facts_needed: FactsNeeded,
}

impl Effects {
    /// Records what `decision` does to the monitor's incidents, with the
    /// event that says it.
    pub(super) fn note_incident(
        &mut self,
        monitor: &MonitorForDecisions,
        decision: &TransitionDecision,
        alert: IncidentAlert,
        cause: Option<String>,
    ) {
        match decision.incident {
            IncidentChange::Opens { id, started_at } => self.incidents_opened.push(NewIncident {
                id,
                org_id: monitor.org_id,
                monitor_id: monitor.id,
                started_at,
                resolved_at: None,
                cause,
                alerts: vec![alert],
            }),
            IncidentChange::Resolves { id, resolved_at } => {
                // Opened by this very batch: one row, written once.
                if let Some(open) = self.incidents_opened.iter_mut().find(|n| n.id == id) {
                    open.resolved_at = Some(resolved_at);
                    open.alerts.push(alert);
                } else {
                    self.incidents_resolved.push(IncidentEnd {
                        id,
                        monitor_id: monitor.id,
                        resolved_at,
                        alerts: vec![alert],
                    });
                }
            }
            IncidentChange::None => {}
        }
    }
}
