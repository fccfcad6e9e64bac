//! Staging: what is due within the lookahead leaves the timeline, and the
//! configurations of the checked monitors among it are read into `ready`.

use super::super::messages::{self, Ready, Snapshot};
use super::super::Read;
use super::{Awaiting, Planner};
use crate::queue::{Due, Kind};
use crate::slots;
use std::cmp::Reverse;
use std::collections::HashMap;
use uptime_db::schedule::CheckConfig;

impl Planner {
    /// Takes what is due within the lookahead off the timeline; asks for the
    /// configuration of the checked monitors among it.
    pub(super) fn stage(&mut self, now: i64) -> Option<Read> {
        // A read failed a moment ago: stage from the configuration cache
        // alone (no query), at the staging pace, so that a read failing
        // every round (a change, a resync page) delays no cached check.
        let backing_off = now < self.db_backoff_until;
        let urgent = self.queue.next_due_at().is_some_and(|due| due <= now);
        if now < self.next_stage_at && (backing_off || !urgent) {
            return None;
        }
        self.next_stage_at = now + (self.lookahead_ms / 4).max(10);
        let mut staged = Vec::new();
        while let Some(due) = self.queue.pop_due_until(now + self.lookahead_ms) {
            staged.push(due);
        }
        if staged.is_empty() {
            return None;
        }
        if backing_off {
            for due in self.serve_from_cache(staged) {
                self.queue.requeue(due);
            }
            return None;
        }
        let checked: Vec<i64> = staged
            .iter()
            .filter(|d| self.queue.entry(d.monitor_id).map(|e| e.kind) == Some(Kind::Checked))
            .map(|d| d.monitor_id)
            .collect();
        if checked.is_empty() {
            // Only heartbeat deadlines: nothing to read now.
            self.configs_read(staged, Vec::new());
            return None;
        }
        self.awaiting = Some(Awaiting::CheckConfigs(staged));
        Some(Read::CheckConfigs(checked))
    }

    pub(super) fn configs_read(&mut self, staged: Vec<Due>, configs: Vec<CheckConfig>) {
        let mut configs: HashMap<i64, CheckConfig> =
            configs.into_iter().map(|c| (c.id, c)).collect();
        let mut removed = false;
        for due in staged {
            let Some(entry) = self.queue.entry(due.monitor_id).copied() else {
                continue;
            };
            if entry.kind == Kind::Heartbeat {
                self.ready.push(Reverse(Ready {
                    due,
                    snapshot: None,
                }));
                continue;
            }
            let Some(config) = configs.remove(&due.monitor_id) else {
                // Paused or deleted, and the change event has not arrived (or was lost).
                removed |= self.queue.remove(due.monitor_id);
                self.config_cache.remove(due.monitor_id);
                continue;
            };
            if Kind::of(config.kind) != Kind::Checked
                || config.interval_secs.max(1) as u32 != entry.interval_secs
            {
                // Changed without (or ahead of) its event: start over from the row.
                self.pending_changes.insert(due.monitor_id);
                self.config_cache.remove(due.monitor_id);
                continue;
            }
            self.config_cache
                .set_paused(due.monitor_id, config.paused_for_maintenance());
            if config.paused_for_maintenance() {
                // A `pause` maintenance window: no check in this slot; the
                // monitor stays on the timeline and its next slot is tried.
                let interval_ms = i64::from(entry.interval_secs) * 1000;
                self.queue.requeue(Due {
                    due_at_ms: slots::slot_after(due.monitor_id, interval_ms, due.due_at_ms),
                    ..due
                });
                continue;
            }
            // The one row-to-round function the api-gateway uses too (the
            // password passed on sealed, as stored); a row it refuses is a
            // bug (the API validates), logged and skipped.
            let round = messages::round_of(&due, entry.interval_secs, config.definition_version);
            match uptime_db::monitors::sealed_round_checks(&config, &self.regions, round) {
                Ok(round) => {
                    if let Some(check) = round.first() {
                        self.config_cache.store(
                            due.monitor_id,
                            entry.interval_secs,
                            config.definition_version,
                            config.regions.as_deref(),
                            &check.spec,
                        );
                    }
                    self.ready.push(Reverse(Ready {
                        due,
                        snapshot: Some(Snapshot { round }),
                    }))
                }
                Err(error @ uptime_db::monitors::SpecError::PasswordNotSealed { .. }) => {
                    // Not a bug: a password stored before passwords were sealed, which the
                    // api-gateway seals at its start (moments into an
                    // upgrade). A check without it would fail for nothing,
                    // so this slot is skipped and the next one tried.
                    tracing::warn!(monitor_id = due.monitor_id, %error, "skipping this slot");
                    self.config_cache.remove(due.monitor_id);
                    let interval_ms = i64::from(entry.interval_secs) * 1000;
                    self.queue.requeue(Due {
                        due_at_ms: slots::slot_after(due.monitor_id, interval_ms, due.due_at_ms),
                        ..due
                    });
                }
                Err(error) => {
                    tracing::warn!(
                        monitor_id = due.monitor_id,
                        %error,
                        "monitor row cannot be checked; skipping it"
                    );
                    removed |= self.queue.remove(due.monitor_id);
                    self.config_cache.remove(due.monitor_id);
                }
            }
        }
        if removed {
            self.report_size();
        }
    }
}
