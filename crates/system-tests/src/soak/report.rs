//! The soak's figures and its verdict, printed.

use super::api::Findings;
use super::judge::Judgement;
use super::stack::ServiceState;
use super::verdicts::logs::{LogScan, ALLOWED};
use std::collections::HashMap;

pub struct Report {
    pub secs: u64,
    pub stack_secs: f64,
    pub drained_secs: f64,
    pub total_secs: f64,
    pub judgement: Judgement,
    pub services_at_start: Vec<ServiceState>,
    pub services_at_end: Vec<ServiceState>,
    pub unhealthy: Vec<String>,
    pub logs: Vec<(&'static str, LogScan)>,
    pub findings: Findings,
    pub counts: HashMap<&'static str, u64>,
}

impl Report {
    /// Restarts of each service: what the stack counted, or a pid that
    /// changed or died.
    fn restarts(&self) -> Vec<(&'static str, u64, bool)> {
        self.services_at_end
            .iter()
            .map(|end| {
                let start = self.services_at_start.iter().find(|s| s.name == end.name);
                let counted = end.restarts.unwrap_or(0);
                let replaced = start.is_some_and(|s| {
                    s.pid != end.pid || (s.started.is_some() && s.started != end.started)
                });
                (end.name, counted.max(u64::from(replaced)), end.alive)
            })
            .collect()
    }

    /// Why the soak failed; empty when it passed.
    pub fn failures(&self) -> Vec<String> {
        let j = &self.judgement;
        let mut f = Vec::new();
        for (name, restarts, alive) in self.restarts() {
            if !alive {
                f.push(format!("{name} is not running"));
            }
            if restarts > 0 {
                f.push(format!("{name} restarted {restarts} time(s)"));
            }
        }
        f.extend(self.unhealthy.iter().map(|u| format!("not healthy: {u}")));
        for (name, scan) in &self.logs {
            f.extend(scan.panics.iter().map(|p| format!("{name} panicked: {p}")));
            f.extend(scan.errors.iter().map(|e| format!("{name} logged: {e}")));
        }
        if !j.slots.clean() {
            f.push(format!("slots: {:?}", &j.slots.problems));
        }
        if !j.heartbeats.clean() {
            f.push(format!("heartbeats: {:?}", &j.heartbeats.problems));
        }
        if !j.alerts.clean() {
            let a = &j.alerts;
            f.push(format!(
                "alerts: {} missing, {} doubled, {} unexpected (each below)",
                a.missing, a.doubled, a.unexpected
            ));
        }
        f.extend(j.phases.problems.iter().map(|p| format!("outages: {p}")));
        f.extend(j.problems.iter().cloned());
        f.extend(
            j.coverage
                .iter()
                .filter(|(_, ok)| !ok)
                .map(|(what, _)| format!("not exercised: {what}")),
        );
        f.extend(self.findings.problems.iter().map(|p| format!("API: {p}")));
        f
    }

    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    pub fn print(&self) {
        let j = &self.judgement;
        let s = &j.slots;
        let h = &j.heartbeats;
        let a = &j.alerts;
        let restarts: u64 = self.restarts().iter().map(|(_, r, _)| r).sum();
        println!();
        println!("soak: {} s of workload on the README's stack (up in {:.0} s), {} monitors, {} state changes and warnings", self.secs, self.stack_secs, j.monitors, j.events);
        println!("  slots            due {}, checked {}, doubled {}, missed {} (also: {} at boundaries, {} unwanted, {} off schedule)", s.due, s.checked, s.doubled, s.missed, s.boundary_checked, s.unwanted, s.off_schedule);
        println!("  heartbeats       deadlines missed {}, reported {}, doubled {}, not reported {}, reported but not missed {}", h.due, h.reported, h.doubled, h.missed, h.unexpected);
        println!("  alerts           expected {} (+{} that may come), sent {}, missing {}, doubled {}, unexpected {}", a.expected, a.optional, a.sent, a.missing, a.doubled, a.unexpected);
        println!(
            "  outages          {} made, {} seen as exactly one incident",
            j.phases.outages, j.phases.seen_once
        );
        let per_service: Vec<String> = self
            .restarts()
            .iter()
            .map(|(n, r, alive)| format!("{n} {r}{}", if *alive { "" } else { " (dead)" }))
            .collect();
        println!("  restarts         {restarts} ({})", per_service.join(", "));
        let (lines, errors, panics): (usize, usize, usize) =
            self.logs.iter().fold((0, 0, 0), |acc, (_, l)| {
                (
                    acc.0 + l.lines,
                    acc.1 + l.errors.len(),
                    acc.2 + l.panics.len(),
                )
            });
        println!("  logs             {lines} lines, {errors} unexpected ERROR, {panics} panics");
        for (name, scan) in &self.logs {
            for (i, n) in &scan.allowed {
                println!(
                    "                   {name}: {n} allowed ERROR ({}: {})",
                    ALLOWED[*i].contains, ALLOWED[*i].reason
                );
            }
        }
        let mut counts: Vec<String> = self
            .counts
            .iter()
            .filter(|(k, _)| !k.ends_with("_id"))
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        counts.sort();
        println!(
            "  API              {} calls, {} rate-limited and retried; {}",
            self.findings.calls,
            self.findings.rate_limited,
            counts.join(", ")
        );
        println!(
            "  mail             {} other than alerts and verification links",
            j.other_mail
        );
        let covered = j.coverage.iter().filter(|(_, ok)| *ok).count();
        println!(
            "  coverage         {covered} of {} features exercised",
            j.coverage.len()
        );
        println!(
            "  run time         {:.0} s in all (drain {:.0} s)",
            self.total_secs, self.drained_secs
        );
        let failures = self.failures();
        if failures.is_empty() {
            println!("soak: PASSED");
        } else {
            println!("soak: FAILED");
            for f in failures {
                println!("  - {f}");
            }
        }
    }
}
