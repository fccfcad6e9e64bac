//! The soak's timeline, pure: when each target fails and recovers, when
//! windows open, when the driver pauses, creates, deletes, applies and
//! pings, as seconds from the workload's start. Everything the verdicts
//! expect follows from it, so it is fixed in advance and tested here: every
//! phase is long enough for its monitor to notice it (interval ×
//! confirmations), the last minute is quiet (the pipeline drains before the
//! verdicts), and no heartbeat ping lands near a deadline it would race.
//!
//! The reference timeline is for 600 s; a shorter run (development) scales
//! the start times, keeps each phase long enough to be seen, and leaves out
//! what no longer fits (`None`), which the coverage verdict then does not
//! ask for.

/// Seconds the workload ends before the run's end: nothing changes then,
/// so every state change has been alerted by the time the verdicts look.
pub const QUIET_SECS: f64 = 45.0;
/// The reference length the timeline is written for.
pub const REFERENCE_SECS: f64 = 600.0;
/// How often the interval heartbeat's job pings, and its period and grace.
pub const HB_PING_EVERY_SECS: f64 = 15.0;
pub const HB_INTERVAL_SECS: u32 = 30;
pub const HB_GRACE_SECS: u32 = 10;
/// The cron heartbeat: every minute, pinged 5 s past it, 20 s of grace.
pub const HB_CRON: &str = "* * * * *";
pub const HB_CRON_GRACE_SECS: u32 = 20;
pub const HB_CRON_PING_AFTER_SECS: f64 = 5.0;
/// The escalation policy's steps' delays (the production floor is 60 s),
/// and when the driver acknowledges after the incident opened: after step
/// one (60 s), well before the policy would start again (120 s).
pub const ESCALATION_DELAY_SECS: i64 = 60;
pub const ACK_AFTER_SECS: f64 = 90.0;
/// Reminders: the production floor, and at most one per incident.
pub const REMINDER_SECS: i64 = 300;
/// Flapping: more than 3 changes within 120 s; stable after 60 s.
pub const FLAP_THRESHOLD: i64 = 3;
pub const FLAP_WINDOW_SECS: i64 = 120;
pub const FLAP_STABLE_SECS: i64 = 60;

/// The intervals `[from, to)` (seconds from the start) a target fails in.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Phases(pub Vec<(f64, f64)>);

impl Phases {
    pub fn failing_at(&self, t: f64) -> bool {
        self.0.iter().any(|(from, to)| (*from..*to).contains(&t))
    }

    pub fn end(&self) -> f64 {
        self.0.iter().map(|(_, to)| *to).fold(0.0, f64::max)
    }
}

/// What a heartbeat job sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ping {
    Success,
    /// `/start`: a run begins.
    Start,
    /// `/fail`: the run failed.
    Fail,
}

/// The whole timeline (seconds from the start).
#[derive(Debug, Clone)]
pub struct Plan {
    pub total: f64,
    /// http with assertions, two outages.
    pub http_flip: Phases,
    /// keyword: the keyword missing from the page.
    pub keyword: Phases,
    /// tcp: the listener closed.
    pub tcp: Phases,
    /// dns: every answer SERVFAIL.
    pub dns: Phases,
    /// http answering slower than its `latency_warn_ms`: degraded.
    pub slow: Phases,
    /// A silence window (label selector) opens at `.0` for `.1` minutes;
    /// its monitor fails inside it and stays down past its end.
    pub silence_window: (f64, u32),
    pub silenced: Phases,
    /// A pause window by id, `[from, to)`.
    pub pause_window: (f64, f64),
    /// A parent and its dependent child (which fails longer).
    pub parent: Phases,
    pub child: Phases,
    /// Down long enough for one reminder; `None` when the run is too short.
    pub reminder: Option<Phases>,
    /// The monitor with an escalation policy.
    pub escalated: Phases,
    /// Short outages in a row, then a long one: flapping, then released.
    pub flapping: Phases,
    /// The driver pauses a monitor and resumes it.
    pub paused: (f64, f64),
    /// A monitor created, then deleted.
    pub late_monitor: (f64, f64),
    pub bulk_at: f64,
    pub bulk_delete_at: f64,
    pub apply_at: f64,
    pub dry_run_at: f64,
    pub reapply_at: f64,
    pub test_alert_at: f64,
    /// The interval heartbeat's job, in time order.
    pub hb_pings: Vec<(f64, Ping)>,
}

