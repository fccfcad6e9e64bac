//! `check_results` partitions: one per UTC day of `slot_at` (the time a
//! result's `check_id` fixes; docs/architecture.md, Retention). Each round
//! creates the partitions of yesterday to [`AHEAD_DAYS`] days ahead, so
//! results never wait on one, and drops those wholly older than
//! `results_days`: dropping a partition is the purge, with no row-by-row
//! DELETE and no bloat left behind.
//!
//! Results that no day partition covers land in the default partition, so an
//! accepted result is never refused. A round moves those of a day it keeps
//! into that day's partition (creating it, even for a past day) and deletes
//! those past retention; results more than [`AHEAD_DAYS`] ahead (a wrong
//! clock) wait there until their day comes into range.
//!
//! [`plan`] decides; [`maintain`] reads the layout, asks [`plan`] and runs it.

use crate::{RetentionError, RetentionSettings};
use chrono::{Days, NaiveDate};
use diesel_async::AsyncPgConnection;
use uptime_db::results::partitions as db;

/// Days ahead of today that always have a partition. A week covers any
/// outage of the maintenance short of a week without a single result
/// landing in the default partition.
pub const AHEAD_DAYS: u64 = 7;

/// Rows of the default partition counted at most, for the report.
const DEFAULT_ROWS_CAP: i64 = 1_000_000;

/// What a round must do, for a given day and layout.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    /// Days to create a partition for, oldest first.
    pub create: Vec<NaiveDate>,
    /// Days whose partition is dropped, oldest first.
    pub drop: Vec<NaiveDate>,
    /// The oldest day kept: results from before its start are past
    /// retention. `None` when results are kept forever (`results_days` 0).
    pub keep_from: Option<NaiveDate>,
}

/// The oldest day whose results are kept on `today`: `results_days` whole
/// days before it, so every result is kept at least `results_days` days.
/// `None` for 0 ("never dropped", like every retention age: a slip of a zero
/// must not empty the table).
pub fn keep_from(today: NaiveDate, results_days: u32) -> Option<NaiveDate> {
    if results_days == 0 {
        return None;
    }
    today.checked_sub_days(Days::new(u64::from(results_days)))
}

/// Which partitions to create and drop on `today`, given the days that have
/// a partition (`existing`) and the days of the results waiting in the
/// default partition (`in_default`).
pub fn plan(
    today: NaiveDate,
    results_days: u32,
    existing: &[NaiveDate],
    in_default: &[NaiveDate],
) -> Plan {
    let keep_from = keep_from(today, results_days);
    let kept = |day: &NaiveDate| keep_from.is_none_or(|first| *day >= first);
    let last = today
        .checked_add_days(Days::new(AHEAD_DAYS))
        .unwrap_or(NaiveDate::MAX);
    // Yesterday too: a result of a slot just before midnight is often
    // recorded after it.
    let first = today.pred_opt().unwrap_or(today);
    let mut create: Vec<NaiveDate> = std::iter::successors(Some(first), |d| d.succ_opt())
        .take_while(|d| *d <= last)
        .chain(in_default.iter().copied().filter(|d| *d <= last))
        .filter(kept)
        .filter(|d| !existing.contains(d))
        .collect();
    create.sort_unstable();
    create.dedup();
    let mut drop: Vec<NaiveDate> = existing.iter().copied().filter(|d| !kept(d)).collect();
    drop.sort_unstable();
    drop.dedup();
    Plan {
        create,
        drop,
        keep_from,
    }
}

/// What a round did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PartitionReport {
    /// Partitions created, by day.
    pub created: Vec<NaiveDate>,
    /// Partitions dropped (with all their results), by day.
    pub dropped: Vec<NaiveDate>,
    /// Results moved from the default partition into a day's partition.
    pub moved_from_default: u64,
    /// Results past retention deleted from the default partition.
    pub expired_from_default: u64,
    /// Results left in the default partition (counted up to a million):
    /// results more than [`AHEAD_DAYS`] ahead. Should stay 0.
    pub left_in_default: u64,
}

