//! What the driver did, as it did it: the monitors it made (with when it
//! created, paused, resumed and deleted each), the contacts and which
//! monitors alert them, the policy, the heartbeat pings it sent, the test
//! alerts and manual checks it asked for. The verdicts judge the stack's
//! records against this.

use super::plan::Ping;
use super::verdicts::alerts::{ContactFact, PolicyFact};
use super::verdicts::heartbeats::HeartbeatLife;
use super::verdicts::slots::{MonitorLife, Off};
use anyhow::Context;
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::HashMap;
use uptime_heartbeats::{Period, Schedule};

pub fn now_ms() -> i64 {
    Utc::now().timestamp_millis()
}

#[derive(Debug, Default, Clone)]
pub struct Ledger {
    /// Scheduled monitors, by id.
    pub lives: HashMap<i64, MonitorLife>,
    pub heartbeats: HashMap<i64, HeartbeatLife>,
    /// The soak's named monitors and contacts (the bulk-created ones are
    /// only in `lives`).
    pub monitors: HashMap<&'static str, i64>,
    pub contacts: HashMap<&'static str, i64>,
    /// Each heartbeat monitor's ping token, by name.
    pub tokens: HashMap<&'static str, String>,
    pub contact_facts: Vec<ContactFact>,
    pub monitor_contacts: HashMap<i64, Vec<i64>>,
    pub policies: HashMap<i64, PolicyFact>,
    pub test_alerts: HashMap<i64, usize>,
    /// Heartbeat pings sent, of every monitor.
    pub pings_sent: u64,
    /// The bulk-created monitors, in order.
    pub bulk: Vec<i64>,
    /// Manual checks queued (202) per monitor.
    pub manual_checks: HashMap<i64, usize>,
    /// The `pause` window's id and the monitors it names.
    pub pause_window: Option<(i64, Vec<i64>)>,
    /// What the periodic parts did, by name (views, keys, notices ...).
    pub counts: HashMap<&'static str, u64>,
}

fn time_ms(v: &Value, field: &str) -> anyhow::Result<i64> {
    let text = v[field]
        .as_str()
        .with_context(|| format!("no {field} in {v}"))?;
    Ok(text.parse::<DateTime<Utc>>()?.timestamp_millis())
}

impl Ledger {
    /// Every monitor the driver made, scheduled ones and heartbeats: what
    /// the verdicts judge.
    pub fn monitor_ids(&self) -> Vec<i64> {
        self.lives
            .keys()
            .chain(self.heartbeats.keys())
            .copied()
            .collect()
    }

    /// Records a monitor as the API answered its creation.
    pub fn created(&mut self, monitor: &Value, contacts: &[i64]) -> anyhow::Result<i64> {
        let id = monitor["id"]
            .as_i64()
            .with_context(|| format!("no id in {monitor}"))?;
        let created_ms = time_ms(monitor, "created_at")?;
        let interval_secs = monitor["interval_secs"].as_i64().context("interval_secs")?;
        if monitor["type"] == "heartbeat" {
            let period = match monitor["schedule"].as_str() {
                Some(cron) => Period::Cron(Schedule::parse(cron, monitor["timezone"].as_str())?),
                None => Period::Interval {
                    secs: u32::try_from(interval_secs)?,
                },
            };
            let grace_secs =
                u32::try_from(monitor["timeout_secs"].as_i64().context("timeout_secs")?)?;
            self.heartbeats.insert(
                id,
                HeartbeatLife {
                    monitor_id: id,
                    period,
                    grace_secs,
                    created_ms,
                    pings: Vec::new(),
                },
            );
        } else {
            let life = MonitorLife {
                monitor_id: id,
                interval_ms: interval_secs * 1000,
                created_ms,
                deleted_ms: None,
                off: Vec::new(),
            };
            self.lives.insert(id, life);
        }
        if !contacts.is_empty() {
            self.monitor_contacts.insert(id, contacts.to_vec());
        }
        Ok(id)
    }

    pub fn deleted(&mut self, id: i64, at_ms: i64) {
        if let Some(life) = self.lives.get_mut(&id) {
            life.deleted_ms = Some(at_ms);
        }
    }

    /// The user paused `id` at `from_ms` and resumed it at `to_ms`.
    pub fn paused(&mut self, id: i64, from_ms: i64, to_ms: i64) {
        if let Some(life) = self.lives.get_mut(&id) {
            life.off.push(Off {
                from: from_ms,
                to: to_ms,
                late_ms: 0,
            });
        }
    }

    pub fn pinged(&mut self, id: i64, at_ms: i64, ping: Ping) {
        if let Some(life) = self.heartbeats.get_mut(&id) {
            life.pings.push((at_ms, ping));
        }
    }

    pub fn count(&mut self, what: &'static str) {
        *self.counts.entry(what).or_default() += 1;
    }

    pub fn monitor(&self, name: &str) -> i64 {
        *self
            .monitors
            .get(name)
            .unwrap_or_else(|| panic!("no monitor {name}"))
    }

    pub fn contact(&self, name: &str) -> i64 {
        *self
            .contacts
            .get(name)
            .unwrap_or_else(|| panic!("no contact {name}"))
    }
}
