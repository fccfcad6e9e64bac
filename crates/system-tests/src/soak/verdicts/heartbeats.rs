//! "Every missed heartbeat deadline reported exactly once", pure: the
//! deadlines a heartbeat monitor's job missed, walked with the project's
//! own heartbeat rules (`uptime_heartbeats`: a period after each ping, a
//! started run's grace, one deadline per missed period) over the pings the
//! driver sent, against the missed-heartbeat results the scheduler stored.

use super::super::plan::Ping;
use chrono::{DateTime, Utc};
use std::collections::HashMap;
use uptime_heartbeats::{Heartbeat, Period};

/// How far a stored deadline may be from the driver's: the driver's clock
/// reads a ping as sent, the gateway's as received.
pub const TOLERANCE_MS: i64 = 2_000;

/// A heartbeat monitor and what its job sent.
#[derive(Debug, Clone)]
pub struct HeartbeatLife {
    pub monitor_id: i64,
    pub period: Period,
    pub grace_secs: u32,
    pub created_ms: i64,
    /// In time order (ms).
    pub pings: Vec<(i64, Ping)>,
}

fn at(ms: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_millis(ms).unwrap_or_default()
}

/// The deadlines missed before `until_ms`, in order.
pub fn expected_misses(life: &HeartbeatLife, until_ms: i64) -> Vec<i64> {
    let mut hb = Heartbeat {
        period: life.period.clone(),
        grace_secs: life.grace_secs,
        since: at(life.created_ms),
        last_ping_at: None,
        started_at: None,
    };
    let mut missed: Vec<i64> = Vec::new();
    let ends = life.pings.iter().copied().map(Some).chain([None]);
    for event in ends {
        let next_event = event.map_or(until_ms, |(t, _)| t.min(until_ms));
        // The next deadline: the current period's, or one period after the
        // last reported when that one is already behind.
        while let Some(first) = hb.deadline() {
            let deadline = match missed.last() {
                Some(last) if first.timestamp_millis() <= *last => {
                    match hb.deadline_after(at(*last)) {
                        Some(d) => d,
                        None => break,
                    }
                }
                _ => first,
            };
            let ms = deadline.timestamp_millis();
            if ms >= next_event {
                break;
            }
            missed.push(ms);
        }
        match event {
            Some((t, _)) if t >= until_ms => break,
            Some((t, Ping::Start)) => hb.started_at = Some(at(t)),
            Some((t, Ping::Success | Ping::Fail)) => {
                hb.last_ping_at = Some(at(t));
            }
            None => {}
        }
    }
    missed
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeartbeatProblem {
    pub monitor_id: i64,
    pub deadline_ms: i64,
    pub what: &'static str,
}

#[derive(Debug, Default, Clone)]
pub struct HeartbeatVerdict {
    /// Deadlines missed that had to be reported.
    pub due: usize,
    pub reported: usize,
    pub doubled: usize,
    pub missed: usize,
    /// Reported deadlines the job did not miss.
    pub unexpected: usize,
    pub problems: Vec<HeartbeatProblem>,
}

impl HeartbeatVerdict {
    pub fn clean(&self) -> bool {
        self.doubled == 0 && self.missed == 0 && self.unexpected == 0
    }
}

/// `lives` against `reported`: the missed-heartbeat results' (monitor,
/// deadline ms). Deadlines within the tolerance of `until_ms` may or may
/// not be reported yet.
pub fn judge(lives: &[HeartbeatLife], reported: &[(i64, i64)], until_ms: i64) -> HeartbeatVerdict {
    let mut by_monitor: HashMap<i64, Vec<i64>> = HashMap::new();
    for (monitor, deadline) in reported {
        by_monitor.entry(*monitor).or_default().push(*deadline);
    }
    let mut v = HeartbeatVerdict::default();
    for life in lives {
        let mut rows = by_monitor.remove(&life.monitor_id).unwrap_or_default();
        rows.sort_unstable();
        let mut used = vec![false; rows.len()];
        for expected in expected_misses(life, until_ms + TOLERANCE_MS) {
            let optional = expected >= until_ms - TOLERANCE_MS;
            let near: Vec<usize> = (0..rows.len())
                .filter(|i| !used[*i] && (rows[*i] - expected).abs() <= TOLERANCE_MS)
                .collect();
            for i in &near {
                used[*i] = true;
            }
            if !optional {
                v.due += 1;
            }
            match near.len() {
                0 if optional => {}
                0 => {
                    v.missed += 1;
                    v.problems.push(HeartbeatProblem {
                        monitor_id: life.monitor_id,
                        deadline_ms: expected,
                        what: "not reported",
                    });
                }
                n => {
                    v.reported += usize::from(!optional);
                    if n > 1 {
                        v.doubled += n - 1;
                        v.problems.push(HeartbeatProblem {
                            monitor_id: life.monitor_id,
                            deadline_ms: expected,
                            what: "reported twice",
                        });
                    }
                }
            }
        }
        for (i, row) in rows.iter().enumerate() {
            if !used[i] && *row < until_ms {
                v.unexpected += 1;
                v.problems.push(HeartbeatProblem {
                    monitor_id: life.monitor_id,
                    deadline_ms: *row,
                    what: "reported but not missed",
                });
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::soak::plan::{self, Plan};
    use uptime_heartbeats::Schedule;

    const T0: i64 = 1_800_000_000_000;

    fn interval(pings: Vec<(i64, Ping)>) -> HeartbeatLife {
        HeartbeatLife {
            monitor_id: 3,
            period: Period::Interval { secs: 30 },
            grace_secs: 10,
            created_ms: T0,
            pings: pings.into_iter().map(|(s, p)| (T0 + s * 1000, p)).collect(),
        }
    }

    fn secs(misses: Vec<i64>) -> Vec<i64> {
        misses.into_iter().map(|m| (m - T0) / 1000).collect()
    }

    #[test]
    fn a_silent_job_misses_one_deadline_per_period_until_it_pings() {
        let life = interval(vec![
            (0, Ping::Success),
            (15, Ping::Success),
            (120, Ping::Success),
        ]);
        // 15 + 40 = 55, then 85, 115; the ping at 120 ends it.
        assert_eq!(
            secs(expected_misses(&life, T0 + 200_000)),
            vec![55, 85, 115, 160, 190]
        );
    }

    #[test]
    fn a_run_started_and_never_finished_fails_at_its_grace() {
        let life = interval(vec![
            (0, Ping::Success),
            (15, Ping::Start),
            (45, Ping::Success),
        ]);
        // The run's grace (25) comes before the period's deadline (40).
        assert_eq!(secs(expected_misses(&life, T0 + 80_000)), vec![25]);
    }

    #[test]
    fn a_finished_run_misses_nothing() {
        let pings = vec![
            (0, Ping::Success),
            (12, Ping::Start),
            (15, Ping::Success),
            (30, Ping::Success),
        ];
        assert!(expected_misses(&interval(pings), T0 + 60_000).is_empty());
    }

    #[test]
    fn a_cron_job_misses_the_run_it_skipped() {
        let life = HeartbeatLife {
            monitor_id: 4,
            period: Period::Cron(Schedule::parse("* * * * *", None).unwrap()),
            grace_secs: 20,
            created_ms: T0 + 1_000,
            pings: vec![(T0 + 65_000, Ping::Success), (T0 + 185_000, Ping::Success)],
        };
        assert_eq!(secs(expected_misses(&life, T0 + 230_000)), vec![140]);
    }

    #[test]
    fn reported_deadlines_are_matched_within_the_tolerance_and_counted() {
        let life = interval(vec![
            (0, Ping::Success),
            (15, Ping::Success),
            (120, Ping::Success),
        ]);
        let until = T0 + 150_000;
        let at = |s: i64| (3, T0 + s * 1000);
        let v = judge(
            std::slice::from_ref(&life),
            &[at(55), (3, T0 + 86_500), at(115)],
            until,
        );
        assert!(v.clean(), "{v:?}");
        assert_eq!((v.due, v.reported), (3, 3));
        let v = judge(
            std::slice::from_ref(&life),
            &[at(55), at(55), at(115), at(100)],
            until,
        );
        assert_eq!((v.doubled, v.missed, v.unexpected), (1, 1, 1), "{v:?}");
    }

    #[test]
    fn the_plans_pings_stay_clear_of_every_deadline() {
        for total in [240, 600] {
            let plan = Plan::new(total);
            let life = HeartbeatLife {
                monitor_id: 1,
                period: Period::Interval {
                    secs: plan::HB_INTERVAL_SECS,
                },
                grace_secs: plan::HB_GRACE_SECS,
                created_ms: T0 - 5_000,
                pings: plan
                    .hb_pings
                    .iter()
                    .map(|(t, p)| (T0 + (*t * 1000.0) as i64, *p))
                    .collect(),
            };
            let misses = expected_misses(&life, T0 + (plan.total * 1000.0) as i64);
            assert!(misses.len() >= 3, "{total}: {misses:?}");
            for miss in &misses {
                for (ping, _) in &life.pings {
                    assert!(
                        (ping - miss).abs() >= 4_000,
                        "{total}: ping at {ping} near {miss}"
                    );
                }
            }
        }
    }
}