impl Plan {
    pub fn new(total_secs: u64) -> Plan {
        let total = total_secs as f64;
        let scale = (total / REFERENCE_SECS).min(1.0);
        let at = |reference: f64| reference * scale;
        // A phase starting at the reference time, as long as the reference
        // scaled but never shorter than `min`.
        let phase = |start: f64, width: f64, min: f64| {
            let from = at(start);
            (from, from + (width * scale).max(min))
        };
        let last = total - QUIET_SECS;
        let fits = |phases: &Phases| phases.end() <= last;
        let silence_minutes = ((3.0 * scale).round() as u32).max(1);
        let silence_open = at(240.0);
        let silence_end = silence_open + f64::from(silence_minutes) * 60.0;
        let flap_start = at(150.0);
        let flap = |a: f64, b: f64| (flap_start + a, flap_start + b);
        let parent = Phases(vec![phase(330.0, 70.0, 30.0)]);
        let child_from = parent.0[0].0;
        let child = Phases(vec![(child_from, parent.end() + 40.0)]);
        let reminder = Phases(vec![phase(60.0, 360.0, 340.0)]);
        let pause_from = at(300.0);
        let mut plan = Plan {
            total,
            http_flip: Phases(vec![phase(120.0, 80.0, 35.0), phase(430.0, 40.0, 35.0)]),
            keyword: Phases(vec![phase(150.0, 80.0, 25.0)]),
            tcp: Phases(vec![phase(260.0, 70.0, 25.0)]),
            dns: Phases(vec![phase(300.0, 60.0, 25.0)]),
            slow: Phases(vec![phase(200.0, 60.0, 25.0)]),
            silence_window: (silence_open, silence_minutes),
            silenced: Phases(vec![(silence_open + 30.0, silence_end + 45.0)]),
            pause_window: (pause_from, pause_from + (60.0 * scale).max(60.0)),
            parent,
            child,
            reminder: fits(&reminder).then_some(reminder),
            escalated: Phases(vec![phase(90.0, 160.0, 130.0)]),
            flapping: Phases(vec![
                flap(0.0, 15.0),
                flap(30.0, 45.0),
                flap(60.0, 75.0),
                flap(90.0, 180.0),
            ]),
            paused: (at(200.0), at(200.0) + (60.0 * scale).max(40.0)),
            late_monitor: (at(100.0), at(400.0)),
            bulk_at: at(30.0),
            bulk_delete_at: at(450.0),
            apply_at: at(60.0),
            dry_run_at: at(150.0),
            reapply_at: at(300.0),
            test_alert_at: at(50.0),
            hb_pings: Vec::new(),
        };
        plan.hb_pings = interval_heartbeat_pings(&plan, scale);
        // What a short run cannot fit is left out whole: nothing may change
        // in the quiet end, and half a scenario proves nothing.
        for phases in [
            &mut plan.http_flip,
            &mut plan.keyword,
            &mut plan.tcp,
            &mut plan.dns,
            &mut plan.slow,
            &mut plan.silenced,
            &mut plan.parent,
            &mut plan.child,
            &mut plan.escalated,
        ] {
            phases.0.retain(|(_, to)| *to <= last);
        }
        // The dependency needs both: the child fails past its parent.
        if plan.child.0.is_empty() || plan.parent.0.is_empty() {
            plan.child = Phases::default();
            plan.parent = Phases::default();
        }
        if !fits(&plan.flapping) {
            plan.flapping = Phases::default();
        }
        plan
    }

    /// Whether the flapping scenario runs (it needs its whole sequence).
    pub fn flaps(&self) -> bool {
        !self.flapping.0.is_empty()
    }

    /// The last moment anything changes.
    pub fn last_change(&self) -> f64 {
        self.total - QUIET_SECS
    }
}

/// The interval heartbeat's job: a ping every 15 s (every fourth run
/// announced by `/start` 3 s before), silent for 90 s from about 200 s
/// (missed deadlines), a run started at about 400 s that never finishes
/// (its grace passes), a failure at about 480 s. Each event sits on the
/// 15 s grid, so every deadline (a ping + 40 s, then every 30 s) stays at
/// least 5 s from every ping.
fn interval_heartbeat_pings(plan: &Plan, scale: f64) -> Vec<(f64, Ping)> {
    let grid = |t: f64| (t / HB_PING_EVERY_SECS).ceil() * HB_PING_EVERY_SECS;
    let silent_from = grid(200.0 * scale);
    let silent_to = silent_from + 90.0;
    let unfinished = grid((400.0 * scale).max(silent_to + 30.0));
    let failed = grid((480.0 * scale).max(unfinished + 45.0));
    let last = plan.last_change();
    let mut pings = Vec::new();
    let mut n = 0u32;
    let mut t = 0.0;
    while t <= last {
        n += 1;
        let now = t;
        t += HB_PING_EVERY_SECS;
        if (silent_from..silent_to).contains(&now) {
            continue;
        }
        if now == unfinished {
            pings.push((now, Ping::Start));
            continue;
        }
        if now == unfinished + HB_PING_EVERY_SECS {
            // The run started above is still running: no ping.
            continue;
        }
        if now == failed {
            pings.push((now, Ping::Fail));
            continue;
        }
        if n.is_multiple_of(4) && now >= 3.0 {
            pings.push((now - 3.0, Ping::Start));
        }
        pings.push((now, Ping::Success));
    }
    pings
}

