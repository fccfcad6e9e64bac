//! Heartbeat deadlines that came due, re-read from their rows: a ping since
//! moved the deadline, otherwise the period is a failed check.

use super::messages;
use crate::queue::{Due, DueQueue, Kind};
use crate::timing::Timing;
use std::collections::HashMap;
use uptime_contracts::CheckResult;
use uptime_db::schedule::MonitorTiming;

/// What the planner must do after [`reread`].
#[derive(Debug, Default)]
pub(super) struct Reread {
    /// Failed results to publish, one per period that ended without a ping.
    pub missed: Vec<CheckResult>,
    /// Monitors that are no longer heartbeat monitors: re-read them whole.
    pub changed: Vec<i64>,
    /// Monitors left the timeline (deleted or paused).
    pub removed: bool,
}

/// Puts each deadline in `dues` back on `queue` (moved by a ping, or on to
/// the next period's after a miss), given the rows read for them. A deadline
/// the row now puts earlier (a start ping the scheduler had not heard of) is
/// reported now, at the deadline it held.
pub(super) fn reread(queue: &mut DueQueue, dues: Vec<Due>, rows: &[MonitorTiming]) -> Reread {
    let rows: HashMap<i64, Timing> = rows.iter().map(|r| (r.id, Timing::from_row(r))).collect();
    let mut out = Reread::default();
    for due in dues {
        let Some(timing) = rows.get(&due.monitor_id) else {
            out.removed |= queue.remove(due.monitor_id);
            continue;
        };
        if timing.kind != Kind::Heartbeat {
            out.changed.push(due.monitor_id);
            continue;
        }
        let deadline = timing.heartbeat_deadline();
        if deadline > due.due_at_ms {
            queue.requeue(Due {
                due_at_ms: deadline,
                ..due
            });
            continue;
        }
        out.missed.push(messages::missed_heartbeat(&due, timing));
        let next = timing.heartbeat_deadline_after(due.due_at_ms);
        let unchanged = queue
            .entry(due.monitor_id)
            .is_some_and(|e| e.interval_secs == timing.interval_secs());
        if unchanged {
            queue.requeue(Due {
                due_at_ms: next,
                ..due
            });
        } else {
            queue.schedule(
                due.monitor_id,
                Kind::Heartbeat,
                timing.interval_secs(),
                next,
            );
        }
    }
    out
}
