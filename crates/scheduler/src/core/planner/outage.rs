//! The planner while PostgreSQL cannot be read: the checks staged for a
//! read that failed go out from the configuration cache, on time, under
//! their own slots (see `core::config_cache`).

use super::super::config_cache::Cached;
use super::super::messages::{self, Ready, Snapshot};
use super::Planner;
use crate::queue::{Due, Kind};
use crate::slots;
use std::cmp::Reverse;

impl Planner {
    /// The configuration read of `staged` failed: each checked monitor whose
    /// last configuration is cached (at the interval on the timeline) is
    /// staged from it, exactly as from its row; the others, and heartbeat
    /// deadlines (re-read at the deadline itself), are returned to wait on
    /// the timeline for the database.
    pub(super) fn serve_from_cache(&mut self, staged: Vec<Due>) -> Vec<Due> {
        let mut waiting = Vec::new();
        for due in staged {
            let Some(entry) = self.queue.entry(due.monitor_id).copied() else {
                continue;
            };
            if entry.kind != Kind::Checked {
                waiting.push(due);
                continue;
            }
            match self
                .config_cache
                .lookup(due.monitor_id, entry.interval_secs)
            {
                None => waiting.push(due),
                Some(Cached::Paused) => {
                    // Its `pause` window as last read: this slot is skipped.
                    let interval_ms = i64::from(entry.interval_secs) * 1000;
                    self.queue.requeue(Due {
                        due_at_ms: slots::slot_after(due.monitor_id, interval_ms, due.due_at_ms),
                        ..due
                    });
                }
                Some(Cached::Round {
                    spec,
                    definition_version,
                    regions,
                }) => {
                    let round = messages::round_of(&due, entry.interval_secs, definition_version);
                    let round = uptime_db::monitors::round_checks(
                        due.monitor_id,
                        spec,
                        regions.as_deref(),
                        &self.regions,
                        round,
                    );
                    self.ready.push(Reverse(Ready {
                        due,
                        snapshot: Some(Snapshot { round }),
                    }));
                }
            }
        }
        waiting
    }
}
