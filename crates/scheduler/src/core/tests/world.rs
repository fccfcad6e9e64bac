//! The test harness: a small in-memory table that answers the planner's
//! reads the way the queries in the shell do (active rows only; pages in id
//! order), and records what the planner did to the world.

use super::super::planner::Planner;
use super::super::{DbFailed, Publication, Read, Report, Rows, Step, RESYNC_PAGE};
use crate::slots;
use chrono::{DateTime, Utc};
use std::collections::BTreeMap;
use uptime_contracts::{CheckResult, DueCheck, MonitorKind};
use uptime_db::schedule::{CheckConfig, MonitorTiming};

pub(super) const NOW: i64 = 1_800_000_000_000;
pub(super) const TEN_S: i64 = 10_000;
pub(super) const LOOKAHEAD: i64 = 1_000;

pub(super) fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap()
}

#[derive(Clone)]
pub(super) struct Row {
    pub(super) timing: MonitorTiming,
    pub(super) config: CheckConfig,
    pub(super) active: bool,
}

pub(super) fn http(id: i64, interval_secs: i32, created: i64) -> Row {
    Row {
        timing: MonitorTiming {
            id,
            kind: MonitorKind::Http,
            interval_secs,
            timeout_secs: 7,
            created_at: at(created),
            updated_at: at(created),
            last_checked_at: None,
            last_heartbeat_at: None,
            definition_version: 1,
            heartbeat_schedule: None,
            heartbeat_timezone: None,
            heartbeat_started_at: None,
        },
        config: CheckConfig {
            id,
            kind: MonitorKind::Http,
            interval_secs,
            target: Some("https://example.com/health".into()),
            timeout_secs: 7,
            expected_status: 204,
            keyword: None,
            keyword_type: None,
            definition_version: 1,
            check_options: None,
            http_password_sealed: None,
            http_password_unsealed: false,
            regions: None,
            maintenance_effect: None,
        },
        active: true,
    }
}

pub(super) fn heartbeat(id: i64, interval_secs: i32, grace_secs: i32, created: i64) -> Row {
    let mut row = http(id, interval_secs, created);
    row.timing.kind = MonitorKind::Heartbeat;
    row.timing.timeout_secs = grace_secs;
    row.config.kind = MonitorKind::Heartbeat;
    row.config.target = None;
    row.config.timeout_secs = grace_secs;
    row
}

/// The database as the planner sees it, and what the planner did to the world.
#[derive(Default)]
pub(super) struct World {
    pub(super) rows: BTreeMap<i64, Row>,
    /// The next this many reads fail.
    pub(super) failing: usize,
    pub(super) reads: Vec<(i64, Read)>,
    pub(super) published: Vec<(i64, Publication)>,
    pub(super) monitors_reported: Option<usize>,
    pub(super) loads: Vec<bool>,
    /// Catch-up: held now, released and superseded in all.
    pub(super) catchup_waiting: usize,
    pub(super) catchup_released: u64,
    pub(super) catchup_superseded: u64,
}

impl World {
    pub(super) fn with(rows: impl IntoIterator<Item = Row>) -> Self {
        Self {
            rows: rows.into_iter().map(|r| (r.timing.id, r)).collect(),
            ..Self::default()
        }
    }

    pub(super) fn row(&mut self, id: i64) -> &mut Row {
        self.rows.get_mut(&id).unwrap()
    }

    pub(super) fn answer(&mut self, read: &Read) -> Result<Rows, DbFailed> {
        if self.failing > 0 {
            self.failing -= 1;
            return Err(DbFailed);
        }
        // Lookups by id, so that a table of 100,000 rows answers quickly.
        let by_ids = |ids: &[i64]| {
            ids.iter()
                .filter_map(|id| self.rows.get(id))
                .filter(|r| r.active)
                .cloned()
                .collect::<Vec<Row>>()
        };
        Ok(match read {
            Read::Changed(ids) | Read::Heartbeats(ids) => {
                Rows::Timings(by_ids(ids).into_iter().map(|r| r.timing).collect())
            }
            Read::CheckConfigs(ids) => {
                Rows::Configs(by_ids(ids).into_iter().map(|r| r.config).collect())
            }
            Read::Page { after_id } => Rows::Timings(
                self.rows
                    .range(after_id + 1..)
                    .map(|(_, r)| r)
                    .filter(|r| r.active)
                    .take(RESYNC_PAGE as usize)
                    .map(|r| r.timing.clone())
                    .collect(),
            ),
        })
    }

    /// One round at `now`, as the shell runs it; returns the wake-up time.
    pub(super) fn round(&mut self, planner: &mut Planner, now: i64) -> i64 {
        loop {
            match planner.next(now) {
                Step::Read(read) => {
                    let rows = self.answer(&read);
                    self.reads.push((now, read));
                    planner.loaded(rows, now);
                }
                Step::Publish(publication) => self.published.push((now, publication)),
                Step::Report(Report::Size { monitors, .. }) => {
                    self.monitors_reported = Some(monitors)
                }
                Step::Report(Report::Loaded { full_load, .. }) => self.loads.push(full_load),
                Step::Report(Report::Catchup(tally)) => {
                    self.catchup_waiting = tally.waiting;
                    self.catchup_released += tally.released;
                    self.catchup_superseded += tally.superseded;
                }
                Step::Sleep(until) => return until,
            }
        }
    }

    /// Rounds from `from` until the planner sleeps past `until`, each at its
    /// wake-up time (as if nothing but the timer woke it). Returns the time
    /// of the last round.
    pub(super) fn run(&mut self, planner: &mut Planner, from: i64, until: i64) -> i64 {
        let mut now = from;
        for _ in 0..100_000 {
            let wake = self.round(planner, now);
            if wake > until {
                return now;
            }
            now = wake.max(now);
        }
        panic!("the planner never slept past {until}");
    }

    pub(super) fn checks(&self, monitor_id: i64) -> Vec<(i64, DueCheck)> {
        self.published
            .iter()
            .filter_map(|(t, p)| match p {
                Publication::Check(due) if due.monitor_id == monitor_id => Some((*t, due.clone())),
                _ => None,
            })
            .collect()
    }

    pub(super) fn missed(&self, monitor_id: i64) -> Vec<(i64, CheckResult)> {
        self.published
            .iter()
            .filter_map(|(t, p)| match p {
                Publication::MissedHeartbeat(r) if r.monitor_id == monitor_id => {
                    Some((*t, r.clone()))
                }
                _ => None,
            })
            .collect()
    }
}

/// A planner that has loaded `world` at `now` (the start of leadership) and
/// done what was due at once.
pub(super) fn loaded(world: &mut World, now: i64) -> Planner {
    let settings = crate::settings::ScheduleSettings::default();
    loaded_by(Planner::new(LOOKAHEAD, settings.catchup()), world, now)
}

/// [`loaded`], by a planner made for the test.
pub(super) fn loaded_by(mut planner: Planner, world: &mut World, now: i64) -> Planner {
    planner.start_resync(true);
    world.run(&mut planner, now, now);
    assert_eq!(world.loads, vec![true], "the full load finished");
    planner
}

pub(super) fn due_ms(due: &DueCheck) -> i64 {
    due.due_at.timestamp_millis()
}

/// A creation instant with no slot of `id` between it and `NOW`.
pub(super) fn created_just_before_now(id: i64) -> i64 {
    slots::slot_at_or_before(id, TEN_S, NOW).max(NOW - 1)
}
