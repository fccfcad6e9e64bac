//! A monitor's status, moved one check result at a time. Pure: no I/O, no clock.
//!
//! - `pending` until the first result that settles it.
//! - A passing check resets `consecutive_failures` and makes the monitor `up`,
//!   or `degraded` when it took longer than `latency_warn_ms`.
//! - A failing check counts one more consecutive failure; the monitor turns
//!   `down` only once `confirmation_count` failures are in a row. Until then it
//!   keeps its status (a pending monitor stays pending).
//! - A result older than the last one applied changes nothing (results of one
//!   monitor can arrive out of order from different checkers).
//! - A paused monitor keeps its status: its results are stored, not judged.

use chrono::{DateTime, Utc};
use uptime_contracts::{CheckOutcome, MonitorStatus};

/// The status a single result is stored with.
pub fn result_status(
    outcome: CheckOutcome,
    latency_ms: Option<u32>,
    latency_warn_ms: Option<u32>,
) -> MonitorStatus {
    match outcome {
        CheckOutcome::Fail => MonitorStatus::Down,
        CheckOutcome::Pass => match (latency_ms, latency_warn_ms) {
            (Some(latency), Some(warn)) if latency > warn => MonitorStatus::Degraded,
            _ => MonitorStatus::Up,
        },
    }
}

/// How a monitor judges its results (from its definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    pub confirmation_count: u32,
    pub latency_warn_ms: Option<u32>,
    pub active: bool,
}

/// A monitor's runtime state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MonitorState {
    pub status: MonitorStatus,
    pub status_since: Option<DateTime<Utc>>,
    pub consecutive_failures: u32,
    pub last_checked_at: Option<DateTime<Utc>>,
}

/// One check result, as far as the state machine cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    pub checked_at: DateTime<Utc>,
    pub outcome: CheckOutcome,
    pub latency_ms: Option<u32>,
}

/// A change of status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transition {
    pub from: MonitorStatus,
    pub to: MonitorStatus,
    /// When the monitor had entered `from` (`None` if it never had a status).
    pub previous_since: Option<DateTime<Utc>>,
    /// When it entered `to`: the `checked_at` of the deciding result.
    pub at: DateTime<Utc>,
}

/// What applying one result did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// Older than the last applied result: nothing changed.
    Stale,
    /// The monitor is paused: only `last_checked_at` moved.
    Paused,
    /// The result counted; `Some` when the status changed.
    Counted(Option<Transition>),
}

impl MonitorState {
    pub fn is_stale(&self, checked_at: DateTime<Utc>) -> bool {
        self.last_checked_at.is_some_and(|last| checked_at < last)
    }

    /// Applies one result.
    pub fn apply(&mut self, rules: Rules, obs: Observation) -> Applied {
        if self.is_stale(obs.checked_at) {
            return Applied::Stale;
        }
        self.last_checked_at = Some(obs.checked_at);
        if !rules.active {
            return Applied::Paused;
        }
        let next = match obs.outcome {
            CheckOutcome::Pass => {
                self.consecutive_failures = 0;
                result_status(obs.outcome, obs.latency_ms, rules.latency_warn_ms)
            }
            CheckOutcome::Fail => {
                self.consecutive_failures = self.consecutive_failures.saturating_add(1);
                if self.consecutive_failures >= rules.confirmation_count.max(1) {
                    MonitorStatus::Down
                } else {
                    self.status
                }
            }
        };
        if next == self.status {
            return Applied::Counted(None);
        }
        let transition = Transition {
            from: self.status,
            to: next,
            previous_since: self.status_since,
            at: obs.checked_at,
        };
        self.status = next;
        self.status_since = Some(obs.checked_at);
        Applied::Counted(Some(transition))
    }
}

