//! The checker's metrics (Prometheus names, served on `/metrics`).

use chrono::TimeDelta;
use std::time::Duration;
use uptime_contracts::CheckOutcome;

pub const CHECKS_TOTAL: &str = "checks_total";
pub const CHECK_DURATION_SECONDS: &str = "check_duration_seconds";
pub const CHECKS_IN_FLIGHT: &str = "checks_in_flight";
pub const CHECK_START_LATENESS_SECONDS: &str = "check_start_lateness_seconds";
pub const CHECKS_SKIPPED_STALE_TOTAL: &str = "checks_skipped_stale_total";

/// Registers the help texts; call once at start.
pub fn describe() {
    metrics::describe_counter!(CHECKS_TOTAL, "Checks run, by outcome (pass, fail)");
    metrics::describe_histogram!(
        CHECK_DURATION_SECONDS,
        metrics::Unit::Seconds,
        "Time to run one check, request to verdict"
    );
    metrics::describe_gauge!(CHECKS_IN_FLIGHT, "Checks running now in this replica");
    metrics::describe_histogram!(
        CHECK_START_LATENESS_SECONDS,
        metrics::Unit::Seconds,
        "How long after its due time a check started (queueing and redelivery delay)"
    );
    metrics::describe_counter!(
        CHECKS_SKIPPED_STALE_TOTAL,
        "Scheduled checks received later than both their interval and checker.stale_grace_secs, and skipped (later slots run instead)"
    );
}

pub fn record_stale_skip() {
    metrics::counter!(CHECKS_SKIPPED_STALE_TOTAL).increment(1);
}

pub fn outcome_label(outcome: CheckOutcome) -> &'static str {
    match outcome {
        CheckOutcome::Pass => "pass",
        CheckOutcome::Fail => "fail",
    }
}

pub fn record_check(outcome: CheckOutcome, took: Duration) {
    metrics::counter!(CHECKS_TOTAL, "outcome" => outcome_label(outcome)).increment(1);
    metrics::histogram!(CHECK_DURATION_SECONDS).record(took.as_secs_f64());
}

/// `late` is now minus the due time; a check started early counts as 0.
pub fn record_lateness(late: TimeDelta) {
    let seconds = late.num_milliseconds().max(0) as f64 / 1000.0;
    metrics::histogram!(CHECK_START_LATENESS_SECONDS).record(seconds);
}

/// Counts a check in `checks_in_flight` for as long as it lives, however the
/// check ends (including its task being aborted).
pub struct InFlight;

impl InFlight {
    pub fn enter() -> Self {
        metrics::gauge!(CHECKS_IN_FLIGHT).increment(1.0);
        InFlight
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        metrics::gauge!(CHECKS_IN_FLIGHT).decrement(1.0);
    }
}
