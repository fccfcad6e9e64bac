//! Retention settings, the `retention` section of a service's configuration
//! (`UPTIME_RETENTION__RESULTS_DAYS`, ...). The recorder runs retention.
//!
//! For the pruning ages (`rollups_days`, `deliveries_days`, `outbox_hours`,
//! `verification_token_hours`, `revoked_api_keys_days`, `open_rounds_hours`,
//! `audit_log_days`, `invitations_days`, `incidents_days`,
//! `idempotency_hours`, `maintenance_spans_days`, `maintenance_windows_days`,
//! `pending_subscription_hours`, `status_page_mails_days`)
//! zero means "never
//! pruned": a slip of a zero must not empty a table.

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use serde::Deserialize;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize)]
#[serde(default)]
pub struct RetentionSettings {
    /// Raw check results older than this many days are dropped (whole
    /// partitions at a time).
    pub results_days: u32,
    /// Daily uptime rollups are kept this many days (about five years).
    pub rollups_days: u32,
    /// Delivered and failed alert deliveries, and their attempts, are kept
    /// this many days.
    pub deliveries_days: u32,
    /// Published outbox rows are kept this many hours.
    pub outbox_hours: u32,
    /// An email verification link works this many hours after it was sent;
    /// then its token is cleared. Longer than the notifier's
    /// `give_up_after_secs`, so a link that took its retries to arrive still works.
    pub verification_token_hours: u32,
    /// Revoked API keys are kept this many days after their revocation.
    pub revoked_api_keys_days: u32,
    /// A round of several regions still undecided this many hours after it
    /// was created is removed (decided rounds go with the results, after
    /// `results_days`).
    pub open_rounds_hours: u32,
    /// Audit log entries are kept this many days (a year by default).
    pub audit_log_days: u32,
    /// Invitations are kept this many days after they ended (accepted,
    /// revoked or expired), so a late click still finds out what became of
    /// its invitation for a while.
    pub invitations_days: u32,
    /// Resolved incidents are kept this many days after they were resolved
    /// (open ones always).
    pub incidents_days: u32,
    /// `Idempotency-Key` responses are replayed, and kept, this many hours
    /// (the gateway treats older ones as gone even before they are pruned).
    pub idempotency_hours: u32,
    /// Closed maintenance spans (the occurrences a window held, which the
    /// daily uptime's `maintenance_secs` is computed from) are kept this
    /// many days after they closed: at least the 365 days the daily uptime
    /// shows.
    pub maintenance_spans_days: u32,
    /// Maintenance windows that can never open again (a one-off past its
    /// end, a rule past its COUNT/UNTIL) are deleted this many days after.
    pub maintenance_windows_days: u32,
    /// A status page subscription still unconfirmed this many hours after
    /// it was made is deleted (its confirmation link stops working).
    pub pending_subscription_hours: u32,
    /// Sent and failed mails to status page subscribers are kept this many
    /// days after they were written.
    pub status_page_mails_days: u32,
    /// Seconds between retention rounds (each replica tries; the one holding
    /// the lease runs the round). A round also runs at start.
    pub interval_secs: u64,
    /// Most rows one pruning statement removes.
    pub batch_size: u32,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            results_days: 90,
            rollups_days: 5 * 366,
            deliveries_days: 30,
            outbox_hours: 24,
            verification_token_hours: 7 * 24,
            revoked_api_keys_days: 30,
            open_rounds_hours: 24,
            audit_log_days: 365,
            invitations_days: 30,
            incidents_days: 365,
            idempotency_hours: 24,
            maintenance_spans_days: 400,
            maintenance_windows_days: 30,
            pending_subscription_hours: 48,
            status_page_mails_days: 30,
            interval_secs: 300,
            batch_size: 1000,
        }
    }
}

impl RetentionSettings {
    pub fn interval(&self) -> Duration {
        Duration::from_secs(self.interval_secs.max(1))
    }

    pub fn batch_limit(&self) -> i64 {
        i64::from(self.batch_size.max(1))
    }
}

/// `now` minus `age`, or `None` when `age` is zero (never pruned) or reaches
/// past the start of time (nothing is that old).
pub(crate) fn cutoff(now: DateTime<Utc>, age: Option<TimeDelta>) -> Option<DateTime<Utc>> {
    age.filter(|a| !a.is_zero())
        .and_then(|a| now.checked_sub_signed(a))
}

pub(crate) fn days(n: u32) -> Option<TimeDelta> {
    TimeDelta::try_days(i64::from(n))
}

pub(crate) fn hours(n: u32) -> Option<TimeDelta> {
    TimeDelta::try_hours(i64::from(n))
}

/// The first day kept when `keep_days` days are kept up to `now`'s day (UTC,
/// the rollups' day), or `None` when `keep_days` is zero or out of range.
pub(crate) fn first_day_kept(now: DateTime<Utc>, keep_days: u32) -> Option<NaiveDate> {
    if keep_days == 0 {
        return None;
    }
    now.date_naive()
        .checked_sub_days(chrono::Days::new(u64::from(keep_days)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn zero_means_never() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
        assert_eq!(cutoff(now, days(0)), None);
        assert_eq!(first_day_kept(now, 0), None);
    }

    #[test]
    fn cutoffs_count_back_from_now() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 12, 0, 0).unwrap();
        assert_eq!(
            cutoff(now, days(30)),
            Some(Utc.with_ymd_and_hms(2026, 10, 23, 12, 0, 0).unwrap())
        );
        assert_eq!(
            cutoff(now, hours(24)),
            Some(Utc.with_ymd_and_hms(2026, 11, 21, 12, 0, 0).unwrap())
        );
        assert_eq!(
            first_day_kept(now, 2),
            NaiveDate::from_ymd_opt(2026, 11, 20)
        );
        // Far past the start of time: nothing to prune, no panic.
        assert_eq!(cutoff(now, days(u32::MAX)), None);
        assert_eq!(first_day_kept(now, u32::MAX), None);
    }
}
