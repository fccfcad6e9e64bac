//! "State changes alerted once": the alerting monitors' target is failing
//! for each fault's window and healthy after it, so every one of them goes
//! down once and up once per fault. Counted at the webhook receiver by
//! distinct `webhook-id` (a redelivery keeps its id: a receiver dedupes it).

use std::collections::{HashMap, HashSet};
use uptime_testkit::receiver::ReceivedRequest;

#[derive(Debug, Default)]
pub struct AlertTally {
    pub monitors: usize,
    /// Monitors with exactly one `monitor.down` / `monitor.up` alert.
    pub down_once: usize,
    pub up_once: usize,
    /// Alerts beyond the first of one monitor and event (distinct ids).
    pub repeated: usize,
}

impl AlertTally {
    pub fn cell(&self) -> String {
        if self.monitors == 0 {
            return "not measured".into();
        }
        format!(
            "down {} / up {} of {}, repeated {}",
            self.down_once, self.up_once, self.monitors, self.repeated
        )
    }
}

/// Tallies `requests` (the receiver's, since the fault began).
pub fn tally(requests: &[ReceivedRequest], monitors: usize) -> AlertTally {
    let mut ids: HashMap<(i64, String), HashSet<String>> = HashMap::new();
    for r in requests {
        let body = r.json();
        let (Some(event), Some(monitor)) = (body["event"].as_str(), body["monitor"]["id"].as_i64())
        else {
            continue;
        };
        let id = r.header("webhook-id").unwrap_or_default().to_string();
        ids.entry((monitor, event.to_string()))
            .or_default()
            .insert(id);
    }
    let once = |event: &str| {
        ids.iter()
            .filter(|((_, e), set)| e == event && set.len() == 1)
            .count()
    };
    AlertTally {
        monitors,
        down_once: once("monitor.down"),
        up_once: once("monitor.up"),
        repeated: ids.values().map(|set| set.len() - 1).sum(),
    }
}