/// One round for `today` (UTC): creates the partitions [`plan`] asks for,
/// moving results out of the default partition, deletes the default
/// partition's results past retention and drops expired partitions. Each
/// step is its own short transaction; a step that fails (a lock it could not
/// get within a second, say) ends the round with the error, and the next
/// round picks up where it stopped.
pub async fn maintain(
    conn: &mut AsyncPgConnection,
    settings: &RetentionSettings,
    today: NaiveDate,
) -> Result<PartitionReport, RetentionError> {
    let layout = db::layout(conn).await?;
    let in_default = if layout.has_default {
        db::days_in_default(conn).await?
    } else {
        Vec::new()
    };
    let plan = plan(today, settings.results_days, &layout.days, &in_default);
    let mut report = PartitionReport::default();

    if let (Some(first), true) = (plan.keep_from, layout.has_default) {
        if in_default.iter().any(|d| *d < first) {
            report.expired_from_default =
                db::expire_from_default(conn, db::start_of(first)).await?;
            tracing::warn!(
                rows = report.expired_from_default,
                before = %first,
                "deleted results past retention from the default partition"
            );
        }
    }
    for day in plan.create {
        let moved = db::create_partition(conn, day, layout.has_default).await?;
        tracing::info!(%day, moved_from_default = moved, "created check_results partition");
        report.moved_from_default += moved;
        report.created.push(day);
    }
    for day in plan.drop {
        if db::drop_partition(conn, day).await? {
            tracing::info!(%day, "dropped check_results partition");
            report.dropped.push(day);
        }
    }
    if layout.has_default {
        let left = db::rows_in_default(conn, DEFAULT_ROWS_CAP).await?;
        report.left_in_default = u64::try_from(left).unwrap_or(0);
        if left > 0 {
            tracing::warn!(
                rows = left,
                "results wait in the default partition (more than {AHEAD_DAYS} days ahead)"
            );
        }
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn days(from: &str, to: &str) -> Vec<NaiveDate> {
        d(from).iter_days().take_while(|x| *x <= d(to)).collect()
    }

    #[test]
    fn an_empty_layout_gets_yesterday_to_a_week_ahead() {
        let plan = plan(d("2026-11-22"), 90, &[], &[]);
        assert_eq!(plan.create, days("2026-11-21", "2026-11-29"));
        assert!(plan.drop.is_empty());
        assert_eq!(plan.keep_from, Some(d("2026-08-24")));
    }

    #[test]
    fn existing_partitions_are_not_created_again() {
        let existing = days("2026-11-15", "2026-11-28");
        let plan = plan(d("2026-11-22"), 90, &existing, &[]);
        assert_eq!(plan.create, [d("2026-11-29")]);
        assert!(plan.drop.is_empty());
    }

    #[test]
    fn partitions_wholly_older_than_retention_are_dropped() {
        // 90 days kept on 2026-11-22: 2026-08-24 onwards. 2026-08-23's
        // results are at least 90 days old at the start of today.
        let existing = days("2026-08-20", "2026-11-29");
        let plan = plan(d("2026-11-22"), 90, &existing, &[]);
        assert_eq!(plan.drop, days("2026-08-20", "2026-08-23"));
        assert!(plan.create.is_empty());
        // A day later, one more goes.
        let plan = super::plan(d("2026-11-23"), 90, &existing, &[]);
        assert_eq!(plan.drop, days("2026-08-20", "2026-08-24"));
        assert_eq!(plan.create, [d("2026-11-30")]);
    }

    #[test]
    fn zero_days_keeps_everything() {
        let existing = days("2020-01-01", "2020-01-03");
        let plan = plan(d("2026-11-22"), 0, &existing, &[d("2019-05-05")]);
        assert!(plan.drop.is_empty());
        assert_eq!(plan.keep_from, None);
        assert_eq!(plan.create[0], d("2019-05-05"), "{plan:?}");
    }

    #[test]
    fn results_waiting_in_the_default_partition_get_their_day_when_it_is_kept() {
        let existing = days("2026-11-21", "2026-11-29");
        let in_default = [
            d("2026-08-01"), // past retention: deleted, not given a partition
            d("2026-10-02"), // a gap in the past, within retention
            d("2026-11-25"), // has a partition already (arrived before it)
            d("2026-12-24"), // too far ahead: waits
        ];
        let plan = plan(d("2026-11-22"), 90, &existing, &in_default);
        assert_eq!(plan.create, [d("2026-10-02")]);
        // And once 2026-12-24 is a week ahead, it gets its partition.
        let plan = super::plan(d("2026-12-17"), 90, &existing, &in_default);
        assert!(plan.create.contains(&d("2026-12-24")), "{plan:?}");
    }

    #[test]
    fn a_retention_shorter_than_a_day_back_never_creates_what_it_drops() {
        let plan = plan(d("2026-11-22"), 1, &days("2026-11-20", "2026-11-21"), &[]);
        assert_eq!(plan.drop, [d("2026-11-20")]);
        assert_eq!(plan.create, days("2026-11-22", "2026-11-29"));
    }

    #[test]
    fn the_ends_of_the_calendar_do_not_panic() {
        let plan = plan(NaiveDate::MAX, u32::MAX, &[NaiveDate::MIN], &[]);
        assert_eq!(
            plan.create,
            [NaiveDate::MAX.pred_opt().unwrap(), NaiveDate::MAX]
        );
        let plan = super::plan(NaiveDate::MIN, 90, &[], &[]);
        assert_eq!(plan.keep_from, None);
        assert_eq!(plan.create.first(), Some(&NaiveDate::MIN));
    }
}