/// Whether a certificate expiring at `expires_at` deserves a warning now: it
/// is inside the `warn_days` window and no warning went out for this very
/// certificate (`warned_for`). `warn_days` 0 turns warnings off.
pub fn ssl_warning_due(
    expires_at: DateTime<Utc>,
    warned_for: Option<DateTime<Utc>>,
    warn_days: u32,
    now: DateTime<Utc>,
) -> bool {
    warn_days > 0
        && expires_at - now < chrono::Duration::days(i64::from(warn_days))
        && warned_for != Some(expires_at)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use chrono::TimeZone;
    use MonitorStatus::*;

    /// `secs` seconds after the tests' epoch (the recorder's decisions' tests share it).
    pub(crate) fn t(secs: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + secs, 0).unwrap()
    }

    fn rules(confirmation_count: u32) -> Rules {
        Rules {
            confirmation_count,
            latency_warn_ms: Some(500),
            active: true,
        }
    }

    fn pending() -> MonitorState {
        MonitorState {
            status: Pending,
            status_since: None,
            consecutive_failures: 0,
            last_checked_at: None,
        }
    }

    fn pass(at: i64, latency: u32) -> Observation {
        Observation {
            checked_at: t(at),
            outcome: CheckOutcome::Pass,
            latency_ms: Some(latency),
        }
    }

    fn fail(at: i64) -> Observation {
        Observation {
            checked_at: t(at),
            outcome: CheckOutcome::Fail,
            latency_ms: None,
        }
    }

    fn transition_to(applied: Applied) -> Option<MonitorStatus> {
        match applied {
            Applied::Counted(Some(tr)) => Some(tr.to),
            _ => None,
        }
    }

    #[test]
    fn stored_status_of_a_result() {
        assert_eq!(result_status(CheckOutcome::Fail, Some(10), Some(5)), Down);
        assert_eq!(
            result_status(CheckOutcome::Pass, Some(10), Some(5)),
            Degraded
        );
        assert_eq!(result_status(CheckOutcome::Pass, Some(5), Some(5)), Up);
        assert_eq!(result_status(CheckOutcome::Pass, Some(10), None), Up);
        assert_eq!(result_status(CheckOutcome::Pass, None, Some(5)), Up);
    }

    #[test]
    fn first_pass_turns_pending_up_with_a_transition() {
        let mut s = pending();
        let applied = s.apply(rules(1), pass(0, 100));
        assert_eq!(
            applied,
            Applied::Counted(Some(Transition {
                from: Pending,
                to: Up,
                previous_since: None,
                at: t(0)
            }))
        );
        assert_eq!(s.status, Up);
        assert_eq!(s.status_since, Some(t(0)));
        assert_eq!(s.last_checked_at, Some(t(0)));
    }

    #[test]
    fn down_only_after_confirmation_count_failures_in_a_row() {
        let mut s = pending();
        s.apply(rules(3), pass(0, 100));
        assert_eq!(s.apply(rules(3), fail(1)), Applied::Counted(None));
        assert_eq!(s.apply(rules(3), fail(2)), Applied::Counted(None));
        assert_eq!((s.status, s.consecutive_failures), (Up, 2));
        let third = s.apply(rules(3), fail(3));
        assert_eq!(transition_to(third), Some(Down));
        if let Applied::Counted(Some(tr)) = third {
            assert_eq!((tr.from, tr.previous_since, tr.at), (Up, Some(t(0)), t(3)));
        }
        assert_eq!(
            (s.status, s.status_since, s.consecutive_failures),
            (Down, Some(t(3)), 3)
        );
        // Further failures keep it down without another transition.
        assert_eq!(s.apply(rules(3), fail(4)), Applied::Counted(None));
        assert_eq!(s.consecutive_failures, 4);
    }

    #[test]
    fn one_pass_ends_a_failure_streak() {
        let mut s = pending();
        s.apply(rules(2), pass(0, 100));
        s.apply(rules(2), fail(1));
        s.apply(rules(2), pass(2, 100));
        assert_eq!(s.consecutive_failures, 0);
        assert_eq!(s.apply(rules(2), fail(3)), Applied::Counted(None));
        assert_eq!(s.status, Up, "the streak restarted after the pass");
    }

    #[test]
    fn a_pending_monitor_stays_pending_until_failures_are_confirmed() {
        let mut s = pending();
        assert_eq!(s.apply(rules(2), fail(0)), Applied::Counted(None));
        assert_eq!(s.status, Pending);
        assert_eq!(transition_to(s.apply(rules(2), fail(1))), Some(Down));
    }

    #[test]
    fn pending_goes_down_at_once_with_confirmation_count_one() {
        let mut s = pending();
        assert_eq!(transition_to(s.apply(rules(1), fail(0))), Some(Down));
    }

    #[test]
    fn recovery_and_degradation_are_transitions() {
        let mut s = pending();
        s.apply(rules(1), fail(0));
        assert_eq!(transition_to(s.apply(rules(1), pass(1, 100))), Some(Up));
        assert_eq!(
            transition_to(s.apply(rules(1), pass(2, 900))),
            Some(Degraded)
        );
        assert_eq!(s.apply(rules(1), pass(3, 800)), Applied::Counted(None));
        assert_eq!(transition_to(s.apply(rules(1), pass(4, 10))), Some(Up));
        s.apply(rules(1), pass(5, 900));
        assert_eq!(transition_to(s.apply(rules(1), fail(6))), Some(Down));
    }

    #[test]
    fn older_results_change_nothing() {
        let mut s = pending();
        s.apply(rules(1), pass(10, 100));
        let before = s;
        assert_eq!(s.apply(rules(1), fail(5)), Applied::Stale);
        assert_eq!(s, before);
        // The same instant is not older.
        assert_eq!(transition_to(s.apply(rules(1), fail(10))), Some(Down));
    }

    #[test]
    fn paused_monitors_keep_their_status() {
        let mut s = pending();
        s.apply(rules(1), pass(0, 100));
        let paused = Rules {
            active: false,
            ..rules(1)
        };
        assert_eq!(s.apply(paused, fail(1)), Applied::Paused);
        assert_eq!((s.status, s.consecutive_failures), (Up, 0));
        assert_eq!(s.last_checked_at, Some(t(1)));
    }

    #[test]
    fn ssl_warning_once_per_certificate_inside_the_window() {
        let now = t(0);
        let in_10_days = now + chrono::Duration::days(10);
        let in_40_days = now + chrono::Duration::days(40);
        assert!(ssl_warning_due(in_10_days, None, 30, now));
        assert!(!ssl_warning_due(in_10_days, Some(in_10_days), 30, now));
        assert!(
            ssl_warning_due(in_10_days, Some(in_40_days), 30, now),
            "a new certificate"
        );
        assert!(!ssl_warning_due(in_40_days, None, 30, now));
        assert!(
            !ssl_warning_due(in_10_days, None, 0, now),
            "0 turns warnings off"
        );
    }
}