/// The cron heartbeat's pings, as seconds from the start (`start_unix`, the
/// workload's start in Unix seconds): 5 s after every minute, but none for
/// the minute nearest 300 s in (a missed run).
pub fn cron_pings(plan: &Plan, start_unix: f64) -> Vec<f64> {
    let skip_near = 300.0 * (plan.total / REFERENCE_SECS).min(1.0);
    let mut minute = (start_unix / 60.0).ceil() * 60.0;
    let mut pings = Vec::new();
    let mut skipped = false;
    loop {
        let t = minute + HB_CRON_PING_AFTER_SECS - start_unix;
        if t > plan.last_change() {
            return pings;
        }
        if !skipped && t >= skip_near {
            skipped = true;
        } else {
            pings.push(t);
        }
        minute += 60.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_phases(plan: &Plan) -> Vec<(&'static str, &Phases)> {
        let mut all = vec![
            ("http_flip", &plan.http_flip),
            ("keyword", &plan.keyword),
            ("tcp", &plan.tcp),
            ("dns", &plan.dns),
            ("slow", &plan.slow),
            ("silenced", &plan.silenced),
            ("parent", &plan.parent),
            ("child", &plan.child),
            ("escalated", &plan.escalated),
            ("flapping", &plan.flapping),
        ];
        if let Some(reminder) = &plan.reminder {
            all.push(("reminder", reminder));
        }
        all
    }

    #[test]
    fn the_full_run_has_every_scenario_and_a_quiet_end() {
        let plan = Plan::new(600);
        assert!(plan.reminder.is_some());
        for (name, phases) in all_phases(&plan) {
            assert!(phases.end() <= plan.last_change(), "{name}: {phases:?}");
        }
        assert_eq!(plan.silence_window.1, 3);
    }

    #[test]
    fn every_phase_outlasts_what_its_monitor_needs_to_see_it() {
        for total in [180, 300, 600, 900] {
            let plan = Plan::new(total);
            for (name, phases) in all_phases(&plan) {
                for (from, to) in &phases.0 {
                    // 10 s intervals; two confirmations at most.
                    assert!(to - from >= 15.0, "{total}: {name} {from}..{to}");
                }
            }
            // The child fails past its parent's recovery: its held alert is released.
            assert_eq!(plan.child.0.is_empty(), plan.parent.0.is_empty());
            if !plan.child.0.is_empty() {
                assert!(plan.child.end() >= plan.parent.end() + 30.0);
            }
            // Ack after step one, before the policy would start again,
            // and while the incident is open.
            for (down, up) in &plan.escalated.0 {
                assert!(up - down > ACK_AFTER_SECS + 20.0, "{total}");
            }
        }
    }

    #[test]
    fn a_short_run_leaves_out_the_reminder_it_cannot_wait_for() {
        assert!(Plan::new(300).reminder.is_none());
    }

    #[test]
    fn the_silence_outlasts_the_window_and_starts_inside_it() {
        let plan = Plan::new(600);
        let (open, minutes) = plan.silence_window;
        let (from, to) = plan.silenced.0[0];
        assert!(from > open + 20.0 && to > open + f64::from(minutes) * 60.0 + 30.0);
    }

    #[test]
    fn the_interval_job_pauses_starts_an_unfinished_run_and_fails_once() {
        let plan = Plan::new(600);
        let fails = plan
            .hb_pings
            .iter()
            .filter(|(_, p)| *p == Ping::Fail)
            .count();
        assert_eq!(fails, 1);
        // Between the pings that end a run: the silence, and the run left unfinished.
        let ends: Vec<f64> = plan
            .hb_pings
            .iter()
            .filter(|(_, p)| *p != Ping::Start)
            .map(|(t, _)| *t)
            .collect();
        let gaps: Vec<f64> = ends
            .windows(2)
            .map(|w| w[1] - w[0])
            .filter(|gap| *gap > HB_PING_EVERY_SECS)
            .collect();
        assert_eq!(
            gaps,
            vec![105.0, 45.0],
            "the silence, and the unfinished run"
        );
        assert!(plan.hb_pings.windows(2).all(|w| w[0].0 < w[1].0));
    }

    #[test]
    fn the_cron_job_skips_one_minute() {
        let plan = Plan::new(600);
        let pings = cron_pings(&plan, 1_000_000_030.0);
        let gaps: Vec<f64> = pings.windows(2).map(|w| w[1] - w[0]).collect();
        assert_eq!(gaps.iter().filter(|g| **g == 120.0).count(), 1, "{pings:?}");
        assert!(gaps.iter().all(|g| *g == 60.0 || *g == 120.0));
    }
}
