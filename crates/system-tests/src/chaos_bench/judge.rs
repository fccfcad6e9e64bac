//! What the table saw of a fault: every slot each monitor was due in the
//! fault's window, computed from its schedule (`scheduler::slots`: slot k
//! of monitor m is due at `offset(m) + k × interval`), against the
//! scheduled results stored for those slots.

use crate::percentile;
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use diesel_async::RunQueryDsl;
use scheduler::slots::slot_at_or_after;
use std::collections::HashMap;
use uptime_db::schema::{check_results, monitors};

/// One fault's row of the table.
#[derive(Debug, Default)]
pub struct Verdict {
    /// Slots the monitors were due in the window.
    pub due: usize,
    /// Of those, slots with at least one stored result.
    pub stored: usize,
    /// Slots never stored.
    pub skipped: usize,
    /// When the earliest and latest skipped slots were due, seconds after
    /// the window's start (where in the fault the loss sits).
    pub skipped_from_secs: f64,
    pub skipped_to_secs: f64,
    /// Slots stored more than once (counted once per extra row).
    pub doubled: usize,
    /// Scheduled results in the window due at no slot of their monitor.
    pub off_schedule: usize,
    /// Stored minus due of each stored slot's first row, seconds, ascending.
    pub late_secs: Vec<f64>,
}

impl Verdict {
    pub fn lateness(&self) -> String {
        format!(
            "{:.2} s / {:.2} s / {:.2} s",
            percentile(&self.late_secs, 0.5),
            percentile(&self.late_secs, 0.99),
            self.late_secs.last().copied().unwrap_or(f64::NAN)
        )
    }

    pub fn clean(&self) -> bool {
        self.skipped == 0 && self.doubled == 0 && self.off_schedule == 0
    }
}

/// Every active monitor's slots due in `[from, until)` against the stored
/// scheduled results of that span.
pub async fn judge(
    pool: &uptime_db::Pool,
    from: DateTime<Utc>,
    until: DateTime<Utc>,
) -> anyhow::Result<Verdict> {
    let mut conn = uptime_db::pool::conn(pool).await?;
    let schedule: Vec<(i64, i32)> = monitors::table
        .filter(monitors::active.eq(true))
        .select((monitors::id, monitors::interval_secs))
        .load(&mut *conn)
        .await?;
    // Whole milliseconds, as slots are: a slot due in the window's first
    // millisecond is before `from` by its microseconds.
    let (from_ms, until_ms) = (from.timestamp_millis(), until.timestamp_millis());
    let (from, until) = (millis(from_ms)?, millis(until_ms)?);
    // A scheduled result's slot_at is its due time: filtering on it keeps
    // the query to the partitions of the window.
    let rows: Vec<(i64, Option<DateTime<Utc>>, DateTime<Utc>)> = check_results::table
        .filter(check_results::trigger.eq("scheduled"))
        .filter(check_results::slot_at.ge(from))
        .filter(check_results::slot_at.lt(until))
        .select((
            check_results::monitor_id,
            check_results::due_at,
            check_results::recorded_at,
        ))
        .load(&mut *conn)
        .await?;
    // (monitor, due ms) → recorded ms of each row, earliest first.
    let mut stored: HashMap<(i64, i64), Vec<i64>> = HashMap::new();
    for (monitor, due, recorded) in rows {
        let Some(due) = due else { continue };
        stored
            .entry((monitor, due.timestamp_millis()))
            .or_default()
            .push(recorded.timestamp_millis());
    }
    let mut verdict = Verdict::default();
    let mut expected = 0usize;
    for (monitor, interval_secs) in schedule {
        let interval_ms = i64::from(interval_secs.max(1)) * 1000;
        let mut due = slot_at_or_after(monitor, interval_ms, from_ms);
        while due < until_ms {
            verdict.due += 1;
            match stored.get_mut(&(monitor, due)) {
                Some(recorded) => {
                    expected += 1;
                    recorded.sort_unstable();
                    verdict.stored += 1;
                    verdict.doubled += recorded.len() - 1;
                    verdict.late_secs.push((recorded[0] - due) as f64 / 1000.0);
                }
                None => {
                    let at = (due - from_ms) as f64 / 1000.0;
                    if verdict.skipped == 0 {
                        (verdict.skipped_from_secs, verdict.skipped_to_secs) = (at, at);
                    }
                    verdict.skipped_from_secs = verdict.skipped_from_secs.min(at);
                    verdict.skipped_to_secs = verdict.skipped_to_secs.max(at);
                    verdict.skipped += 1;
                }
            }
            due += interval_ms;
        }
    }
    verdict.off_schedule = stored.len() - expected;
    verdict.late_secs.sort_by(f64::total_cmp);
    Ok(verdict)
}

fn millis(ms: i64) -> anyhow::Result<DateTime<Utc>> {
    DateTime::from_timestamp_millis(ms).ok_or_else(|| anyhow::anyhow!("{ms} ms is out of range"))
}
